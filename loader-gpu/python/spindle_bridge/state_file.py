"""The loader state file a trainer keeps current (``SPINDLE_STATE_OUT``): replaced atomically."""
import ctypes
import errno
import os

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class StateFile:
    """Writes loader state documents to ``path``, each replacing the last at once: a new file in
    the same directory, then an atomic swap with the old one. A reader (a launcher restarting the
    trainer, the next run's ``SPINDLE_STATE``) sees the previous document or the new one, never a
    part, even when the trainer is killed mid-write. Not synced to disk: it survives the process,
    not the machine. Writes only a document that differs from the last one written. One thread.

    Why a swap and not ``os.replace``: the client writes the file before every batch request, and
    on ext4 (the default ``/tmp`` of many Linux machines) a rename over an existing file makes
    the kernel start writing the new file's data out (``auto_da_alloc``), 0.8-2.5 ms per rename
    measured on this project's machines, against about 0.05 ms for ``renameat2(RENAME_EXCHANGE)``
    followed by removing the old file, which is atomic for readers alike. Where the swap is not
    available (another OS, a file system without it, the file's first write), ``os.replace``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.last = None
        folder, name = os.path.split(os.path.abspath(self.path))
        self._folder = folder
        # one per process and file: two loaders of one process writing one path are a misuse
        self._tmp = os.path.join(folder, ".%s.%d.tmp" % (name, os.getpid()))
        self._exchange = _renameat2()

    def write(self, text):
        """Replaces the file's content by ``text`` (str) unless it is what was last written."""
        if text == self.last:
            return
        self._write_tmp(text.encode("utf-8"))
        try:
            if not self._swap():
                os.replace(self._tmp, self.path)
        except BaseException:
            _unlink(self._tmp)
            raise
        self.last = text

    def _write_tmp(self, data):
        try:
            fd = self._create_tmp()
        except OSError as e:
            raise OSError(e.errno, "cannot write the loader state file %s (state_out, "
                          "SPINDLE_STATE_OUT): %s in %s" % (self.path, e.strerror,
                                                            self._folder)) from e
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            _unlink(self._tmp)
            raise
        os.close(fd)

    def _create_tmp(self):
        """A new file under the temporary name; one left by a crash is removed first (never
        truncated: it may be an old document a reader still has open)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            return os.open(self._tmp, flags, 0o644)
        except FileExistsError:
            os.unlink(self._tmp)
            return os.open(self._tmp, flags, 0o644)

    def _swap(self):
        """Swaps the new file with the current one and removes the old; False when the swap is
        not available here (then the caller renames)."""
        if self._exchange is None:
            return False
        if self._exchange(_AT_FDCWD, os.fsencode(self._tmp), _AT_FDCWD,
                          os.fsencode(self.path), _RENAME_EXCHANGE) != 0:
            e = ctypes.get_errno()
            if e in (errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.ENOTSUP):
                if e != errno.ENOENT:
                    self._exchange = None  # this file system cannot swap: do not ask again
                return False
            raise OSError(e, "cannot replace the loader state file %s (state_out, "
                          "SPINDLE_STATE_OUT): %s" % (self.path, os.strerror(e)))
        _unlink(self._tmp)  # now the previous document
        return True


def _renameat2():
    """libc's ``renameat2`` (Linux, glibc 2.28+), or None."""
    try:
        f = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    f.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    f.restype = ctypes.c_int
    return f


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass
