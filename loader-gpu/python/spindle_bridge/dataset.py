"""SpindleDataset: a SpindleLoader as a torch ``IterableDataset`` (needs torch).

    from torch.utils.data import DataLoader
    loader = SpindleLoader.from_env()
    batches = DataLoader(loader.as_dataset(), batch_size=None)   # the feeder batches
    for epoch in loader.epochs():
        for images, labels in batches: ...

``batch_size=None`` because the feeder batches already; ``num_workers=0`` because the batches are
views of this process's mapping of the feeder's memory and the decoding already runs in the
feeder's threads (worker processes would add copies, not speed). For pinned batches pass
``pin_memory=True`` to the loader (one copy per batch into pinned memory, none beyond the
conversion with ``output=``: ``spindle_bridge.pinned``) rather than to the DataLoader (which
would copy each batch once more).
"""
import torch.utils.data

from .client import SpindleLoader


class SpindleDataset(torch.utils.data.IterableDataset):
    """Iterating it iterates ``loader`` (each ``iter()`` continues the current epoch, or starts
    the next one after an epoch's END when the loader has ``epochs=``). Yields the loader's
    :class:`~spindle_bridge.Batch` objects; ``DataLoader(ds, batch_size=None)`` keeps them
    (``weights``, ``keys``, ``indices`` included). ``len()``, ``set_epoch``, ``state_dict`` and
    ``load_state_dict`` are the loader's. Only in the loader's process (``num_workers=0``); one
    iterating thread."""

    def __init__(self, loader):
        if not isinstance(loader, SpindleLoader):
            raise TypeError("SpindleDataset needs a SpindleLoader, got %s"
                            % type(loader).__name__)
        self.loader = loader

    def __iter__(self):
        if torch.utils.data.get_worker_info() is not None:
            raise RuntimeError(_NO_WORKERS)
        return iter(self.loader)

    def __getstate__(self):
        raise RuntimeError(_NO_WORKERS)  # what a spawned DataLoader worker would need

    def __len__(self):
        return len(self.loader)

    def set_epoch(self, epoch):
        self.loader.set_epoch(epoch)

    def state_dict(self):
        return self.loader.state_dict()

    def load_state_dict(self, state):
        self.loader.load_state_dict(state)


_NO_WORKERS = ("SpindleDataset cannot be read in DataLoader worker processes (num_workers > 0): "
               "its batches are views of the trainer process's mapping of the feeder's memory, "
               "and the feeder decodes in its own threads already; use num_workers=0")
