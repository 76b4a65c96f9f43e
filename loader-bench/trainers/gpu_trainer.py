"""A small torchvision model trained on the GPU from Spindle's feeder, as bin/gpu-check's train
check runs it: `bin/spindle train --device cuda ... -- gpu_trainer.py [--model resnet18]`.

ResNet-18 (no pretrained weights, 10 classes) on the loader's device, SGD with momentum, one step
per batch; the uint8 NHWC batch is converted to normalised float32 NCHW on the GPU (ImageNet
mean/std), labels -100 (stand-ins, pads) are ignored by the loss. On a host feeder the model runs
on cuda:0 when there is one (with --pin the loader's pin_memory=True: each batch copied once into
pinned memory, then to the GPU with non_blocking=True; the copies' rate is timed with CUDA
events), else on the CPU, for trying the script anywhere.

Prints one line ``SPINDLE_GPU_TRAINER {json}`` per rank at the end: the device, per epoch the
images, seconds, the loader's wait (inside ``next()``) and the mean loss; over the epochs after
the first the images/s, the wait's share of the wall time and the GPU's utilisation (NVML,
sampled every 100 ms; null without nvidia-ml-py); from a host feeder to a GPU, whether batches
were pinned and the host-to-device copies' GB/s. A benchmark's trainer: it reports, it asserts
nothing.
"""
import argparse
import json
import threading
import time

START = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402
from spindle_bridge import SpindleLoader  # noqa: E402
from timing import timed  # noqa: E402

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def sample_utilisation(index, stop, samples):
    """GPU utilisation (%) every 100 ms until ``stop``, as (time, percent); nothing without NVML."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:  # noqa: BLE001 (no NVML: the report says null)
        return
    while not stop.is_set():
        samples.append((time.time(), pynvml.nvmlDeviceGetUtilizationRates(handle).gpu))
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--pin", action="store_true", help="the loader's pin_memory=True")
    a = ap.parse_args()
    imported = time.time()
    dist.init_process_group("gloo")
    loader = SpindleLoader.from_env(pin_memory=a.pin)
    if loader.device.startswith("cuda"):
        device = torch.device(loader.device)
    else:
        device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    copies, copied = [], 0  # (start, end) CUDA events of host-to-device copies, their bytes
    model = getattr(torchvision.models, a.model)(num_classes=10).to(device)
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255
    samples, stop = [], threading.Event()
    sampler = None
    if device.type == "cuda":
        sampler = threading.Thread(target=sample_utilisation, daemon=True,
                                   args=(device.index or 0, stop, samples))
        sampler.start()
    epochs, first = [], None
    for epoch in loader.epochs():
        e = {"epoch": epoch, "images": 0, "wait_s": 0.0, "start": time.time(), "loss": 0.0,
             "batches": 0}
        for batch in timed(iter(loader), e, "wait_s"):
            if first is None:
                first = time.time()
            host = batch.images.device.type == "cpu" and device.type == "cuda"
            if host:
                copies.append((torch.cuda.Event(enable_timing=True),
                               torch.cuda.Event(enable_timing=True)))
                copies[-1][0].record()
            x = batch.images.to(device, non_blocking=True)
            if host:
                copies[-1][1].record()
                copied += batch.images.numel()
            x = x.permute(0, 3, 1, 2).float()
            x = x.sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            y = batch.labels.to(device, non_blocking=True).long()
            loss = F.cross_entropy(model(x), y)  # ignore_index -100: stand-ins and pads
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            e["loss"] += float(loss.detach())  # one sync per step: the step is done when timed
            e["batches"] += 1
            e["images"] += int(batch.weights.sum())
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        e["end"] = time.time()
        e["loss"] /= max(1, e["batches"])
        epochs.append(e)
    stop.set()
    loader.close()
    steady = epochs[1:] or epochs
    wall = sum(e["end"] - e["start"] for e in steady)
    util = [u for t, u in samples if steady[0]["start"] <= t <= steady[-1]["end"]]
    print("SPINDLE_GPU_TRAINER " + json.dumps({
        "rank": dist.get_rank(), "device": str(device), "model": a.model,
        "import_s": imported - START, "first_batch_s": None if first is None else first - START,
        "epochs": epochs,
        "steady_images_per_s": sum(e["images"] for e in steady) / wall if wall > 0 else None,
        "steady_wait_share": sum(e["wait_s"] for e in steady) / wall if wall > 0 else None,
        "trainer_wait_s": loader.wait_s,
        "gpu_utilisation_mean": sum(util) / len(util) if util else None,
        "gpu_utilisation_samples": len(util), "pinned": loader.pinned,
        "h2d_bytes": copied, "h2d_gbps": h2d_gbps(copies, copied)}), flush=True)


def h2d_gbps(copies, copied):
    """The host-to-device copies' bytes over their summed time (CUDA events), or None."""
    if not copies:
        return None
    torch.cuda.synchronize()
    seconds = sum(start.elapsed_time(end) for start, end in copies) / 1000
    return copied / seconds / 1e9 if seconds > 0 else None


if __name__ == "__main__":
    main()
