"""The DataLoader's normalised float32 NCHW batches, made by the client off the training thread.

``SpindleLoader(..., output="float32-nchw", mean=..., std=...)``: the feeder serves uint8
``[N, H, W, C]`` batches; the loader converts each into ``(x / 255 - mean[c]) / std[c]`` as
float32 ``[N, C, H, W]``, what torchvision's ``ToTensor()`` then ``Normalize(mean, std)`` give,
on a thread of its own while the trainer's step runs on the batch before (see
:class:`Prefetcher`), so the step no longer pays for it.
"""
import concurrent.futures
import math
import queue
import threading

import numpy as np

OUTPUTS = ("float32-nchw",)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def check_output(output, mean, std):
    """The validated (output, mean, std): ``(None, None, None)`` for the feeder's own batches;
    for ``"float32-nchw"`` mean and std as float tuples (ImageNet's when both are None)."""
    if output is None:
        if mean is not None or std is not None:
            raise ValueError("mean= and std= need output=\"float32-nchw\" (without it the "
                             "batches are the feeder's, unconverted)")
        return None, None, None
    if output not in OUTPUTS:
        raise ValueError("Invalid output: %r (must be None, the feeder's batches, or one of %s)"
                         % (output, ", ".join(OUTPUTS)))
    if (mean is None) != (std is None):
        raise ValueError("output=%r needs both mean= and std= (or neither: ImageNet's)" % output)
    if mean is None:
        mean, std = IMAGENET_MEAN, IMAGENET_STD
    mean, std = _floats("mean", mean), _floats("std", std)
    if len(mean) != len(std):
        raise ValueError("Invalid mean/std: %d and %d values (one of each per channel)"
                         % (len(mean), len(std)))
    bad = [s for s in std if not (s > 0 and math.isfinite(s))]
    if bad or not all(math.isfinite(m) for m in mean):
        raise ValueError("Invalid std %s or mean %s (finite values, std > 0)"
                         % (list(std), list(mean)))
    return output, mean, std


def _floats(name, values):
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError("Invalid %s: %r (a sequence of numbers, one per channel)"
                         % (name, values)) from None
    if not out:
        raise ValueError("Invalid %s: empty (one value per channel)" % name)
    return out


class Normalizer:
    """uint8 ``[N, H, W, C]`` to float32 ``[N, C, H, W]``, ``(x / 255 - mean[c]) / std[c]`` as
    torchvision computes it, bit for bit: each channel's 256 possible values are computed once
    by the operations ``ToTensor`` and ``Normalize`` apply (float32 division by 255, subtraction
    of the float32 mean, division by the float32 std; with torch when it is importable, else
    with numpy's float32 arithmetic, which rounds the same IEEE operations alike), and each pixel
    is then looked up. (The feeder's CUDA kernel and its CPU twin use one fused multiply-add
    instead, which differs from torchvision by up to 5e-7.) Immutable; any thread."""

    def __init__(self, mean, std, torch=None):
        self.channels = len(mean)
        if torch is not None:
            v = torch.arange(256, dtype=torch.uint8).expand(self.channels, 1, 256)
            m = torch.as_tensor(mean, dtype=torch.float32).view(-1, 1, 1)
            s = torch.as_tensor(std, dtype=torch.float32).view(-1, 1, 1)
            lut = v.to(torch.float32).div(255).sub(m).div(s).reshape(self.channels, 256)
            self.table = np.ascontiguousarray(lut.numpy())
        else:
            x = np.arange(256, dtype=np.float32) / np.float32(255)
            self.table = np.stack([(x - np.float32(m)) / np.float32(s)
                                   for m, s in zip(mean, std)])

    def convert(self, src, out):
        """Writes the conversion of ``src`` (uint8 ``[N, H, W, C]``) into ``out`` (float32
        ``[>= N, C, H, W]``, C-contiguous); returns ``out[:N]``."""
        n, h, w, c = src.shape
        if c != self.channels or out.shape[1:] != (c, h, w) or out.shape[0] < n:
            raise ValueError("cannot convert %s images into %s with %d channel(s) of mean/std"
                             % (src.shape, out.shape, self.channels))
        for i in range(n):  # row by row: both stay in the cache
            for ch in range(c):
                np.take(self.table[ch], src[i, :, :, ch], out=out[i, ch], mode="clip")
        return out[:n]


class Prefetcher:
    """One daemon thread that runs the calls submitted to it in order, each call's result (or
    exception) through a ``concurrent.futures.Future``. The loader hands it every use of its
    connection while a batch is fetched ahead, so one thread at a time talks to the feeder.
    Daemon: a trainer that exits without closing its loader is not held up by a request in
    flight. Owned by one loader; submit from the loader's thread."""

    def __init__(self, name):
        self._tasks = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn, *args):
        f = concurrent.futures.Future()
        self._tasks.put((f, fn, args))
        return f

    def _run(self):
        while True:
            task = self._tasks.get()
            if task is None:
                return
            f, fn, args = task
            if not f.set_running_or_notify_cancel():
                continue
            try:
                f.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 (the loader's thread re-raises it)
                f.set_exception(e)

    def close(self):
        """Ends the thread once the calls submitted so far have run."""
        self._tasks.put(None)
