#!/usr/bin/python3
"""Writes small synthetic test images and what Pillow + torchvision make of them.

Reference side of ImageTransformSuite: for every image it writes NAME.<ext> (the encoded input)
and NAME.s<SIZE>.rgb (raw uint8 RGB HWC bytes of torchvision's Resize(SIZE) + CenterCrop(SIZE) on
the image opened the way torchvision's ImageFolder opens it: PIL, convert("RGB")).
Deterministic: the same files on every run. Needs Debian's python3-pil, python3-numpy,
python3-torchvision. Usage: make_golden.py OUT_DIR
"""
import io
import os
import sys

import numpy as np
from PIL import Image
import torchvision.transforms as T


def gradient(w, h):
    x = np.linspace(0, 255, w)[None, :].repeat(h, 0)
    y = np.linspace(0, 255, h)[:, None].repeat(w, 1)
    return np.stack([x, y, 255 - (x + y) / 2], -1).round().astype(np.uint8)


def checker(w, h, cell):
    yy, xx = np.mgrid[0:h, 0:w]
    v = (((xx // cell) + (yy // cell)) % 2 * 255).astype(np.uint8)
    return np.stack([v, 255 - v, v // 2], -1)


def noise(w, h, seed):
    rng = np.random.RandomState(seed)
    base = gradient(w, h).astype(np.int32)
    return np.clip(base + rng.randint(-40, 41, (h, w, 3)), 0, 255).astype(np.uint8)


def save(img, fmt, **kw):
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def cases():
    rgb = Image.fromarray
    yield "gradient_rgb.png", save(rgb(gradient(97, 61)), "PNG"), [32, 61, 80]
    yield "checker1_rgb.png", save(rgb(checker(64, 48, 1)), "PNG"), [24]
    yield "checker3_rgb.png", save(rgb(checker(90, 75, 3)), "PNG"), [20, 75]
    yield "noise_rgb.jpg", save(rgb(noise(120, 80, 1)), "JPEG", quality=90), [40, 100]
    yield "noise_420.jpg", save(rgb(noise(101, 67, 2)), "JPEG", quality=75, subsampling=2), [33]
    yield "noise_prog.jpg", save(rgb(noise(88, 131, 3)), "JPEG", quality=85,
                                 progressive=True), [48]
    gray = Image.fromarray(noise(50, 70, 4)[:, :, 0])
    yield "gray.jpg", save(gray, "JPEG", quality=90), [30]
    yield "gray.png", save(gray, "PNG"), [30]
    la = Image.merge("LA", [gray, Image.fromarray(checker(50, 70, 5)[:, :, 0])])
    yield "gray_alpha.png", save(la, "PNG"), [25]
    rgba = Image.fromarray(np.dstack([noise(77, 40, 5), checker(77, 40, 4)[:, :, 0]]), "RGBA")
    yield "rgba.png", save(rgba, "PNG"), [36]
    pal = rgb(noise(60, 45, 6)).convert("P", palette=Image.ADAPTIVE, colors=16)
    yield "palette.png", save(pal, "PNG"), [20]
    yield "one_pixel.png", save(rgb(np.array([[[200, 100, 50]]], np.uint8)), "PNG"), [1, 8]
    yield "small_up.png", save(rgb(noise(10, 7, 7)), "PNG"), [16]
    yield "tall.png", save(rgb(noise(3, 90, 8)), "PNG"), [5]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, data, sizes in cases():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        img = Image.open(io.BytesIO(data)).convert("RGB")
        for size in sizes:
            ref = T.Compose([T.Resize(size), T.CenterCrop(size)])(img)
            arr = np.asarray(ref, dtype=np.uint8)
            assert arr.shape == (size, size, 3), arr.shape
            with open(os.path.join(out, "%s.s%d.rgb" % (name, size)), "wb") as f:
                f.write(arr.tobytes())


if __name__ == "__main__":
    main(sys.argv[1])
