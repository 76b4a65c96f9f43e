"""SpindleLoader: an iterable over a rank's batches, served by a co-located Spindle feeder."""
import copy
import json
import mmap
import os
import socket
import stat
import time

import numpy as np

from . import protocol as p
from .batch import Batch, drop, hold
from .convert import Normalizer, Prefetcher, check_output
from .fields import host_fields
from .cuda import CudaSlab, parse_device, require_support
from .pages import PrivatePages
from .pinned import can_pin, pin, pinned_empty, warn_unpinned
from .state_file import StateFile

_POSITION = "\x00spindle-position\x00"  # stands for the rank's count in a state template


def _torch():
    """torch if importable (imported on first use: numpy-only trainers never pay for it)."""
    try:
        import torch
        return torch
    except ImportError:
        return None


class SpindleLoader:
    """Yields a rank's batches (:class:`Batch`, which unpacks as ``(images, labels)`` and carries
    ``weights``, ``keys`` and ``indices``), viewing the feeder's memory without a copy.

    Images are uint8 ``[N, H, W, C]`` (or normalised ``[N, C, H, W]`` float16/float32, as the
    feeder is configured); labels int64 ``[N]``. The views are valid until the next batch is
    requested: the loader then releases the batch and the feeder reuses its slot. Copy (or
    convert, e.g. ``images.float()``) what must outlive the step. On the host they may be written
    (in-place ops): the mapping is copy-on-write, so writes stay in this process.

    ``device="cpu"``: a feeder on host shared memory; numpy arrays or CPU tensors. ``device=
    "cuda:N"`` (or ``"cuda"``, torch's current device): a feeder on that GPU; the batches are
    CUDA tensors (cupy arrays without torch) in the feeder's device memory, opened once by CUDA
    IPC (needs torch or cupy, see ``spindle_bridge.cuda``). Ordinals are as the feeder sees
    them: run trainer and feeder with the same ``CUDA_VISIBLE_DEVICES``. On CUDA a batch is
    released only once the work queued on the current stream before the next request is done;
    synchronise work on other streams yourself before asking for the next batch.

    ``token``: the feed run's token, which the feeder requires of every trainer; by default the
    environment variable ``SPINDLE_RUN_TOKEN`` (set by launchers; by hand, read it from the file
    the feeder writes beside its socket, ``<socket>.token``).

    ``state_dict()`` is the loader state JSON (as a dict) with this rank's batches consumed;
    pass it back as ``state=`` to resume within the same epoch (the feeder refuses a state of
    another plan: another dataset, seed, epoch, batch size, world size or leg).

    ``epochs=E`` (the run's end epoch, exclusive; ``SPINDLE_EPOCHS``): one loader for the whole
    run. Each connection serves one epoch (a leg); iterating the loader again after an epoch's
    END connects anew for the next epoch while ``epoch + 1 < E`` (see :meth:`epochs`,
    :meth:`set_epoch`). Without it the loader serves one leg. ``epoch`` is the current leg's
    epoch (from the feeder's loader state; None when it states none).

    ``state_out=PATH`` (``SPINDLE_STATE_OUT``): the loader keeps ``state_dict()`` in that file,
    replaced atomically before each request that follows a finished step and after each END.

    ``len(loader)``: the batches this rank gets in the current epoch (all of them, also those
    consumed before a resume), as the feeder states it; TypeError where the feeder does not know
    (a feed whose length is unknown).

    ``output="float32-nchw"`` (host feeders serving uint8): the batches are float32 ``[N, C, H,
    W]``, ``(x / 255 - mean[c]) / std[c]``, bit for bit what torchvision's ``ToTensor()`` then
    ``Normalize(mean, std)`` give (``mean``/``std``: one value per channel, ImageNet's by
    default), made by the loader on a thread of its own from the next batch while the trainer's
    step runs (``spindle_bridge.convert``). The loader then takes each batch from the feeder one
    step ahead of the trainer (two batches held, as on CUDA); ``state_dict()`` still counts the
    batches yielded, and ``close()`` in the middle of a leg hands the batch taken ahead back to
    the feeder (it goes to the rank's next trainer). The images are the loader's own memory (two
    buffers in turn; with ``pin_memory`` a pinned tensor per batch), valid until the next batch is
    requested like any view; labels stay views of the feeder's memory. Not on CUDA feeders yet
    (ValueError).

    ``pin_memory=True`` (host feeders): each batch's images, labels and weights are copied once
    into page-locked memory (``Tensor.pin_memory()``, as PyTorch's DataLoader pins), so that
    ``.to("cuda", non_blocking=True)`` overlaps the step; with ``output=`` the conversion writes
    into pinned buffers, at no extra copy. Needs torch with CUDA: otherwise a warning says why and
    batches stay views (``spindle_bridge.pinned``). ``pinned`` says which.

    Not thread-safe: one iterating thread per loader.
    """

    def __init__(self, socket_path, rank, world_size, device="cpu", state=None, timeout_s=300.0,
                 as_numpy=False, ipc=None, token=None, epochs=None, state_out=None,
                 pin_memory=False, output=None, mean=None, std=None):
        self.rank, self.world_size = rank, world_size
        self.timeout_s = timeout_s
        self.end_epoch = _end_epoch(epochs)
        self.torch = None if as_numpy else _torch()
        self.ordinal = parse_device(device, self.torch)
        self.device = device if self.ordinal is None else "cuda:%d" % self.ordinal
        self.output, mean, std = check_output(output, mean, std)
        if self.output is not None and self.ordinal is not None:
            raise ValueError("output=%r is made on the host; a feeder on %s serves uint8 batches "
                             "in device memory: convert them on the GPU (images.permute(0, 3, 1, "
                             "2).float() ...)" % (self.output, self.device))
        if self.ordinal is not None:
            require_support(self.ordinal, self.torch)
        self.socket_path = str(socket_path)
        self._token = _run_token(token, socket_path)
        self._ipc_opener = ipc
        self._state_file = None if state_out is None else StateFile(state_out)
        self.pin_memory = bool(pin_memory) and self.ordinal is None  # CUDA batches: on device
        self._normalizer = None if self.output is None else Normalizer(mean, std, self.torch)
        self._prefetcher = None
        self._outputs = None
        self._output_shape = None
        self._sock = None
        self.wait_s = 0.0
        self._connect_leg(state)

    def _connect_leg(self, state):
        """Connects (HELLO with ``state``, None: continue where the rank is) and maps the
        memory the WELCOME names; the loader then serves that leg from its first batch."""
        self._cuda = None
        self._fences = []
        self.batches_yielded = 0
        self.last = None
        self._held = None
        self._ended = False
        self._mm = None
        self._pages = None
        self._written = ()
        self._state_parts = None
        self._pending = None  # the batch being taken ahead (output=): a Future
        self._holding = []  # (batch, written ranges) of batches taken and not released (output=)
        deadline = time.monotonic() + self.timeout_s
        pause = 0.05
        while True:
            try:
                self._handshake(state, deadline)
                break
            except p.ProtocolError as e:
                left = deadline - time.monotonic()
                if e.code != "BUSY":
                    raise
                if left <= 0:
                    raise p.ProtocolError("%s; still refused after retrying for %.1f s (the "
                                          "loader's timeout_s)" % (e.detail, self.timeout_s),
                                          "BUSY") from None
                # the feeder has its maximum of connections open: some leave (peers that never
                # say hello are dropped after its handshake timeout), so try again, backing off
                time.sleep(min(pause, left))
                pause = min(2 * pause, 1.0)
        base = self.welcome["loader_state"]
        self._base_state = json.loads(base) if base else None
        self.epoch = _epoch_of(self._base_state)
        if self._normalizer is not None:
            self._check_convertible()

    def _handshake(self, state, deadline):
        """Connects (waiting for a listener until ``deadline``), says HELLO and reads WELCOME;
        maps the memory it names. ProtocolError when the feeder refuses (``code`` says why)."""
        self._sock = _connect(self.socket_path, self.timeout_s, deadline)
        try:
            try:
                self._sock.sendall(p.hello(self._token, self.rank, self.world_size,
                                           _resume_point(state, self.rank), self.device,
                                           _plan_identity(state), os.getpid()))
            except (BrokenPipeError, ConnectionResetError):
                pass  # a feeder that refused at once (BUSY) has closed: its ERROR is read below
            msg_type, payload = p.read_frame(self._sock)
            if msg_type != p.WELCOME:
                raise p.ProtocolError("expected WELCOME, got message type %d" % msg_type)
            self.welcome = p.parse_welcome(payload)
            self.start_batch = self.welcome["position"]
            self._map()
        except BaseException:
            self._sock.close()
            raise

    def _map(self):
        w = self.welcome
        if w["memory"] == p.MEMORY_SHM:
            self._mm = _map_shared(w["path"], w["size"])
            self._pages = PrivatePages(self._mm)
            if self.pin_memory and not can_pin(self.torch):
                warn_unpinned(self.torch)
                self.pin_memory = False  # warned once: not again each leg
        elif self.ordinal is None or w["device"] != self.ordinal:
            raise p.ProtocolError("feeder offered CUDA IPC memory on cuda:%d to a trainer on %s"
                                  % (w["device"], self.device))
        else:
            self._cuda = CudaSlab(w, self.ordinal, self.torch, self._ipc_opener)

    @classmethod
    def from_env(cls, **overrides):
        """A loader built from the launcher's environment: ``RANK``, ``WORLD_SIZE`` (as
        torchrun sets them), ``SPINDLE_SOCKET`` (the feeder's socket), ``SPINDLE_RUN_TOKEN``,
        optional ``SPINDLE_DEVICE`` (``cpu`` by default, or ``cuda:N``), ``SPINDLE_STATE`` (a
        loader state JSON file to resume from), ``SPINDLE_TIMEOUT_S`` (300 by default),
        ``SPINDLE_EPOCHS`` (``epochs``: the run's end epoch) and ``SPINDLE_STATE_OUT``
        (``state_out``: the state file to keep current). Keyword arguments override them
        (``SpindleLoader(...)``'s names)."""
        env = os.environ
        missing = [k for k in ("RANK", "WORLD_SIZE", "SPINDLE_SOCKET") if not env.get(k)]
        if missing and not all(_ENV_ARGS[k] in overrides for k in missing):
            raise ValueError("SpindleLoader.from_env: %s not set (RANK, WORLD_SIZE and "
                             "SPINDLE_SOCKET are required; see the README)" % ", ".join(missing))
        args = {"socket_path": env.get("SPINDLE_SOCKET"), "rank": _env_int("RANK"),
                "world_size": _env_int("WORLD_SIZE"),
                "device": env.get("SPINDLE_DEVICE") or "cpu",
                "timeout_s": float(env.get("SPINDLE_TIMEOUT_S") or 300.0),
                "epochs": _env_int("SPINDLE_EPOCHS"),
                "state_out": env.get("SPINDLE_STATE_OUT") or None}
        if env.get("SPINDLE_STATE"):
            with open(env["SPINDLE_STATE"], encoding="utf-8") as f:
                args["state"] = json.load(f)
        args.update(overrides)
        return cls(**args)

    @property
    def pinned(self):
        """Whether batches are served in page-locked memory: ``pin_memory=True`` on a host feeder,
        with torch and CUDA (see ``spindle_bridge.pinned``)."""
        return self.pin_memory and self._cuda is None

    def __len__(self):
        end = self.welcome["end_batch"]
        if end < 0:
            raise TypeError("len(SpindleLoader): the feeder on %s does not know how many batches "
                            "rank %d gets (a feed of unknown length)" % (self.socket_path,
                                                                         self.rank))
        return end

    @property
    def memory_base(self):
        """Device pointer of the feeder's slab in this process (CUDA IPC), else None."""
        return None if self._cuda is None else self._cuda.base

    def __iter__(self):
        if self._ended:
            if self._next_epoch() is None:
                return
            self._reconnect()
        if self._normalizer is not None:
            yield from self._iter_converted()
            return
        while not self._ended:
            self._save_state()
            self._release_held()
            started = time.perf_counter()
            payload = self._request_batch()
            self.wait_s += time.perf_counter() - started
            if payload is None:
                self._ended = True
                self._save_state()
                return
            desc = p.parse_batch(payload)
            if desc["event"]:
                raise p.ProtocolError("batch %d carries a CUDA IPC event (kind %d), which this "
                                      "client does not wait on" % (desc["batch"], desc["event"]))
            self._held = desc["batch"]
            images, labels = self._views(desc)
            weights = self._weights(desc["weights"])
            if self.pin_memory:  # copies: the feeder's memory cannot be pinned (pinned.py)
                images, labels, weights = pin(images), pin(labels), pin(weights)
            self.last = Batch(images, labels, weights, desc, self._field_views(desc))
            hold(self.last)
            self.batches_yielded += 1
            yield self.last

    def epochs(self):
        """Yields the run's epoch numbers, from the current leg's up to ``epochs - 1``,
        connecting anew for each next one: ``for epoch in loader.epochs(): for batch in loader:
        ...``. Each epoch must be iterated to its END before the next is asked for (the feeder
        serves a rank's epochs one after the other): otherwise RuntimeError. Needs ``epochs=``
        and a feeder that states its loader state (``bin/spindle train``)."""
        if self.end_epoch is None:
            raise ValueError("SpindleLoader.epochs() needs the run's end epoch: pass epochs=E "
                             "(SPINDLE_EPOCHS)")
        if self.epoch is None:
            raise RuntimeError("SpindleLoader.epochs(): the feeder on %s states no loader state, "
                               "so the epoch it serves is unknown" % self.socket_path)
        if self._ended:
            if self._next_epoch() is None:
                return
            self._reconnect()
        while True:
            yield self.epoch
            if not self._ended:
                raise RuntimeError(
                    "epoch %d of rank %d was not iterated to its end (%d batches consumed, "
                    "batch %d next): the feeder still serves it; iterate the loader until it "
                    "stops before asking for epoch %d"
                    % (self.epoch, self.rank, self.position(), self.position(), self.epoch + 1))
            if self._next_epoch() is None:
                return
            self._reconnect()

    def set_epoch(self, epoch):
        """Checks that ``epoch`` is the one the loader serves next (the current one until its
        END, then the next): Spindle serves epochs in plan order, so this only catches a
        trainer whose count went astray (ValueError naming both). A no-op when the feeder
        states no epoch."""
        if self.epoch is None:
            return
        expected = self.epoch if not self._ended else self._next_epoch()
        if epoch == expected:
            return
        if expected is None:
            raise ValueError("set_epoch(%d): rank %d's run ended with epoch %d (epochs=%s): "
                             "no epoch is served next" % (epoch, self.rank, self.epoch,
                                                          self.end_epoch))
        raise ValueError("set_epoch(%d): rank %d is served epoch %d next (Spindle serves epochs "
                         "in plan order)" % (epoch, self.rank, expected))

    def _next_epoch(self):
        """The epoch the next leg serves after this one's END; None when the run ends here."""
        if self.end_epoch is None or self.epoch is None or self.epoch + 1 >= self.end_epoch:
            return None
        return self.epoch + 1

    def _reconnect(self):
        """After a leg's END: disconnects (BYE), connects without a state for the next epoch."""
        expected = self._next_epoch()
        self._disconnect()
        self._connect_leg(None)
        if self.epoch != expected:
            got = self.epoch
            self.close()
            raise p.ProtocolError("after epoch %d's END the feeder on %s served epoch %s to rank "
                                  "%d (expected %d)" % (expected - 1, self.socket_path, got,
                                                        self.rank, expected))

    def _iter_converted(self):
        """__iter__ with output=: each batch is taken from the feeder and converted on the
        prefetcher's thread while the trainer's step runs on the one before."""
        if self._prefetcher is None:
            self._prefetcher = Prefetcher("spindle-prefetch-rank%d" % self.rank)
        while not self._ended:
            self._save_state()  # the step of the batch before finished
            if self._pending is None:  # the leg's first request
                self._pending = self._prefetcher.submit(self._take_converted, 0)
            started = time.perf_counter()
            try:
                got = self._pending.result()
            finally:
                self._pending = None
                self.wait_s += time.perf_counter() - started
            if got is None:
                self._prefetcher.submit(self._release_taken, 0).result()
                self._ended = True
                self._save_state()
                return
            desc, images, labels, fields = got
            self._held = desc["batch"]
            weights = self._weights(desc["weights"])
            if self.pin_memory:  # the images were converted into pinned memory already
                labels, weights = pin(labels), pin(weights)
            self.last = Batch(images, labels, weights, desc, fields)
            hold(self.last)
            self.batches_yielded += 1
            # the batch before is consumed: released; the next one converted during this step
            self._pending = self._prefetcher.submit(self._release_then_take,
                                                    self.batches_yielded % 2)
            yield self.last

    def _take_converted(self, buffer):
        """On the prefetcher's thread: asks for the next batch and converts its images into
        output buffer ``buffer``; (desc, images, labels, fields), or None at END. The batch stays
        held (the trainer has not consumed it)."""
        payload = self._request_batch()
        if payload is None:
            return None
        desc = p.parse_batch(payload)
        if desc["event"] or desc["dtype"] != "uint8":
            raise p.ProtocolError("batch %d is not a uint8 batch in host memory (dtype %s, "
                                  "event kind %d): it cannot be converted"
                                  % (desc["batch"], desc["dtype"], desc["event"]))
        src, labels = self._host_views(desc)
        out = self._output(buffer)
        images = self._normalizer.convert(src, out[0])
        fields = self._field_views(desc)
        self._holding.append((desc["batch"], self._written))
        if self.torch is None:
            return desc, images, labels, fields
        return (desc, out[1][:desc["rows"]],
                self.torch.from_numpy(labels), fields)

    def _request_batch(self):
        """Sends NEXT and reads the feeder's answer: a BATCH's payload, or None at END.
        TimeoutError when no batch came within ``timeout_s``; ProtocolError on any other
        message."""
        self._sock.sendall(p.next_request(int(self.timeout_s * 1000)))
        msg_type, payload = p.read_frame(self._sock)
        if msg_type == p.END:
            return None
        if msg_type == p.TIMEOUT:
            raise TimeoutError("no batch for rank %d within %.0f s" % (self.rank,
                                                                      self.timeout_s))
        if msg_type != p.BATCH:
            raise p.ProtocolError("expected BATCH, got message type %d" % msg_type)
        return payload

    def _release_then_take(self, buffer):
        self._release_taken(1)
        return self._take_converted(buffer)

    def _release_taken(self, keep):
        """On the prefetcher's thread: releases the batches taken but the last ``keep``."""
        while len(self._holding) > keep:
            n, written = self._holding.pop(0)
            self._pages.discard(written)
            self._sock.sendall(p.release(n))

    def _check_convertible(self):
        """output=: the feeder must serve uint8 [N, H, W, C] with one mean/std per channel;
        allocates the two output buffers (kept while the shape stays)."""
        w = self.welcome
        if w["channels"] == 0:
            self.close()
            raise ValueError("output=%r converts images; the feeder on %s serves batches "
                             "without images: drop output=" % (self.output, self.socket_path))
        if w["dtype"] != "uint8":
            self.close()
            raise ValueError("output=%r converts uint8 batches; the feeder on %s serves %s "
                             "batches already: drop output=" % (self.output, self.socket_path,
                                                                w["dtype"]))
        c = self._normalizer.channels
        if w["channels"] != c:
            self.close()
            raise ValueError("output=%r: the feeder on %s serves %d channel(s), mean/std give "
                             "%d: pass mean= and std= with one value per channel"
                             % (self.output, self.socket_path, w["channels"], c))
        shape = (w["max_rows"], c, w["height"], w["width"])
        self._output_shape = shape
        if self.pin_memory:
            self._outputs = None  # a pinned tensor per batch instead (_output)
        elif self._outputs is None or self._outputs[0][0].shape != shape:
            arrays = [np.empty(shape, dtype=np.float32) for _ in range(2)]
            self._outputs = [(a, None if self.torch is None else self.torch.from_numpy(a))
                             for a in arrays]

    def _output(self, buffer):
        """Where a batch's images are converted: (numpy array, tensor or None) of output buffer
        ``buffer``, the two used in turn; with ``pin_memory`` a new page-locked tensor per batch
        from torch's pinned allocator instead, so the conversion is the only copy. The allocator
        hands a block out again only once the copies queued from it are done: a buffer used in
        turn could be overwritten while a ``non_blocking`` copy from it still waits on its stream."""
        if not self.pin_memory:
            return self._outputs[buffer]
        t = pinned_empty(self.torch, self._output_shape, self.torch.float32)
        return t.numpy(), t

    def _save_state(self):
        if self._state_file is not None:
            self._state_file.write(self._state_text())

    def _state_text(self):
        """``json.dumps(self.state_dict())``, from a template made once per leg: before every
        request, and a state of 8,192 ranks takes a millisecond to copy and dump."""
        if self._state_parts is None:
            state = self.state_dict()
            state["batchesConsumed"][self.rank] = _POSITION
            head, tail = json.dumps(state).split(json.dumps(_POSITION))
            self._state_parts = (head, tail)
        return "%s%d%s" % (self._state_parts[0], self.position(), self._state_parts[1])

    def _views(self, d):
        if not d["shape"]:
            # a batch without images (PROTOCOL.md: BATCH, ndim 0): labels only; images None
            return None, self._label_view(d)
        if self._cuda is not None:
            return self._cuda.views(d)
        images, labels = self._host_views(d)
        if self.torch is None:
            return images, labels
        return self.torch.from_numpy(images), self.torch.from_numpy(labels)

    def _label_view(self, d):
        """The labels of a batch without images, on the host or the device."""
        if self._cuda is not None:
            return self._cuda.labels(d)
        labels = np.frombuffer(self._mm, dtype=np.int64, count=d["rows"],
                               offset=d["labels_offset"])
        self._written = ((d["labels_offset"], 8 * d["rows"]),)
        return labels if self.torch is None else self.torch.from_numpy(labels)

    def _host_views(self, d):
        """numpy views of a batch's images and labels in the feeder's shared memory."""
        n = int(np.prod(d["shape"]))
        images = np.frombuffer(self._mm, dtype=d["dtype"], count=n,
                               offset=d["image_offset"]).reshape(d["shape"])
        labels = np.frombuffer(self._mm, dtype=np.int64, count=d["rows"],
                               offset=d["labels_offset"])
        self._written = ((d["image_offset"], d["image_bytes"]), (d["labels_offset"], 8 * d["rows"]))
        return images, labels

    def _field_views(self, d):
        """The batch's extra fields by name (``Batch.fields``): views of the slot, as the
        images; on the host their ranges join the pages dropped when the batch is released."""
        if not d["fields"]:
            return {}
        if self._cuda is not None:
            return self._cuda.fields(d)
        written = list(self._written)
        fields = host_fields(self._mm, d, self.torch, written)
        self._written = tuple(written)
        return fields

    def _weights(self, weights):
        w = np.array(weights, dtype=np.float32)
        if self.torch is None:
            return w if self._cuda is None else self._cuda.to_device(w)
        t = self.torch.from_numpy(w)
        return t if self._cuda is None else t.to(self.device)

    def _release_held(self):
        if self._held is None:
            return
        held, self._held = self._held, None
        drop(self.last)
        if self._cuda is None:
            self._pages.discard(self._written)
            self._sock.sendall(p.release(held))
            return
        # The GPU may still run work queued on the batch: release it once that work is done,
        # waiting only when two batches would be held back (the feeder needs its slots).
        self._fences.append((held, self._cuda.fence()))
        while self._fences and (len(self._fences) > 1 or self._fences[0][1].done()):
            n, fence = self._fences.pop(0)
            fence.wait()
            self._sock.sendall(p.release(n))

    def position(self):
        """Batches of this rank's current leg consumed: the resume point."""
        return self.start_batch + self.batches_yielded

    def state_dict(self):
        """The loader state document with this rank's ``batchesConsumed`` entry updated."""
        state = copy.deepcopy(self._base_state) if self._base_state else {
            "worldSize": self.world_size, "batchesConsumed": [0] * self.world_size}
        state["batchesConsumed"][self.rank] = self.position()
        return state

    def load_state_dict(self, state):
        """Resumes from ``state`` (a loader state, as ``state_dict()`` returns it) before the
        first batch of a leg (torchdata's ``StatefulDataLoader`` calls it so): the loader
        connects anew stating it, and the feeder serves the rank from there (it refuses a state
        of another plan or one behind the rank, see PROTOCOL.md). After an epoch's END it
        connects for the next epoch with it. A state equal to ``state_dict()`` changes nothing;
        once a batch of the leg was taken, RuntimeError (the feeder has moved on)."""
        if state == self.state_dict():
            return
        if self.batches_yielded and not self._ended:
            raise RuntimeError("load_state_dict: rank %d already took %d batches of this leg "
                               "(batch %d next); load a state before the first batch"
                               % (self.rank, self.batches_yielded, self.position()))
        _resume_point(state, self.rank)  # refuses a state without this rank before any BYE
        if self._ended and self._next_epoch() is None:
            raise RuntimeError("load_state_dict: rank %d's run ended with epoch %s (epochs=%s)"
                               % (self.rank, self.epoch, self.end_epoch))
        self._disconnect()
        self._connect_leg(state)

    def as_dataset(self):
        """This loader as a ``torch.utils.data.IterableDataset`` (:class:`spindle_bridge.
        dataset.SpindleDataset`), for ``DataLoader(ds, batch_size=None)``."""
        from .dataset import SpindleDataset
        return SpindleDataset(self)

    def close(self):
        """Releases every batch (BYE) and disconnects. Views handed out become invalid."""
        self._disconnect()
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None

    def _disconnect(self):
        if self._sock is None or self._sock.fileno() < 0:
            return
        drop(self.last)
        try:
            if self._cuda is not None:
                self._cuda.synchronize()  # BYE releases every batch: nothing may still read them
            if not self._hand_back_taken():
                self._sock.sendall(p.frame(p.BYE))
        except (OSError, p.ProtocolError):
            pass
        finally:
            self._sock.close()
            if self._cuda is not None:
                self._cuda.close()
            if self._pages is not None:
                self._pages.close()
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:
                pass  # views still alive: the mapping goes when they do

    def _hand_back_taken(self):
        """output=: waits for the batch being taken ahead; if one was, releases the batches the
        trainer consumed and returns True: the connection then closes without BYE, so the
        feeder keeps that batch for the rank's next trainer (BYE would release it)."""
        if self._pending is None:
            return False
        pending, self._pending = self._pending, None
        try:
            taken = pending.result(self.timeout_s + 30.0) is not None
        except Exception:  # noqa: BLE001 (the connection is closed below either way)
            taken = False
        if not taken:
            return False
        self._prefetcher.submit(self._release_taken, 1).result(self.timeout_s)
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def merge_states(states):
    """Combines rank states (each from state_dict()) into one document for the checkpoint."""
    merged = copy.deepcopy(states[0])
    for r, s in enumerate(states):
        merged["batchesConsumed"][r] = s["batchesConsumed"][r]
    return merged


