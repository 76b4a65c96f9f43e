"""CUDA IPC (memory kind 2): the feeder's device slab, opened once in the trainer's process.

Opening needs the CUDA driver (``libcuda.so.1``) and either cupy (``cupy.cuda.runtime.
ipcOpenMemHandle``) or nothing more than ctypes (``cuIpcOpenMemHandle_v2`` in the device's primary
context, the one torch and cupy use). Batches are handed over without a copy through
``__cuda_array_interface__``: ``torch.as_tensor`` when torch is installed, else ``cupy.asarray``
(cupy arrays export DLPack to any other framework). ``SPINDLE_CUDA_IPC=cupy`` or ``=driver``
forces one opener; by default cupy is tried first, then the driver.

Release discipline: a batch's memory is refilled by the feeder as soon as it is released, so
before releasing, the loader records an event on the trainer's current stream and releases only
once that event completed (see ``Fence``). Work on other streams must be synchronised by the
trainer before it asks for the next batch.
"""
import ctypes
import os

import numpy as np

from . import protocol as p
from .fields import check_offsets, strings
from .ragged import Ragged

_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1


def parse_device(device, torch):
    """``None`` for ``cpu``, else the CUDA ordinal of ``cuda`` / ``cuda:N`` (N in 0..999, as the
    feeder accepts); anything else is refused before connecting."""
    d = str(device)
    if d == "cpu":
        return None
    if d == "cuda":
        return torch.cuda.current_device() if torch is not None else 0
    head, _, tail = d.partition(":")
    if head != "cuda" or not tail.isdigit() or not tail.isascii() or int(tail) > 999:
        raise ValueError("Invalid device: %r (expected 'cpu', 'cuda' or 'cuda:N', N in 0..999)"
                         % d[:64])
    return int(tail)


def require_support(ordinal, torch):
    """Raises before connecting when the environment cannot use CUDA IPC batches."""
    if torch is None and _cupy() is None:
        raise RuntimeError("device cuda:%d needs torch or cupy in the trainer's environment "
                           "(CUDA IPC batches are torch tensors or cupy arrays)" % ordinal)


def _cupy():
    try:
        import cupy
        return cupy
    except ImportError:
        return None


