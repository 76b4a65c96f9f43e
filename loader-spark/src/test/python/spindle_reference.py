#!/usr/bin/python3
"""Reference implementation of Spindle's image transform chains with Pillow + torchvision.

Spindle's spec strings ("resize(256),center_crop(224),normalize") are mapped to the torchvision
transforms a PyTorch user would write; the result is returned in one of Spindle's output modes
(uint8-hwc, uint8-chw, float32-chw, float16-chw) as raw little-endian bytes. Random operations
are not reproducible across implementations, so only hflip(0) and hflip(1) are accepted here.

CLI: spindle_reference.py --case "MODE SPEC" [--case ...] [--exif] OUT_DIR IMAGE...
writes OUT_DIR/<case number>/<image file name>.ref for every case and IMAGE. Needs Debian's python3-pil, python3-numpy,
python3-torch and python3-torchvision.
"""
import argparse
import os
import re

import numpy as np
from PIL import Image, ImageOps
import torch
import torchvision.transforms as T
import torchvision.transforms.functional as F

FILTERS = {"bilinear": T.InterpolationMode.BILINEAR, "bicubic": T.InterpolationMode.BICUBIC,
           "box": T.InterpolationMode.BOX}
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


def split_ops(spec):
    parts, depth, cur = [], 0, ""
    for c in spec:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    return parts


def parse_op(text):
    m = re.fullmatch(r"([a-z_]+)(?:\((.*)\))?", text)
    if not m:
        raise ValueError("bad op " + text)
    name, inner = m.group(1), m.group(2) or ""
    pos, named = [], {}
    for arg in [a.strip() for a in inner.split(",") if a.strip()]:
        if "=" in arg:
            k, v = arg.split("=", 1)
            named[k.strip()] = v.strip()
        else:
            pos.append(arg)
    return name, pos, named


def compose(spec):
    """Returns (list of PIL-level callables, normalize (mean, std) or None)."""
    steps, norm = [], None
    for text in split_ops(spec):
        name, pos, named = parse_op(text)
        interp = FILTERS[named.get("filter", "bilinear")]
        if name == "resize":
            size = int(pos[0]) if len(pos) == 1 else (int(pos[0]), int(pos[1]))
            steps.append(T.Resize(size, interpolation=interp))
        elif name == "center_crop":
            steps.append(T.CenterCrop((int(pos[0]), int(pos[-1]))))
        elif name == "crop":
            t, l, h, w = (int(p) for p in pos)
            steps.append(lambda img, t=t, l=l, h=h, w=w: F.crop(img, t, l, h, w))
        elif name == "hflip":
            p = float(pos[0]) if pos else 0.5
            if p not in (0.0, 1.0):
                raise ValueError("only hflip(0) / hflip(1) are deterministic")
            if p == 1.0:
                steps.append(F.hflip)
        elif name == "normalize":
            mean = [float(x) for x in named["mean"].split(":")] if "mean" in named else IMAGENET_MEAN
            std = [float(x) for x in named["std"].split(":")] if "std" in named else IMAGENET_STD
            norm = (mean, std)
        else:
            raise ValueError("no deterministic reference for " + name)
    return steps, norm


def load(path, exif):
    """Opens an image the way torchvision's ImageFolder does (optionally EXIF-transposed)."""
    with open(path, "rb") as f:
        img = Image.open(f)
        img.load()
    if exif:
        img = ImageOps.exif_transpose(img)
    return img.convert("RGB")


def reference(img, spec, output):
    steps, norm = compose(spec)
    for step in steps:
        img = step(img)
    if output in ("uint8-hwc", "uint8-chw"):
        arr = np.asarray(img, dtype=np.uint8)
        return (arr if output == "uint8-hwc" else arr.transpose(2, 0, 1)).tobytes()
    t = F.to_tensor(img)
    if norm:
        t = F.normalize(t, norm[0], norm[1])
    t = t.contiguous()
    if output == "float16-chw":
        t = t.half()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append", required=True, help='"OUTPUT_MODE SPEC"')
    ap.add_argument("--exif", action="store_true")
    ap.add_argument("out_dir")
    ap.add_argument("images", nargs="+")
    a = ap.parse_args()
    torch.set_num_threads(1)
    images = [(path, load(path, a.exif)) for path in a.images]
    for i, case in enumerate(a.case):
        output, spec = case.split(" ", 1)
        out = os.path.join(a.out_dir, str(i))
        os.makedirs(out, exist_ok=True)
        for path, img in images:
            with open(os.path.join(out, os.path.basename(path) + ".ref"), "wb") as f:
                f.write(reference(img, spec, output))


if __name__ == "__main__":
    main()
