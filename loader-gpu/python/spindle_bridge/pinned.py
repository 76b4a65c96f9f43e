"""``pin_memory=True``: page-locks the trainer's mapping of a host feeder's slab with CUDA.

A pinned (page-locked, CUDA-registered) source lets ``batch.images.to("cuda", non_blocking=True)``
copy by DMA, asynchronously, instead of through the driver's staging buffer. The slab is mapped
once per leg, so it is registered once per leg (``cudaHostRegister``) and unregistered before it is
unmapped. It is registered **read-only** (``cudaHostRegisterReadOnly``): the mapping is
copy-on-write, and pinning it for writing would give this process private copies of every page,
which would no longer see the feeder's later batches. Where the GPU cannot register read-only
memory the loader warns and does not pin. Batches a trainer wrote into (in-place ops) are copied
to the GPU as the feeder wrote them until they are released.
"""
import warnings

import numpy as np

# cudaHostRegisterPortable (pinned for every CUDA context) | cudaHostRegisterReadOnly
_FLAGS = 0x01 | 0x08


class HostPin:
    """The registration of one mapping; :meth:`close` unregisters it (idempotent)."""

    def __init__(self, cudart, address, size):
        self._cudart, self.address, self.size = cudart, address, size

    def close(self):
        if self._cudart is not None:
            cudart, self._cudart = self._cudart, None
            cudart.cudaHostUnregister(self.address)


def pin(mm, torch):
    """Registers the whole mapping ``mm`` with CUDA through ``torch``; a :class:`HostPin`, or None
    with a warning saying why when this process cannot (no torch, torch without CUDA, or a
    driver that refuses read-only registration)."""
    why = None
    if torch is None:
        why = "torch is not used (as_numpy=True or torch not installed)"
    elif not torch.cuda.is_available():
        why = "torch has no CUDA device"
    if why is not None:
        warnings.warn("SpindleLoader(pin_memory=True): not pinning, %s" % why, stacklevel=3)
        return None
    view = np.frombuffer(mm, dtype=np.uint8)
    address, size = view.ctypes.data, view.nbytes
    del view  # an exported buffer would keep mm from closing
    cudart = torch.cuda.cudart()
    err = cudart.cudaHostRegister(address, size, _FLAGS)
    code = getattr(err, "value", err)
    if code != 0:
        warnings.warn("SpindleLoader(pin_memory=True): not pinning, cudaHostRegister(read-only) of "
                      "the %d-byte slab failed with CUDA error %s" % (size, code), stacklevel=3)
        return None
    return HostPin(cudart, address, size)