class CudaSlab:
    """The feeder's device slab mapped into this process; views of its batches without a copy.

    ``torch`` (or None) picks what views are: torch tensors, else cupy arrays. Not thread-safe.
    """

    def __init__(self, welcome, ordinal, torch, opener=None):
        self.ordinal, self.size, self.torch = ordinal, welcome["size"], torch
        require_support(ordinal, torch)
        self.cupy = _cupy()
        if torch is not None:
            torch.cuda.init()
        self._ipc = _open(welcome["ipc_handle"], ordinal, self.size, self.cupy,
                          opener or os.environ.get("SPINDLE_CUDA_IPC", "auto"))
        self.base = self._ipc.ptr
        self.opener = self._ipc.name

    def views(self, d):
        """(images, labels) of batch descriptor ``d``: tensors (or cupy arrays) on the device."""
        n = int(np.prod(d["shape"]))
        itemsize = np.dtype(d["dtype"]).itemsize
        if d["image_offset"] < 0 or d["image_offset"] + n * itemsize > self.size or \
                d["labels_offset"] < 0 or d["labels_offset"] + 8 * d["rows"] > self.size:
            raise ValueError("batch %d lies outside the %d-byte device slab" % (d["batch"],
                                                                               self.size))
        images = _CudaArray(self, self.base + d["image_offset"], d["shape"], d["dtype"])
        labels = _CudaArray(self, self.base + d["labels_offset"], (d["rows"],), "int64")
        return self._wrap(images), self._wrap(labels)

    def labels(self, d):
        """The labels of batch descriptor ``d`` without images, on the device."""
        if d["labels_offset"] < 0 or d["labels_offset"] + 8 * d["rows"] > self.size:
            raise ValueError("batch %d lies outside the %d-byte device slab" % (d["batch"],
                                                                               self.size))
        return self._wrap(_CudaArray(self, self.base + d["labels_offset"], (d["rows"],), "int64"))

    def fields(self, d):
        """The extra fields of batch descriptor ``d`` (``Batch.fields``): fixed ones as device
        views ``[N]``, list and bytes ones as :class:`Ragged` device views; text is copied to the
        host and decoded (``str`` lives there)."""
        out = {}
        for f in d["fields"]:
            values = self._part(d, f, "values", f["dtype"])
            if f["kind"] == p.FIXED:
                out[f["name"]] = values
                continue
            offsets = self._part(d, f, "offsets", "int32")
            if f["kind"] == p.STRING:
                host = [_host(values), _host(offsets)]
                check_offsets(f, host[1], len(host[0]), d)
                out[f["name"]] = strings(f, host[0].tobytes(), host[1].tolist(), d)
            else:
                out[f["name"]] = Ragged(values, offsets)
        return out

    def _part(self, d, f, part, dtype):
        """A device view of a field's values or offsets (an empty array for no bytes)."""
        offset, size = f[part + "_offset"], f[part + "_bytes"]
        if offset < 0 or offset + size > self.size:
            raise ValueError("batch %d: field %r lies outside the %d-byte device slab"
                             % (d["batch"], f["name"], self.size))
        count = size // np.dtype(dtype).itemsize
        if count == 0:  # no pointer to view: an empty array on the device
            if self.torch is None:
                with self.cupy.cuda.Device(self.ordinal):
                    return self.cupy.empty(0, dtype=dtype)
            return self.torch.empty(0, dtype=getattr(self.torch, np.dtype(dtype).name),
                                    device=self.torch.device("cuda", self.ordinal))
        return self._wrap(_CudaArray(self, self.base + offset, (count,), dtype))

    def _wrap(self, array):
        if self.torch is None:
            return self.cupy.asarray(array)
        # The device is named: older torch versions copy a CUDA-array-interface object to the
        # default (CPU) device otherwise.
        t = self.torch.as_tensor(array, device=self.torch.device("cuda", self.ordinal))
        if t.device.type != "cuda" or t.device.index != self.ordinal or \
                t.data_ptr() != array.ptr:
            raise RuntimeError("torch.as_tensor gave %s at 0x%x, expected a view on cuda:%d at "
                               "0x%x" % (t.device, t.data_ptr(), self.ordinal, array.ptr))
        return t

    def to_device(self, host):
        """A cupy copy of numpy array ``host`` on this device (trainers without torch)."""
        with self.cupy.cuda.Device(self.ordinal):
            return self.cupy.asarray(host)

    def fence(self):
        """An event recorded now on the current stream: the work queued so far that may read a
        batch. ``done()`` polls it, ``wait()`` blocks on it."""
        if self.torch is not None:
            ev = self.torch.cuda.Event()
            ev.record(self.torch.cuda.current_stream(self.ordinal))
            return Fence(ev.query, ev.synchronize)
        with self.cupy.cuda.Device(self.ordinal):
            ev = self.cupy.cuda.Event(disable_timing=True)
            ev.record(self.cupy.cuda.get_current_stream())
        return Fence(lambda: ev.done, ev.synchronize)

    def synchronize(self):
        """Waits for every piece of work on the device (before BYE and closing the handle)."""
        if self.torch is not None:
            self.torch.cuda.synchronize(self.ordinal)
        else:
            self.cupy.cuda.Device(self.ordinal).synchronize()

    def close(self):
        """Unmaps the slab (``ipcCloseMemHandle``). Views still alive become invalid."""
        if self._ipc is not None:
            ipc, self._ipc = self._ipc, None
            ipc.close()


def _host(array):
    """A numpy copy of a device tensor or cupy array."""
    return array.cpu().numpy() if hasattr(array, "cpu") else array.get()


class Fence:
    """When GPU work queued before a point is complete: ``done()`` without blocking, ``wait()``."""

    def __init__(self, done, wait):
        self.done, self.wait = done, wait


