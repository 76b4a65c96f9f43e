"""Python client of the Spindle trainer bridge: batches from a co-located feeder, zero copy.

    from spindle_bridge import SpindleLoader
    loader = SpindleLoader("/tmp/spindle/bridge.sock", rank=0, world_size=2)
    for batch in loader:               # torch tensors viewing the feeder's shared memory
        images, labels = batch         # valid until the next batch is requested
        # batch.weights: 1.0 for real rows, 0.0 for padding and quarantine stand-ins, whose
        # label is IGNORED_LABEL (-100, cross_entropy's ignore_index)
        # batch.fields / batch["caption"]: a job's extra fields (tensors, lists of str, Ragged)
    state = loader.state_dict()        # save with the checkpoint; SpindleLoader(..., state=state)

A checkpoint of the model, the optimizer and the loader's state together, one atomic file per rank
(``spindle_bridge.checkpoint``): ``checkpoint.save(path, model, optimizer, loader, step=s)`` after
a step, ``checkpoint.load(path, model, optimizer, loader)`` once at the start (None: start fresh).

A whole run in one process (``bin/spindle train`` sets the environment; ``python -m
spindle_bridge.launch`` starts the script): ``loader = SpindleLoader.from_env()`` then ``for
epoch in loader.epochs(): for batch in loader: ...``; ``loader.as_dataset()`` for
``torch.utils.data.DataLoader(ds, batch_size=None)``.

Needs numpy; returns torch tensors when torch is importable (``as_numpy=True`` for arrays).
No pyarrow, no pyspark.

A feeder on a GPU is read with ``device="cuda:N"`` (N as the feeder numbers its GPUs): the batches
are CUDA tensors in the feeder's device memory, opened once by CUDA IPC. That needs the NVIDIA
driver and torch with CUDA (or cupy, which then also opens the handle and yields cupy arrays
that export DLPack); see ``spindle_bridge.cuda``.
"""
from .batch import IGNORED_LABEL
from .client import SpindleLoader, Batch
from .protocol import ProtocolError, VERSION
from .ragged import Ragged
from . import checkpoint

__all__ = ["SpindleLoader", "Batch", "IGNORED_LABEL", "ProtocolError", "Ragged", "VERSION",
           "checkpoint"]
