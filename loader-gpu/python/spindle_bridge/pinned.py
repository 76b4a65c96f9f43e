"""``pin_memory=True`` on a host feeder: batches in page-locked memory, so that
``batch.images.to("cuda", non_blocking=True)`` copies by DMA and overlaps the trainer's step.

How: one copy per batch, as PyTorch's DataLoader pins (``Tensor.pin_memory()``: torch's pinned
host allocator, which keeps a block from reuse until the copies queued from it are done). The
images, labels and weights of each batch are copied out of the feeder's memory into pinned
tensors; with ``output=`` the conversion itself writes into a new pinned tensor per batch, so
pinning costs no copy beyond the conversion. A new block per batch, not two buffers in turn: the
allocator gives a block out again only once the copies queued from it have run, while a buffer
reused in turn could be overwritten under a ``non_blocking`` copy still waiting on its stream. Needs torch with CUDA; without either, the loader warns once
and serves its usual views (:func:`warn_unpinned`).

Why not the feeder's memory itself, with no copy: the trainer maps the slab copy-on-write, so that
a write into a batch (an in-place op) never changes the feeder's memory, and CUDA cannot pin that
mapping as it must be pinned. Measured on an NVIDIA H200, driver 580.159 (CUDA 13), 2026-11-27,
on a 4 MiB file mapping: ``cudaHostRegister`` with ``cudaHostRegisterReadOnly`` on the
copy-on-write (``MAP_PRIVATE``) mapping does not return (killed after 10 s, and after 35 s in the
loader); without that flag it returns in 0.1 s but pins for writing, which gives this process
private copies of every page (the mapping would no longer see the feeder's later batches);
read-only registration of a shared read-only mapping (``MAP_SHARED``, ``PROT_READ``) returns in
0.12 s, but there a trainer's in-place write into a batch would be a segmentation fault. Those came
from a hand-run script on that machine; ``bin/gpu-pin-probe`` is the same probe. The copy above has
not run on a GPU yet (``bin/gpu-check`` machines were not lent since); on a machine without CUDA
its logic runs against a stand-in (``tests/test_pinned.py``).
"""
import warnings


def can_pin(torch):
    """True when batches can be copied into pinned memory: torch with a CUDA device."""
    return torch is not None and torch.cuda.is_available()


def pinned_empty(torch, shape, dtype):
    """A new page-locked tensor (torch's pinned allocator, as ``Tensor.pin_memory()`` uses)."""
    return torch.empty(shape, dtype=dtype, pin_memory=True)


def pin(t):
    """``t`` copied into page-locked memory (None stays None)."""
    return None if t is None else t.pin_memory()


def warn_unpinned(torch):
    """Warns (once per loader: the caller's job) why batches are not pinned: no torch, or torch
    without CUDA."""
    if torch is None:
        why = "torch is not used (as_numpy=True or torch not installed)"
    else:
        why = "torch has no CUDA device"
    warnings.warn("SpindleLoader(pin_memory=True): not pinning, %s" % why, stacklevel=3)