class _CudaArray:
    """A device range described by ``__cuda_array_interface__`` v3 (no stream: the bytes are
    complete when the feeder sends the batch). Keeps its slab alive while a view holds it."""

    def __init__(self, slab, ptr, shape, dtype):
        self.slab, self.ptr = slab, ptr
        self.__cuda_array_interface__ = {
            "shape": tuple(int(s) for s in shape), "typestr": np.dtype(dtype).str,
            "data": (ptr, False), "strides": None, "version": 3}


def _open(handle, ordinal, size, cupy, opener):
    if opener not in ("auto", "cupy", "driver"):
        raise ValueError("Invalid SPINDLE_CUDA_IPC: %r (expected cupy or driver)" % opener)
    errors = []
    if opener in ("auto", "cupy"):
        if cupy is None:
            errors.append("cupy: not installed")
        else:
            try:
                return _CupyIpc(cupy, handle, ordinal)
            except Exception as e:  # noqa: BLE001 (reported below with the driver's error)
                errors.append("cupy: %s: %s" % (type(e).__name__, e))
    if opener in ("auto", "driver"):
        try:
            return _DriverIpc(handle, ordinal)
        except Exception as e:  # noqa: BLE001
            errors.append("driver: %s: %s" % (type(e).__name__, e))
    raise RuntimeError("cannot open the feeder's CUDA IPC handle (%d bytes on cuda:%d): %s"
                       % (size, ordinal, "; ".join(errors)))


class _CupyIpc:
    name = "cupy"

    def __init__(self, cupy, handle, ordinal):
        self.cupy, self.ordinal = cupy, ordinal
        with cupy.cuda.Device(ordinal):
            self.ptr = int(cupy.cuda.runtime.ipcOpenMemHandle(
                bytes(handle), _CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))

    def close(self):
        with self.cupy.cuda.Device(self.ordinal):
            self.cupy.cuda.runtime.ipcCloseMemHandle(self.ptr)


class _IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class _DriverIpc:
    """``cuIpcOpenMemHandle_v2`` through ctypes, in the device's primary context."""
    name = "driver"

    def __init__(self, handle, ordinal):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._call("cuInit", 0)
        self.device = ctypes.c_int()
        self._call("cuDeviceGet", ctypes.byref(self.device), ordinal)
        self.context = ctypes.c_void_p()
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        try:
            raw = _IpcMemHandle()
            ctypes.memmove(ctypes.addressof(raw), bytes(handle), 64)
            ptr = ctypes.c_uint64()
            open_ = self._fn("cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle")
            open_.argtypes = [ctypes.POINTER(ctypes.c_uint64), _IpcMemHandle, ctypes.c_uint]
            self._in_context(lambda: self._check(
                open_(ctypes.byref(ptr), raw, _CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                "cuIpcOpenMemHandle_v2"))
            self.ptr = ptr.value
        except BaseException:
            self._release()
            raise

    def close(self):
        try:
            self._in_context(lambda: self._call("cuIpcCloseMemHandle",
                                                ctypes.c_uint64(self.ptr)))
        finally:
            self._release()

    def _release(self):
        self._check(self._fn("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease")(
            self.device), "cuDevicePrimaryCtxRelease")

    def _in_context(self, f):
        previous = ctypes.c_void_p()
        self._call("cuCtxGetCurrent", ctypes.byref(previous))
        self._call("cuCtxSetCurrent", self.context)
        try:
            f()
        finally:
            self._call("cuCtxSetCurrent", previous)

    def _fn(self, *names):
        for n in names:
            if hasattr(self.lib, n):
                return getattr(self.lib, n)
        raise RuntimeError("libcuda.so.1 has none of %s" % ", ".join(names))

    def _call(self, name, *args):
        self._check(self._fn(name)(*args), name)

    def _check(self, rc, name):
        if rc != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(text))
            raise RuntimeError("%s failed: %s (%d)" % (
                name, text.value.decode() if text.value else "unknown error", rc))
