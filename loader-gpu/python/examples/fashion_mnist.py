"""Fashion-MNIST trainer: an ordinary `spindle train` script (one DDP rank, gloo, CPU).

`bin/spindle example fashion-mnist` imports the data and runs this script with `train`; any
`bin/spindle train --input SHARDS --size 28 ... -- fashion_mnist.py --test-dir DIR --checkpoint-dir
CKPT` runs it too.
Every rank trains a small CNN on the batches its feeder serves (uint8 [N, 28, 28, 3] views of
shared memory; rows with weight 0 are padding or stand-ins of quarantined samples and add no
loss); rank 0 then evaluates on the test set read from Debian's IDX files. Each rank keeps a
checkpoint (model, optimizer and the loader's state together: spindle_bridge.checkpoint) in
`--checkpoint-dir` every `--checkpoint-every` steps and at each epoch's end, and resumes from
the one `train` chooses after a failure. Each rank writes `rank-R.json` to `--report-dir`
(train_samples, batches, step_s, final_loss, over the steps its final model was trained on; rank
0 also test_accuracy, test_samples) and rank 0 prints the accuracy.
"""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from spindle_bridge import SpindleLoader, checkpoint

MEAN, STD = 0.2860, 0.3530


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def to_input(images_u8_hwc):
    """uint8 [N, 28, 28, 3] (gray replicated by the decoder) -> normalised float [N, 1, 28, 28]."""
    x = images_u8_hwc[..., 0].to(torch.float32).div_(255.0)
    return ((x - MEAN) / STD).unsqueeze(1)


def read_idx(path, limit, header):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if header == 8:
        return np.frombuffer(data, dtype=np.uint8, offset=header)[:limit]
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(-1, 28, 28)[:limit]


def evaluate(model, test_dir, limit):
    images = read_idx(os.path.join(test_dir, "t10k-images-idx3-ubyte.gz"), limit, 16)
    labels = read_idx(os.path.join(test_dir, "t10k-labels-idx1-ubyte.gz"), limit, 8)
    correct = 0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(labels), 1000):
            x = torch.from_numpy(images[i:i + 1000].astype(np.float32) / 255.0)
            x = ((x - MEAN) / STD).unsqueeze(1)
            pred = model(x).argmax(1).numpy()
            correct += int((pred == labels[i:i + 1000]).sum())
    return correct / len(labels), len(labels)


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--test-dir", default="/usr/share/datasets/fashion-mnist",
                   help="where t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz are")
    a.add_argument("--test-limit", type=int, default=10000)
    a.add_argument("--report-dir", help="write rank-R.json here")
    a.add_argument("--checkpoint-dir", required=True,
                   help="where each rank keeps its checkpoint, rank-R.pt (a folder every node "
                        "can read: a restarted rank may run on another)")
    a.add_argument("--checkpoint-every", type=int, default=20, help="steps between checkpoints")
    a.add_argument("--lr", type=float, default=2e-3)
    args = a.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo")  # RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: set by train
    rank = dist.get_rank()
    model = nn.parallel.DistributedDataParallel(SmallCnn())
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    path = os.path.join(args.checkpoint_dir, "rank-%d.pt" % rank)
    with SpindleLoader.from_env() as loader:
        done = checkpoint.load(path, model, opt, loader) or {}  # {} on a first start
        step_s, samples, batches = (done.get("step_s", 0.0), done.get("samples", 0),
                                    done.get("batches", 0))
        loss = None
        for epoch in loader.epochs():
            for batch in loader:
                t = time.perf_counter()
                x = to_input(batch.images)
                # padding and stand-ins of quarantined samples: label -100 (cross_entropy's
                # ignore_index, a per-row loss of 0) and weight 0
                per_row = F.cross_entropy(model(x), batch.labels, reduction="none")
                loss = (per_row * batch.weights).sum() / batch.weights.sum().clamp(min=1.0)
                opt.zero_grad()
                loss.backward()
                opt.step()
                step_s += time.perf_counter() - t
                samples += int(batch.weights.sum())
                batches += 1
                if batches % args.checkpoint_every == 0:
                    checkpoint.save(path, model, opt, loader, step_s=step_s, samples=samples,
                                    batches=batches)
            checkpoint.save(path, model, opt, loader, step_s=step_s, samples=samples,
                            batches=batches)
    report = {"rank": rank, "train_samples": samples, "batches": batches, "step_s": step_s,
              "final_loss": None if loss is None else float(loss)}
    if rank == 0:
        report["test_accuracy"], report["test_samples"] = evaluate(model.module, args.test_dir,
                                                                   args.test_limit)
        print("test accuracy %.4f on %d images" % (report["test_accuracy"],
                                                   report["test_samples"]))
    dist.barrier()
    dist.destroy_process_group()
    if args.report_dir:
        with open(os.path.join(args.report_dir, "rank-%d.json" % rank), "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
