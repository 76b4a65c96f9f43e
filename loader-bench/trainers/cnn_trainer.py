"""A small CNN trained on CPU from either loader, for comparing what a real training step gets
from Spindle and from PyTorch's DataLoader on the same cores (issue 30: steps/s with a small CNN
step).

  bin/spindle train ... -- cnn_trainer.py --loader spindle          (SpindleLoader.from_env)
  python3 cnn_trainer.py --loader dataloader --files DIR --workers 2 --epochs 4

Both feed the same model the same thing: batches of 64 float32 NCHW images, ImageNet-normalised,
of resize(256) + center_crop(224) (the eval pipeline): Spindle's client converts its uint8 batch
(``output="float32-nchw"``), the DataLoader's workers run torchvision's
``Resize, CenterCrop, ToTensor, Normalize`` on PIL images. The model (``SmallCnn``: four strided
convolutions with batch norm, 24..128 channels, global pooling, a linear head of 10 classes)
takes one SGD step per batch on labels derived from the batch (any label does for timing), with
torch's default intra-op threads. Seeds fixed, so the work per step is the same for both loaders.

Prints one line ``SPINDLE_CNN_TRAINER {json}`` at the end: per epoch the steps, the images, the
wall time, the seconds spent waiting for the loader and in the step; ``steps_per_s`` over the
epochs after the first (the first holds the model's and the loader's warm-up), and the last
loss. A benchmark's trainer: it reports, it asserts nothing.
"""
import argparse
import json
import os
import time

START = time.time()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from timing import timed  # noqa: E402

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


class SmallCnn(nn.Module):
    """A stem convolution of stride 4 (7x7, 24 channels), then three strided 3x3 convolutions
    (48, 96, 128 channels), each with batch norm and ReLU, global pooling and a linear head: some
    33 M multiply-adds per 224x224 image, a model whose step on 2 cores costs about what decoding
    its batch with a DataLoader does."""

    def __init__(self, classes=10):
        super().__init__()
        layers, width = [], 3
        for out, k, stride in ((24, 7, 4), (48, 3, 2), (96, 3, 2), (128, 3, 2)):
            layers += [nn.Conv2d(width, out, k, stride=stride, padding=k // 2, bias=False),
                       nn.BatchNorm2d(out), nn.ReLU(inplace=True)]
            width = out
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


def spindle_batches(loader):
    """Yields (epoch, iterator of float32 NCHW batches) from the Spindle loader of this rank."""
    for epoch in loader.epochs():
        yield epoch, (b.images for b in loader)


def dataloader_batches(files_dir, workers, epochs, batch_size):
    """Yields (epoch, iterator of float32 NCHW batches) from a DataLoader over the photos."""
    import torchvision.transforms as T
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(files_dir) for f in fs
                   if f.lower().endswith((".jpg", ".jpeg", ".png")))
    transform = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])

    class Photos(Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            with open(files[i], "rb") as f:
                return transform(Image.open(f).convert("RGB"))

    loader = DataLoader(Photos(), batch_size=batch_size, shuffle=True, num_workers=workers,
                        drop_last=True, persistent_workers=workers > 0)
    for epoch in range(epochs):
        yield epoch, iter(loader)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loader", choices=("spindle", "dataloader"), required=True)
    ap.add_argument("--files", help="the photos (--loader dataloader)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = SmallCnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = None
    if a.loader == "spindle":
        import torch.distributed as dist
        from spindle_bridge import SpindleLoader

        dist.init_process_group("gloo")
        loader = SpindleLoader.from_env(output="float32-nchw", mean=MEAN, std=STD)
        source = spindle_batches(loader)
    else:
        source = dataloader_batches(a.files, a.workers, a.epochs, a.batch_size)
    epochs, first, loss = [], None, None
    for epoch, batches in source:
        e = {"epoch": epoch, "steps": 0, "images": 0, "wait_s": 0.0, "step_s": 0.0,
             "start": time.time()}
        for x in timed(batches, e, "wait_s"):
            if first is None:
                first = time.time()
            t = time.perf_counter()
            y = (x[:, 0, 0, 0] > 0).long()  # a label from the batch: the work is what counts
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            e["step_s"] += time.perf_counter() - t
            e["steps"] += 1
            e["images"] += x.shape[0]
        e["end"] = time.time()
        epochs.append(e)
    if loader is not None:  # closed before the interpreter exits, as is the process group
        loader.close()
        dist.destroy_process_group()
    steady = epochs[1:] or epochs
    steps = sum(e["steps"] for e in steady)
    span = steady[-1]["end"] - steady[0]["start"]
    print("SPINDLE_CNN_TRAINER " + json.dumps({
        "loader": a.loader, "start": START, "first_batch": first, "epochs": epochs,
        "steps_per_s": steps / span if span > 0 else 0.0,
        "images_per_s": sum(e["images"] for e in steady) / span if span > 0 else 0.0,
        "wait_fraction": sum(e["wait_s"] for e in steady) / span if span > 0 else 0.0,
        "loss": float(loss) if loss is not None else None,
        "torch_threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
