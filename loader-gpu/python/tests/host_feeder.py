"""A fake feeder on host memory for the client's tests: serves legs (epochs) in order, one
connection per leg, as ``bin/spindle train``'s feeder does, and logs what the trainer sent."""
import json
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import protocol as p  # noqa: E402

TOKEN = "host-token-0123456789"
ROWS, SLOT = 2, 64  # a batch: uint8 [2, 2, 2, 1] at slot * 64, int64 labels 32 bytes further


def leg_state(epoch, consumed=0):
    """The loader state a feeder serving ``epoch`` to one rank states in WELCOME."""
    return {"format": "spindle-loader-state/1", "manifest": {"sha256": "ab" * 32},
            "seed": 7, "epoch": epoch, "batchSize": ROWS, "remainder": "DROP_LAST",
            "shuffleWindow": 8, "worldSize": 1, "batchesConsumed": [consumed],
            "earlierLegs": []}


class HostFeeder(threading.Thread):
    """Serves rank 0 of 1: ``legs`` is a list of (epoch, batches); each connection gets the
    first leg not yet served to its END (from the HELLO's resume point, else 0), then the next
    connection the next leg. ``log`` records ("hello", resume, plan), ("next", state file
    content or None), ("release", n), ("bye",). ``state_file``: the trainer's SPINDLE_STATE_OUT,
    read at every NEXT. ``slab`` (bytes) and ``batch`` (a function of the batch number giving
    BATCH's payload) replace the default slab and batches; ``image`` is the (height, width,
    channels) WELCOME states ((0, 0, 0): a feeder without images)."""

    def __init__(self, folder, legs, state_file=None, slab=None, batch=None, image=(2, 2, 1)):
        super().__init__(daemon=True)
        self.image = image
        self.legs, self.state_file = list(legs), state_file
        self.batch = globals()["batch"] if batch is None else batch
        self.path = os.path.join(folder, "bridge.sock")
        self.slab = os.path.join(folder, "slab")
        self.slab_bytes = bytes(i % 251 for i in range(4 * SLOT)) if slab is None else slab
        with open(self.slab, "wb") as f:
            f.write(self.slab_bytes)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(4)
        self.log, self.error = [], None

    def run(self):
        try:
            while self.legs:
                conn, _ = self.server.accept()
                with conn:
                    if self.serve(conn, *self.legs[0]):
                        self.legs.pop(0)
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.error = e
        finally:
            self.server.close()

    def serve(self, conn, epoch, batches):
        """One connection; True when it got the leg's END."""
        t, payload = p.read_frame(conn)
        r = p.Reader(payload)
        r.string(), r.i32(), r.i32()
        resume, _, plan = r.i64(), r.string(), r.string()
        self.log.append(("hello", resume, plan))
        n = max(resume, 0)
        conn.sendall(p.frame(p.WELCOME, struct.pack("<iiqB", 0, 1, n, p.MEMORY_SHM)
                             + p.string(self.slab) + struct.pack("<qBiiii", len(self.slab_bytes),
                                                                 0, *self.image, ROWS)
                             + p.string(json.dumps(leg_state(epoch, n)))
                             + struct.pack("<q", batches)))
        ended = False
        while True:
            try:
                t, payload = p.read_frame(conn)
            except ConnectionError:
                return ended
            if t == p.NEXT:
                self.log.append(("next", self.read_state()))
                if n == batches:
                    conn.sendall(p.frame(p.END))
                    ended = True
                else:
                    conn.sendall(p.frame(p.BATCH, self.batch(n)))
                    n += 1
            elif t == p.RELEASE:
                self.log.append(("release", struct.unpack("<q", payload)[0]))
            elif t == p.BYE:
                self.log.append(("bye",))
                return ended

    def read_state(self):
        if self.state_file is None or not os.path.exists(self.state_file):
            return None
        with open(self.state_file, encoding="utf-8") as f:
            return json.load(f)

    def of(self, kind):
        return [e[1:] for e in self.log if e[0] == kind]


def batch(n):
    slot = (n % 4) * SLOT
    return (struct.pack("<qiBB", n, ROWS, 0, 4) + struct.pack("<qqqq", ROWS, 2, 2, 1)
            + struct.pack("<qqqBH", slot, 8, slot + 32, 0, 0)
            + struct.pack("<qq", 10 * n, 10 * n + 1)
            + struct.pack("<ff", 1.0, 0.0) + p.string("a%d" % n) + p.string("b%d" % n))
