"""``pin_memory=True``: would page-lock the trainer's mapping of a host feeder's slab with CUDA, so
that ``batch.images.to("cuda", non_blocking=True)`` copies by DMA. **Refused for now**, with a
warning; batches are copied to the GPU unpinned (through the driver's staging buffer).

Why: the trainer maps the slab copy-on-write, so that a write into a batch (an in-place op) never
changes the feeder's memory, and CUDA cannot pin that mapping as it must be pinned. Measured on
an NVIDIA H200, driver 580.159 (CUDA 13), 2026-11-27, on a 4 MiB file mapping:

- ``cudaHostRegister`` with ``cudaHostRegisterReadOnly`` on the copy-on-write (``MAP_PRIVATE``)
  mapping does not return (killed after 10 s, and after 35 s in the loader);
- without that flag it returns in 0.1 s but pins for writing, which gives this process private
  copies of every page: the mapping would no longer see the feeder's later batches;
- read-only registration of a shared read-only mapping (``MAP_SHARED``, ``PROT_READ``) returns in
  0.12 s, but there a trainer's in-place write into a batch would be a segmentation fault.

These came from a hand-run script on that machine; ``bin/gpu-pin-probe`` is the same probe,
committed afterwards (not yet run on a GPU itself). A design that pins without either cost (the feeder exporting memory it registered itself, or
batches copied once into a trainer-owned pinned buffer) is future work.
"""
import warnings

REFUSED = ("CUDA cannot page-lock this process's copy-on-write mapping of the feeder's memory "
           "(see spindle_bridge.pinned); batches are copied to the GPU unpinned")


def warn_unpinned(torch):
    """Warns (once per loader: the caller's job) why the feeder's memory is not pinned: no torch,
    torch without CUDA, or, with CUDA, :data:`REFUSED`."""
    if torch is None:
        why = "torch is not used (as_numpy=True or torch not installed)"
    elif not torch.cuda.is_available():
        why = "torch has no CUDA device"
    else:
        why = REFUSED
    warnings.warn("SpindleLoader(pin_memory=True): not pinning, %s" % why, stacklevel=3)
