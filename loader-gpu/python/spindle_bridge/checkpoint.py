"""Checkpoints that hold the model, the optimizer and the loader's state together (torchdata's
``StatefulDataLoader`` convention), so that a restarted trainer resumes the model with the data.

    from spindle_bridge import SpindleLoader, checkpoint
    loader = SpindleLoader.from_env()
    path = "/ckpt/rank-%d.pt" % rank                         # one file per rank
    extra = checkpoint.load(path, model, optimizer, loader)   # None: no checkpoint, start fresh
    step = extra["step"] if extra else 0
    for epoch in loader.epochs():
        for images, labels in loader:
            ...; optimizer.step(); step += 1
            if step % 100 == 0:
                checkpoint.save(path, model, optimizer, loader, step=step)

:func:`save` writes one file per call, atomically: ``torch.save`` into a temporary file in the
same directory, ``fsync``, then ``os.replace`` over ``path``; the file it replaces is kept as
``path + ".prev"`` (a hard link), so the previous checkpoint survives too. A reader (a restarted
trainer) sees a whole checkpoint, never a part, even after a SIGKILL or a power cut mid-write.
A save at the step of the latest checkpoint (every K steps and again at an epoch's end) replaces
it and keeps the one before. The file holds ``{"format", "model", "optimizer", "loader",
"extra"}``: the model's and the optimizer's ``state_dict()``, the loader's ``state_dict()`` as it
was when the step finished (the batch just trained on counts as consumed) and the keyword
arguments.

Under ``bin/spindle train`` (``SPINDLE_CHECKPOINT_OUT`` set) :func:`save` then records the
checkpoint (its path and loader state, and those of the previous one) in that file, which
``train`` copies into its state directory. When a trainer fails, ``train`` restarts every rank
from the latest step that every rank has a checkpoint of, telling each trainer which file to load
(``SPINDLE_CHECKPOINT``) and starting its feed at that checkpoint's loader state
(``SPINDLE_STATE``): the model, the optimizer and the data resume at one step on every rank. Where
some rank saved no checkpoint, every rank restarts from the run's start with a fresh model, and
:func:`load` returns None. Outside ``train``, :func:`load` loads ``path`` and hands its loader
state to ``loader.load_state_dict`` (the loader then resumes there).

Save from every rank (each rank's file holds its own loader state), at the same steps on every
rank, after the optimizer step. One thread per path.
"""
import json
import os
import tempfile

from .client import _plan_identity
from .state_file import StateFile

FORMAT = "spindle-checkpoint/1"
RECORD_FORMAT = "spindle-checkpoint-record/1"
PREVIOUS = ".prev"

# What this process knows of the files of each checkpoint path (absolute): the loader states
# that ``path`` and ``path + PREVIOUS`` hold, as this process saved or loaded them; None for a
# file that is not this lineage's (or not there).
_known = {}


def save(path, model, optimizer, loader, **extra):
    """Writes a checkpoint of ``model``, ``optimizer`` (None: none) and ``loader`` (a
    :class:`~spindle_bridge.SpindleLoader`, or anything with ``state_dict()``) with ``extra``
    (e.g. ``step=``, ``epoch=``; anything ``torch.save`` takes) to ``path``, atomically; keeps
    the checkpoint it replaces as ``path + ".prev"``. Call it after the optimizer's step, before
    asking the loader for the next batch. Returns ``path``."""
    import torch
    path = os.path.abspath(os.fspath(path))
    state = loader.state_dict()
    doc = {"format": FORMAT, "model": _state(model), "optimizer": _state(optimizer),
           "loader": state, "extra": dict(extra)}
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    latest, earlier = _known.get(path, (None, None))
    # the same step again (e.g. every K steps and at an epoch's end): the previous checkpoint
    # stays the one before that step, which a rank behind this one may still need
    again = latest is not None and _same_point(latest, state, getattr(loader, "rank", None))
    tmp = _temporary(path)
    try:
        with open(tmp, "wb") as f:
            torch.save(doc, f)
            f.flush()
            os.fsync(f.fileno())
        if not again:
            earlier = latest if _keep_previous(path) else None
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _sync_folder(folder)
    _known[path] = (state, earlier)
    _record(path, state, earlier)
    return path


def load(path, model, optimizer, loader, map_location=None):
    """Loads the checkpoint of ``path`` into ``model`` and ``optimizer`` (None: none) and returns
    its ``extra`` (a dict, maybe empty); returns None when there is no checkpoint to resume from,
    and then changes nothing (start fresh). Call it once, after the loader was made and before
    its first batch.

    Under ``train`` it loads the file ``train`` chose (``SPINDLE_CHECKPOINT``: ``path`` or
    ``path + ".prev"``), whose loader state is where the loader already resumes; a ``.prev``
    becomes ``path`` again (the newer checkpoint was past the step every rank has). Without one
    it returns None even where ``path`` exists (``train`` restarts every rank from the run's
    start, see the module's documentation). Outside ``train`` it loads ``path`` if it exists and
    resumes ``loader`` from its loader state (``loader.load_state_dict``).

    ``map_location`` is ``torch.load``'s (e.g. ``"cuda:0"``). The file is unpickled whole: load
    only checkpoints you wrote."""
    path = os.path.abspath(os.fspath(path))
    if os.environ.get("SPINDLE_CHECKPOINT_OUT"):
        return _load_chosen(path, model, optimizer, loader, map_location)
    if not os.path.exists(path):
        _known[path] = (None, None)
        return None
    doc = _read(path, map_location)
    _apply(doc, model, optimizer)
    loader.load_state_dict(doc["loader"])
    _known[path] = (doc["loader"], None)
    return doc["extra"]


