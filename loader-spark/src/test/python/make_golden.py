#!/usr/bin/python3
"""Writes small synthetic test images and what Pillow + torchvision make of them.

Reference side of GoldenImageSuite. For every case it writes the encoded input image and the
reference output of a Spindle transform spec (spindle_reference.py maps it to torchvision), and
lists them in golden.tsv: image, spec, output mode, exif (1 = EXIF-transposed), reference file,
allowed max difference (0 = bit-exact; in 8-bit steps for uint8, else absolute).
Deterministic: the same files on every run. Needs Debian's python3-pil, python3-numpy,
python3-torch, python3-torchvision. Usage: make_golden.py OUT_DIR
"""
import io
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

import spindle_reference as ref


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


def png16(arr):
    """A 16-bit PNG (gray or RGB) written by hand: Pillow cannot write 16-bit RGB."""
    h, w = arr.shape[:2]
    colour = 2 if arr.ndim == 3 else 0
    raw = b"".join(b"\0" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", w, h, 16, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def crop_spec(size):
    return "resize(%d),center_crop(%d)" % (size, size)


def images():
    rgb = Image.fromarray
    yield "gradient_rgb.png", save(rgb(gradient(97, 61)), "PNG")
    yield "checker1_rgb.png", save(rgb(checker(64, 48, 1)), "PNG")
    yield "checker3_rgb.png", save(rgb(checker(90, 75, 3)), "PNG")
    yield "noise_rgb.jpg", save(rgb(noise(120, 80, 1)), "JPEG", quality=90)
    yield "noise_420.jpg", save(rgb(noise(101, 67, 2)), "JPEG", quality=75, subsampling=2)
    yield "noise_prog.jpg", save(rgb(noise(88, 131, 3)), "JPEG", quality=85, progressive=True)
    gray = Image.fromarray(noise(50, 70, 4)[:, :, 0])
    yield "gray.jpg", save(gray, "JPEG", quality=90)
    yield "gray.png", save(gray, "PNG")
    la = Image.merge("LA", [gray, Image.fromarray(checker(50, 70, 5)[:, :, 0])])
    yield "gray_alpha.png", save(la, "PNG")
    rgba = Image.fromarray(np.dstack([noise(77, 40, 5), checker(77, 40, 4)[:, :, 0]]), "RGBA")
    yield "rgba.png", save(rgba, "PNG")
    pal = rgb(noise(60, 45, 6)).convert("P", palette=Image.ADAPTIVE, colors=16)
    yield "palette.png", save(pal, "PNG")
    yield "palette_trns.png", save(pal, "PNG", transparency=3)
    yield "one_pixel.png", save(rgb(np.array([[[200, 100, 50]]], np.uint8)), "PNG")
    yield "small_up.png", save(rgb(noise(10, 7, 7)), "PNG")
    yield "tall.png", save(rgb(noise(3, 90, 8)), "PNG")
    yield "cmyk.jpg", save(rgb(noise(64, 48, 9)).convert("CMYK"), "JPEG", quality=92)
    rng = np.random.RandomState(10)
    yield "rgb16.png", png16(rng.randint(0, 65536, (30, 41, 3)))
    yield "gray16.png", png16(rng.randint(0, 65536, (33, 25)))
    for o in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = o
        yield "exif%d.jpg" % o, save(rgb(noise(60, 40, 20 + o)), "JPEG", quality=90, exif=exif)


def cases():
    """(image, spec, output, exif, max difference)."""
    sizes = {"gradient_rgb.png": [32, 61, 80], "checker1_rgb.png": [24],
             "checker3_rgb.png": [20, 75], "noise_rgb.jpg": [40, 100], "noise_420.jpg": [33],
             "noise_prog.jpg": [48], "gray.jpg": [30], "gray.png": [30], "gray_alpha.png": [25],
             "rgba.png": [36], "palette.png": [20], "palette_trns.png": [20],
             "one_pixel.png": [1, 8], "small_up.png": [16], "tall.png": [5], "rgb16.png": [20]}
    for image, ss in sizes.items():
        for s in ss:
            yield image, crop_spec(s), "uint8-hwc", 0, 0
    g = "gradient_rgb.png"
    for spec in ["resize(40,30)", "resize(50),center_crop(70)", "crop(5,7,40,50),resize(24,32)",
                 "resize(32),center_crop(32),hflip(1)", "hflip(1),resize(20),center_crop(18)",
                 "resize(80,60),resize(33),center_crop(30)", "center_crop(50),resize(25,25)",
                 "hflip(1),crop(3,10,30,40),resize(16,16)", "crop(-5,90,20,20)",
                 "hflip(0),resize(31),center_crop(29,31)"]:
        yield g, spec, "uint8-hwc", 0, 0
    n = "noise_rgb.jpg"
    yield n, "resize(48,filter=bicubic),center_crop(48)", "uint8-hwc", 0, 0
    yield n, "resize(30,filter=box),center_crop(30)", "uint8-hwc", 0, 0
    yield "small_up.png", "resize(23,filter=bicubic),center_crop(23)", "uint8-hwc", 0, 0
    yield n, crop_spec(40), "uint8-chw", 0, 0
    yield n, crop_spec(40) + ",normalize", "float32-chw", 0, 0
    yield n, crop_spec(40) + ",normalize", "float16-chw", 0, 0
    yield n, crop_spec(40), "float32-chw", 0, 0
    yield n, crop_spec(40) + ",normalize(mean=0.5:0.25:0.125,std=0.2:0.3:0.4)", "float32-chw", 0, 0
    for o in range(1, 9):
        yield "exif%d.jpg" % o, "resize(24),center_crop(24)", "uint8-hwc", 1, 0
        yield "exif%d.jpg" % o, "resize(20,36)", "uint8-hwc", 1, 0
    yield "exif6.jpg", "resize(20,36)", "uint8-hwc", 0, 0
    # Pillow and OpenCV convert CMYK to RGB with different integer rounding
    yield "cmyk.jpg", crop_spec(32), "uint8-hwc", 0, 2
    # Pillow opens 16-bit gray as 32-bit "I" and clips to 255 on convert("RGB"); Spindle keeps
    # the high byte (as for 16-bit RGB, where both agree). Not comparable: no golden case.


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, data in images():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    rows = []
    for i, (image, spec, output, exif, tol) in enumerate(cases()):
        img = ref.load(os.path.join(out, image), bool(exif))
        data = ref.reference(img, spec, output)
        name = "golden%03d.ref" % i
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        rows.append("\t".join([image, spec, output, str(exif), name, str(tol)]))
    with open(os.path.join(out, "golden.tsv"), "w") as f:
        f.write("# image\tspec\toutput\texif\treference\tmax_difference\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
