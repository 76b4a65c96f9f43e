"""Fashion-MNIST trainer for `spindle example fashion-mnist`: one DDP rank (gloo, CPU).

Receives its training batches from the co-located Spindle feeder through the bridge (uint8
[N, 28, 28, 3] views of shared memory), trains a small CNN, and on rank 0 evaluates on the test
set read from Debian's IDX files. Writes a JSON report: train_samples, wait_s (time blocked on
the loader), step_s (forward/backward/optimizer), test_accuracy (rank 0).
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from spindle_bridge import SpindleLoader

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
    return np.frombuffer(data, dtype=np.uint8, offset=header)[:limit] if header == 8 else \
        np.frombuffer(data, dtype=np.uint8, offset=header).reshape(-1, 28, 28)[:limit]


def evaluate(model, test_dir, limit):
    images = read_idx(test_dir + "/t10k-images-idx3-ubyte.gz", limit, 16)
    labels = read_idx(test_dir + "/t10k-labels-idx1-ubyte.gz", limit, 8)
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
    a = argparse.ArgumentParser()
    a.add_argument("--socket", required=True)
    a.add_argument("--rank", type=int, required=True)
    a.add_argument("--world-size", type=int, required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--test-dir", required=True)
    a.add_argument("--test-limit", type=int, default=10000)
    a.add_argument("--report", required=True)
    a.add_argument("--lr", type=float, default=2e-3)
    args = a.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.port,
                            rank=args.rank, world_size=args.world_size)
    model = nn.parallel.DistributedDataParallel(SmallCnn())
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    started = time.perf_counter()
    step_s, samples, batches, loss = 0.0, 0, 0, None
    with SpindleLoader(args.socket, args.rank, args.world_size, timeout_s=600) as loader:
        for batch in loader:
            images, labels, weights = batch.images, batch.labels, batch.weights
            t = time.perf_counter()
            x = to_input(images)
            # weights: 0 for padding and stand-ins of quarantined samples (whose label may be -1)
            per_row = F.cross_entropy(model(x), labels, ignore_index=-1, reduction="none")
            loss = (per_row * weights).sum() / weights.sum().clamp(min=1.0)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step_s += time.perf_counter() - t
            samples += int(labels.shape[0])
            batches += 1
        wait_s = loader.wait_s
        state = loader.state_dict()
    wall_s = time.perf_counter() - started
    report = {"rank": args.rank, "train_samples": samples, "batches": batches,
              "wait_s": wait_s, "step_s": step_s, "wall_s": wall_s, "final_loss": None if loss is None else float(loss),
              "loader_state": state}
    if args.rank == 0:
        report["test_accuracy"], report["test_samples"] = evaluate(model.module, args.test_dir,
                                                                   args.test_limit)
    dist.barrier()
    dist.destroy_process_group()
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
