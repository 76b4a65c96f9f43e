"""What the benchmark trainers share (noop_trainer.py, cnn_trainer.py, gpu_trainer.py): a loop over
a loader's batches that times each ``next()``, the wait for the loader. Imported from beside the
trainer (the script's folder is first on ``sys.path``, as ``spindle_bridge.launch`` and
``python SCRIPT`` put it)."""
import time


def timed(batches, epoch, key):
    """Yields the items of the iterator ``batches`` until it is exhausted (or yields None), adding
    the wall time of every ``next()`` (the last, empty one included) to ``epoch[key]``."""
    while True:
        t = time.perf_counter()
        batch = next(batches, None)
        epoch[key] += time.perf_counter() - t
        if batch is None:
            return
        yield batch
