"""A training script for the train tests that checkpoints with spindle_bridge.checkpoint: DDP
(gloo, CPU) ranks train a tiny linear model deterministically (seed 0, deterministic algorithms,
one thread), save a checkpoint every --every steps and at each epoch's end, and keep in the
checkpoint's extras the plan indices of the real rows (weight 1) of every step the model was
trained on (its lineage). At the end each rank writes OUT/final-rank-R.json: its model's parameter
bytes (hex), the lineage and its step count; every trainer process writes OUT/start-R-PID.json
(what checkpoint.load returned).

Faults (once per OUT directory, marked by a file): --kill-rank R --kill-step K --kill-at batch:
rank R kills itself with SIGKILL on receiving its K-th batch of the run (before the step);
--kill-at save: after its K-th step, instead of saving that step's checkpoint (the other ranks
save theirs).
"""
import argparse
import json
import os
import signal

import torch
import torch.distributed as dist
import torch.nn.functional as F

from spindle_bridge import SpindleLoader, checkpoint


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
    ap.add_argument("--checkpoints", required=True, help="folder of the ranks' checkpoints")
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--kill-rank", type=int, default=-1)
    ap.add_argument("--kill-step", type=int, default=-1)
    ap.add_argument("--kill-at", choices=("batch", "save"), default="batch")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8 * 8 * 3, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = SpindleLoader.from_env()
    path = os.path.join(a.checkpoints, "rank-%d.pt" % rank)
    extra = checkpoint.load(path, model, opt, loader)
    with open(os.path.join(a.out, "start-%d-%d.json" % (rank, os.getpid())), "w") as f:
        json.dump({"extra_step": None if extra is None else extra["step"],
                   "checkpoint": os.environ.get("SPINDLE_CHECKPOINT")}, f)
    step = extra["step"] if extra else 0
    lineage = extra["lineage"] if extra else []
    for epoch in loader.epochs():
        for batch in loader:
            if (rank == a.kill_rank and step + 1 == a.kill_step and a.kill_at == "batch"
                    and once(a.out, "killed")):
                os.kill(os.getpid(), signal.SIGKILL)
            x = batch.images.reshape(len(batch.labels), -1).float() / 255.0
            per_row = F.cross_entropy(model(x), batch.labels.remainder(10), reduction="none")
            loss = (per_row * batch.weights).sum() / batch.weights.sum().clamp(min=1.0)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            lineage.append([epoch, [int(i) for i, w in zip(batch.indices, batch.weights)
                                    if w == 1.0]])
            if step % a.every == 0:
                if (rank == a.kill_rank and step == a.kill_step and a.kill_at == "save"
                        and once(a.out, "killed")):
                    os.kill(os.getpid(), signal.SIGKILL)
                checkpoint.save(path, model, opt, loader, step=step, lineage=lineage)
        checkpoint.save(path, model, opt, loader, step=step, lineage=lineage)
    loader.close()
    params = b"".join(p.detach().numpy().tobytes() for p in model.module.parameters())
    with open(os.path.join(a.out, "final-rank-%d.json" % rank), "w") as f:
        json.dump({"model": params.hex(), "lineage": lineage, "steps": step}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