def _map_shared(path, size):
    """Maps the feeder's slab ``/proc/<feeder pid>/fd/<n>`` (an unlinked file that exists only
    while the feeder holds it) copy-on-write: the trainer reads the feeder's bytes, and a write
    into a batch (``images[0] = 1``, an in-place op) copies the page it touches into this
    process; the feeder's memory never changes. PrivatePages.discard drops those copies when
    the batch is released, so the slot shows the feeder's next batch again."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise p.ProtocolError("cannot open the feeder's shared memory %s (%s): the trainer must "
                              "run as the feeder's user, in its PID namespace, while the feeder "
                              "runs" % (path, e.strerror))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            raise p.ProtocolError("the feeder's shared memory %s is not a file of %d bytes (the "
                                  "feeder closed it?)" % (path, size))
        return mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
    finally:
        os.close(fd)


_ENV_ARGS = {"RANK": "rank", "WORLD_SIZE": "world_size", "SPINDLE_SOCKET": "socket_path"}


def _env_int(name):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError("Invalid %s: %r (must be an integer)" % (name, v)) from None


def _connect(path, timeout_s, deadline=None):
    """A socket connected to the feeder at ``path``, retrying with back-off (50 ms doubling to
    1 s) while nothing listens there yet (the feeder still starting), until ``deadline``
    (``time.monotonic()``; by default ``timeout_s`` from now)."""
    deadline = time.monotonic() + timeout_s if deadline is None else deadline
    pause = 0.05
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout_s + 30.0)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError) as e:
            sock.close()
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConnectionError("no Spindle feeder listening on %s within %.1f s (%s): "
                                      "start the feed job first, or check the socket path it "
                                      "printed" % (path, timeout_s, e.strerror)) from None
            time.sleep(min(pause, left))
            pause = min(2 * pause, 1.0)
        except BaseException:
            sock.close()
            raise


def _run_token(token, socket_path):
    """The run token: ``token`` if given, else ``SPINDLE_RUN_TOKEN``, without surrounding
    whitespace (the token file ends in a newline); refuses to go without."""
    token = token if token is not None else os.environ.get("SPINDLE_RUN_TOKEN")
    token = token.strip() if token else token
    if not token:
        raise ValueError("no run token for %s: pass token=... or set SPINDLE_RUN_TOKEN (the "
                         "feeder writes it to %s.token)" % (socket_path, socket_path))
    return token


_PLAN_FIELDS = ("format", "manifest.sha256", "seed", "epoch", "batchSize", "remainder",
               "shuffleWindow", "worldSize", "earlierLegs")


def _plan_identity(state):
    """The plan a loader state counts batches of, which HELLO states ("" without a state): one
    ``name=value`` line per field of _PLAN_FIELDS, every field but the current leg's
    ``batchesConsumed`` (PROTOCOL.md, "Plan identity"; the feeder derives it alike)."""
    if state is None:
        return ""
    manifest = state.get("manifest")
    legs = state.get("earlierLegs")

    def field(name):
        if name == "manifest.sha256":
            return _plan_value(manifest.get("sha256") if isinstance(manifest, dict) else None)
        if name == "earlierLegs":
            return ";".join(_plan_leg(leg) for leg in legs) if isinstance(legs, list) else ""
        return _plan_value(state.get(name))
    return "\n".join("%s=%s" % (name, field(name)) for name in _PLAN_FIELDS)


def _plan_leg(leg):
    leg = leg if isinstance(leg, dict) else {}
    consumed = leg.get("batchesConsumed")
    consumed = consumed if isinstance(consumed, list) else []
    return "%s:%s" % (_plan_value(leg.get("worldSize")), ",".join(map(_plan_value, consumed)))


def _plan_value(v):
    """A string as it is, an integer in decimal, anything else empty."""
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return ""


def _end_epoch(epochs):
    if epochs is None:
        return None
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError("Invalid epochs: %r (must be an integer > 0: the run's end epoch, "
                         "exclusive; SPINDLE_EPOCHS)" % (epochs,))
    return epochs


def _epoch_of(state):
    """The ``epoch`` of a loader state document; None without a state or an integer epoch."""
    epoch = state.get("epoch") if isinstance(state, dict) else None
    return epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None


def _resume_point(state, rank):
    if state is None:
        return -1
    consumed = state["batchesConsumed"]
    if not 0 <= rank < len(consumed):
        raise ValueError("Invalid rank: %d (the state has %d ranks)" % (rank, len(consumed)))
    return int(consumed[rank])
