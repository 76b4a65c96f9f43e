"""A trainer whose step does nothing (or only the input conversion a model needs), for measuring
what a trainer sees of Spindle's throughput: `bin/spindle train ... -- noop_trainer.py [--step
none|normalize] [--output uint8|float32-nchw]`, as `bin/bench-train-gap` runs it.

--step none: the step touches nothing (one byte of the batch, so the view is real).
--step normalize: the step converts the uint8 NHWC batch into the DataLoader's normalised float32
NCHW (ImageNet mean/std) on the training thread, as a trainer fed uint8 must.
--output float32-nchw: asks the loader for float32 NCHW normalised batches (the client's
``output=``), so the step has nothing left to do.

Prints one line ``SPINDLE_NOOP_TRAINER {json}`` per rank at the end: the import time, the wall
clock (``time.time()``) of the first batch and of each epoch's end, per epoch the images, the
seconds spent in the loader's ``next()`` (request, wait, views) and in the step, and the gap
between an epoch's END and the next epoch's first batch (the reconnect). A benchmark's trainer:
it reports, it asserts nothing.
"""
import argparse
import json
import time

START = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from spindle_bridge import SpindleLoader  # noqa: E402
from timing import timed  # noqa: E402

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", choices=("none", "normalize"), default="none")
    ap.add_argument("--output", default="uint8")
    a = ap.parse_args()
    imported = time.time()
    dist.init_process_group("gloo")
    kw = {} if a.output == "uint8" else {"output": a.output, "mean": MEAN, "std": STD}
    loader = SpindleLoader.from_env(**kw)
    mean = torch.tensor(MEAN).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD).view(1, 3, 1, 1) * 255
    epochs, first, touched = [], None, 0
    for epoch in loader.epochs():
        e = {"epoch": epoch, "images": 0, "next_s": 0.0, "step_s": 0.0, "start": time.time()}
        for batch in timed(iter(loader), e, "next_s"):
            images = batch.images
            if first is None:
                first = time.time()
            if "first" not in e:
                e["first"] = time.time()
            t = time.perf_counter()
            if a.step == "normalize":
                images = images.permute(0, 3, 1, 2).float().sub_(mean).div_(std)
            touched += int(images.reshape(-1)[0] != 0)
            e["step_s"] += time.perf_counter() - t
            e["images"] += int(batch.weights.sum())
        e["end"] = time.time()
        epochs.append(e)
    loader.close()
    print("SPINDLE_NOOP_TRAINER " + json.dumps({
        "rank": dist.get_rank(), "start": START, "import_s": imported - START,
        "first_batch": first, "wait_s": loader.wait_s, "step": a.step, "output": a.output,
        "epochs": epochs, "touched": touched}), flush=True)


if __name__ == "__main__":
    main()
