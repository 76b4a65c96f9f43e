#!/usr/bin/env python3
"""Writes synthetic photographs as WebDataset tar shards: smooth random colour fields with grain,
640x408 JPEG (quality 90, about the size of bin/make-photo-corpus's photos), each with a .cls
label. For machines without the photos bin/make-photo-corpus crops (a GPU machine: bin/gpu-check's
train check) and for bin/gpu-bundle's class list run. Deterministic for a seed; one process per
shard, up to the cores.

Usage: bin/lib/synthetic_tars.py --out DIR [--images 2048] [--per-shard 256] [--classes 10]
                                 [--seed 0] [--files]
--files: the same photographs as plain NNNNNN.jpg files in DIR (no tars, no labels), for readers of
a folder of images (bin/bench-vs-torch's DataLoader and `bench images`: bin/gpu-scaling-check).
Needs numpy and Pillow.
"""
import argparse
import io
import multiprocessing
import os
import tarfile

import numpy as np
from PIL import Image


def photo(rng, width=640, height=408):
    """A smooth colour field (a 10x7 grid of random colours, resized bicubically) with grain."""
    coarse = rng.integers(0, 256, size=(7, 10, 3), dtype=np.uint8)
    field = np.asarray(Image.fromarray(coarse).resize((width, height), Image.BICUBIC), np.int16)
    grain = rng.integers(-12, 13, size=field.shape, dtype=np.int16)
    return Image.fromarray(np.clip(field + grain, 0, 255).astype(np.uint8))


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--per-shard", type=int, default=256)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    shards = (a.images + a.per_shard - 1) // a.per_shard
    jobs = [(a, s) for s in range(shards)]
    with multiprocessing.Pool(min(shards, os.cpu_count() or 1)) as pool:
        pool.starmap(write_shard, jobs)
    print("synthetic_tars: %d images %s under %s"
          % (a.images, "as files" if a.files else "in %d shards" % shards, a.out))


def write_shard(a, s):
    """Shard ``s``: its own random stream (seed, shard), so any number of processes write the
    same bytes."""
    rng = np.random.default_rng([a.seed, s])
    if a.files:
        for i in range(s * a.per_shard, min(a.images, (s + 1) * a.per_shard)):
            path = os.path.join(a.out, "%06d.jpg" % i)
            photo(rng).save(path + ".tmp", "JPEG", quality=90)
            os.replace(path + ".tmp", path)
            rng.integers(0, a.classes)  # the label's draw: the same photographs as the tars
        return
    path = os.path.join(a.out, "shard-%04d.tar" % s)
    with tarfile.open(path + ".tmp", "w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(s * a.per_shard, min(a.images, (s + 1) * a.per_shard)):
            buf = io.BytesIO()
            photo(rng).save(buf, "JPEG", quality=90)
            key = "%06d" % i
            add(tar, key + ".jpg", buf.getvalue())
            add(tar, key + ".cls", str(int(rng.integers(0, a.classes))).encode())
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
