"""A training script for the train tests: DDP (gloo, CPU) ranks that record, per step, the batch
they received (epoch, number, len(loader), indices, weights, the trainer's pid) to
OUT/rank-R.jsonl, after an all_reduce that keeps the ranks in lockstep, and their environment to
OUT/env-R-PID.json. It saves no checkpoint: a restart starts it from the run's start.

Faults (each at most once per OUT directory, marked by a file): --kill-rank R --kill-step K: rank R
kills itself with SIGKILL on receiving its K-th batch of the run (before the step, so the batch is
not recorded); --hang-rank R --hang-step K: rank R sleeps forever there instead; --resume-at K:
the first trainer process starts from a state that says K batches of its rank's leg were consumed
(not the state train gave it), so train's read-ahead from its own start is redirected.
"""
import argparse
import json
import os
import signal
import time

import torch
import torch.distributed as dist

from spindle_bridge import SpindleLoader

ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
       "SPINDLE_SOCKET", "SPINDLE_DEVICE", "SPINDLE_STATE", "SPINDLE_STATE_OUT", "SPINDLE_EPOCHS",
       "PYTHONPATH")


def once(out, name):
    """True the first time it is called with ``name`` for this OUT directory."""
    try:
        os.close(os.open(os.path.join(out, name), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--kill-rank", type=int, default=-1)
    ap.add_argument("--kill-step", type=int, default=-1)
    ap.add_argument("--hang-rank", type=int, default=-1)
    ap.add_argument("--hang-step", type=int, default=-1)
    ap.add_argument("--resume-at", type=int, default=-1)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with open(os.path.join(a.out, "env-%d-%d.json" % (rank, os.getpid())), "w") as f:
        json.dump({"env": {k: os.environ.get(k) for k in ENV}, "pid": os.getpid(),
                   "pgid": os.getpgid(0), "world": dist.get_world_size(),
                   "backend": dist.get_backend()}, f)
    if a.resume_at >= 0 and once(a.out, "resumed-at"):
        with open(os.environ["SPINDLE_STATE"]) as f:
            state = json.load(f)
        state["batchesConsumed"][rank] = a.resume_at
        loader = SpindleLoader.from_env(state=state)
    else:
        loader = SpindleLoader.from_env()
    steps = 0
    with open(os.path.join(a.out, "rank-%d.jsonl" % rank), "a") as rec:
        for epoch in loader.epochs():
            for batch in loader:
                steps += 1
                if rank == a.kill_rank and steps == a.kill_step and once(a.out, "killed"):
                    os.kill(os.getpid(), signal.SIGKILL)
                if rank == a.hang_rank and steps == a.hang_step and once(a.out, "hung"):
                    time.sleep(3600)
                t = torch.ones(1)
                dist.all_reduce(t)
                assert t.item() == dist.get_world_size()
                rec.write(json.dumps({"epoch": epoch, "batch": batch.number, "len": len(loader),
                                      "pid": os.getpid(),
                                      "indices": list(batch.indices),
                                      "weights": [float(w) for w in batch.weights]}) + "\n")
                rec.flush()
    loader.close()
    dist.destroy_process_group()
    print("rank %d done: %d steps" % (rank, steps))


if __name__ == "__main__":
    main()