def _load_chosen(path, model, optimizer, loader, map_location):
    chosen = os.environ.get("SPINDLE_CHECKPOINT") or ""
    _known[path] = (None, None)
    if not chosen:
        if os.path.exists(path):
            print("spindle_bridge.checkpoint: not loading %s: train restarts rank %s from the "
                  "run's start with a fresh model (every rank restarts from the latest step all "
                  "ranks have a checkpoint of; the driver's output says why there is none)"
                  % (path, getattr(loader, "rank", "?")), flush=True)
        return None
    chosen = os.path.abspath(chosen)
    if chosen not in (path, path + PREVIOUS):
        raise ValueError("checkpoint.load(%r): train resumes this rank from the checkpoint %s, "
                         "which is not that path nor its %s: save and load one path per rank, "
                         "the same in every attempt" % (path, chosen, PREVIOUS))
    doc = _read(chosen, map_location)
    _require_point(doc["loader"], loader.state_dict(), getattr(loader, "rank", None), chosen)
    _apply(doc, model, optimizer)
    if chosen != path:
        _restore(chosen, path)
    _known[path] = (doc["loader"], None)
    _record(path, doc["loader"], None)
    return doc["extra"]


def _state(obj):
    return None if obj is None else obj.state_dict()


def _apply(doc, model, optimizer):
    if model is not None:
        model.load_state_dict(doc["model"])
    if optimizer is not None:
        if doc["optimizer"] is None:
            raise ValueError("the checkpoint holds no optimizer state (saved with optimizer=None)")
        optimizer.load_state_dict(doc["optimizer"])


def _read(path, map_location):
    import torch
    try:
        doc = torch.load(path, map_location=map_location, weights_only=False)
    except TypeError:  # a torch before weights_only
        doc = torch.load(path, map_location=map_location)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("%s is not a Spindle checkpoint (%s): write it with "
                         "spindle_bridge.checkpoint.save" % (path, FORMAT))
    return doc


def _same_point(a, b, rank):
    """Whether loader states ``a`` and ``b`` put ``rank`` at the same batch of the same plan."""
    r = rank if isinstance(rank, int) else 0
    return (_plan_identity(a) == _plan_identity(b)
            and a["batchesConsumed"][r] == b["batchesConsumed"][r])


def _require_point(saved, current, rank, path):
    """Refuses a checkpoint whose loader state is not where the loader resumes: its model would
    not match the data the feeder serves next."""
    r = rank if isinstance(rank, int) else 0
    if not _same_point(saved, current, r):
        raise RuntimeError("checkpoint %s is at epoch %s batch %s of rank %d, but the loader "
                           "resumes at epoch %s batch %s: train chose another checkpoint than "
                           "this file holds (was it replaced since?)"
                           % (path, saved.get("epoch"), saved["batchesConsumed"][r], r,
                              current.get("epoch"), current["batchesConsumed"][r]))


def _keep_previous(path):
    """Makes ``path + ".prev"`` the file now at ``path`` (a hard link, else a copy), atomically;
    False when there is none."""
    if not os.path.exists(path):
        return False
    _restore(path, path + PREVIOUS)
    return True


def _restore(source, target):
    """Replaces ``target`` by ``source``'s content at once (a hard link renamed over it; a
    synced copy where links are not supported)."""
    tmp = _temporary(target)
    _unlink(tmp)
    try:
        try:
            os.link(source, tmp)
        except OSError:
            with open(source, "rb") as src, open(tmp, "wb") as dst:
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    dst.write(block)
                dst.flush()
                os.fsync(dst.fileno())
        os.replace(tmp, target)
    except BaseException:
        _unlink(tmp)
        raise


def _record(path, state, earlier):
    """Tells ``train`` (``SPINDLE_CHECKPOINT_OUT``) which checkpoints the rank has, newest first:
    written after the files are in place, so it never names a checkpoint that is not whole."""
    out = os.environ.get("SPINDLE_CHECKPOINT_OUT")
    if not out:
        return
    checkpoints = [{"file": path, "state": state}]
    if earlier is not None:
        checkpoints.append({"file": path + PREVIOUS, "state": earlier})
    StateFile(out).write(json.dumps({"format": RECORD_FORMAT, "checkpoints": checkpoints}))


def _temporary(path):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp",
                               prefix="." + os.path.basename(path) + ".")
    os.close(fd)
    return tmp


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_folder(folder):
    """Makes the rename durable (where the platform lets a directory be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
