"""The loader state file a trainer keeps current (``SPINDLE_STATE_OUT``): replaced atomically."""
import os
import tempfile


class StateFile:
    """Writes loader state documents to ``path``, each replacing the last at once: a temporary
    file in the same directory, then ``os.replace``. A reader (a launcher restarting the trainer,
    the next run's ``SPINDLE_STATE``) sees the previous document or the new one, never a part,
    even when the trainer is killed mid-write. Not synced to disk: it survives the process, not
    the machine. Writes only a document that differs from the last one written. One thread."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.last = None

    def write(self, text):
        """Replaces the file's content by ``text`` (str) unless it is what was last written."""
        if text == self.last:
            return
        folder = os.path.dirname(os.path.abspath(self.path))
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp",
                                       prefix="." + os.path.basename(self.path) + ".")
        except OSError as e:
            raise OSError(e.errno, "cannot write the loader state file %s (state_out, "
                          "SPINDLE_STATE_OUT): %s in %s" % (self.path, e.strerror, folder)) from e
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        self.last = text
