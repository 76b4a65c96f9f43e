"""What one ``next()`` of the Python client costs, apart from waiting for the feeder: a fake feeder
in another process serves ready batches of 64 x 224 x 224 x 3 uint8 from a shared-memory slab
(4 slots) at once, so the time a trainer spends in ``next()`` is the client's own (state file,
release, request and reply, views).

Usage: python3 loader-bench/trainers/client_next_bench.py [--batches 400] [--rounds 3]
           [--configs plain,state_out,...] [--touch] [--profile]

Configurations (each run --rounds times, alternating): plain (no state file), state_out (the
state file ``bin/spindle train`` has the client keep, SPINDLE_STATE_OUT), and, where the client
offers it, ``f32`` (output="float32-nchw": normalised float32 NCHW batches made by the client).
--state-dir: the state file's folder (default /tmp, where ``bin/spindle train`` puts it).
--touch reads one byte of every page of each batch in the step, as a model's first layer reads
them all, so page faults on a released slot's pages land in the step's time, reported too.
--profile prints cProfile's top functions of one state_out run. Prints one JSON object: per
configuration the median over rounds of microseconds per next() (and per step). A benchmark: it
reports, it asserts nothing.
"""
import argparse
import cProfile
import json
import multiprocessing
import os
import pstats
import socket
import statistics
import struct
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "loader-gpu", "python"))
from spindle_bridge import SpindleLoader  # noqa: E402
from spindle_bridge import protocol as p  # noqa: E402

TOKEN = "bench-token-0123456789"
ROWS, H, W, C, SLOTS = 64, 224, 224, 3, 4
IMAGE = ROWS * H * W * C
SLOT = (IMAGE + 8 * ROWS + 4095) // 4096 * 4096


def state(consumed):
    return {"format": "spindle-loader-state/1", "manifest": {"sha256": "ab" * 32}, "seed": 7,
            "epoch": 0, "batchSize": ROWS, "remainder": "DROP_LAST", "shuffleWindow": 16384,
            "worldSize": 1, "batchesConsumed": [consumed], "earlierLegs": []}


def batch_message(n):
    slot = (n % SLOTS) * SLOT
    return (struct.pack("<qiBB", n, ROWS, 0, 4) + struct.pack("<qqqq", ROWS, H, W, C)
            + struct.pack("<qqqBH", slot, IMAGE, slot + IMAGE, 0, 0)  # no extra fields
            + b"".join(struct.pack("<q", n * ROWS + i) for i in range(ROWS))
            + struct.pack("<%df" % ROWS, *([1.0] * ROWS))
            + b"".join(p.string("%06d" % (n * ROWS + i)) for i in range(ROWS)))


def serve(path, slab, batches, ready):
    """The fake feeder: one connection, ``batches`` ready batches, then END."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    ready.set()
    conn, _ = server.accept()
    messages = [p.frame(p.BATCH, batch_message(n)) for n in range(SLOTS)]
    with conn:
        p.read_frame(conn)
        conn.sendall(p.frame(p.WELCOME, struct.pack("<iiqB", 0, 1, 0, p.MEMORY_SHM)
                             + p.string(slab) + struct.pack("<qBiiii", SLOTS * SLOT, 0, H, W, C,
                                                            ROWS)
                             + p.string(json.dumps(state(0))) + struct.pack("<q", batches)))
        n = 0
        while True:
            try:
                t, payload = p.read_frame(conn)
            except ConnectionError:
                return
            if t == p.NEXT:
                if n == batches:
                    conn.sendall(p.frame(p.END))
                else:
                    # the batch number changes, the bytes need not: reuse the slot's message
                    m = messages[n % SLOTS]
                    conn.sendall(m[:p.HEADER.size] + struct.pack("<q", n) + m[p.HEADER.size + 8:])
                    n += 1
            elif t == p.BYE:
                return


def one_run(a, config, profile=False):
    folder = tempfile.mkdtemp(prefix="client-next-", dir="/dev/shm")
    path, slab = os.path.join(folder, "bridge.sock"), os.path.join(folder, "slab")
    with open(slab, "wb") as f:
        f.write(bytes(range(256)) * (SLOTS * SLOT // 256))
    ready = multiprocessing.Event()
    feeder = multiprocessing.Process(target=serve, args=(path, slab, a.batches, ready))
    feeder.start()
    ready.wait(10)
    work = tempfile.mkdtemp(prefix="client-next-state-", dir=a.state_dir)
    kw = {"state_out": os.path.join(work, "state.json")} if config != "plain" else {}
    if config == "f32":
        kw["output"], kw["mean"], kw["std"] = ("float32-nchw", [0.485, 0.456, 0.406],
                                               [0.229, 0.224, 0.225])
    loader = SpindleLoader(path, 0, 1, token=TOKEN, timeout_s=30, **kw)
    prof = cProfile.Profile() if profile else None
    next_s = step_s = 0.0
    n = 0
    it = iter(loader)
    if prof:
        prof.enable()
    while True:
        t = time.perf_counter()
        b = next(it, None)
        next_s += time.perf_counter() - t
        if b is None:
            break
        t = time.perf_counter()
        if a.touch:  # one byte per page: every page of the batch is read, little arithmetic
            int(b.images.reshape(-1)[::4096].sum())
        step_s += time.perf_counter() - t
        n += 1
    if prof:
        prof.disable()
    loader.close()
    feeder.join(10)
    for f in os.listdir(folder):
        os.unlink(os.path.join(folder, f))
    os.rmdir(folder)
    for f in os.listdir(work):
        os.unlink(os.path.join(work, f))
    os.rmdir(work)
    if prof:
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(18)
    return {"next_us": 1e6 * next_s / (n + 1), "step_us": 1e6 * step_s / max(n, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--configs", default="plain,state_out")
    ap.add_argument("--touch", action="store_true")
    ap.add_argument("--state-dir", default=tempfile.gettempdir(),
                    help="where the state file goes (default: the temporary folder, as "
                         "bin/spindle train's rank work folder)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--keep-pages", action="store_true",
                    help="(diagnosis) skip the client's madvise(MADV_DONTNEED) of a released "
                         "batch's pages, to see what it costs")
    a = ap.parse_args()
    configs = [c for c in a.configs.split(",") if c]
    if a.keep_pages:
        import spindle_bridge.client as client
        client._discard_private_pages = lambda mm, ranges: None
    runs = {c: [] for c in configs}
    for _ in range(a.rounds):
        for c in configs:
            runs[c].append(one_run(a, c))
    if a.profile:
        one_run(a, "state_out", profile=True)
    out = {"load_average": os.getloadavg(), "batches": a.batches, "touch": a.touch,
           "state_dir": a.state_dir,
           "batch": [ROWS, H, W, C]}
    for c, rs in runs.items():
        out[c] = {k: round(statistics.median(r[k] for r in rs), 1) for k in rs[0]}
        out[c]["next_us_by_round"] = [round(r["next_us"], 1) for r in rs]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
