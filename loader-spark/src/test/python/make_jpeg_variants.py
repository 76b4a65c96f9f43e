"""Writes src/test/resources/jpeg-variants/: one photograph (photos/photo3.jpg) re-encoded by
Pillow in the JPEG layouts the native region decoder must decode as libjpeg-turbo decodes whole
images: chroma subsampling 4:4:4, 4:2:2, 4:2:0, grayscale, progressive, odd sizes, and tiny
(Pillow 9.4 writes no restart intervals: NativeJpegSuite makes such a JPEG with ImageIO). Run with Debian's python3-pil:

    /usr/bin/python3 src/test/python/make_jpeg_variants.py
"""
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "resources", "photos", "photo3.jpg")
OUT = os.path.join(HERE, "..", "resources", "jpeg-variants")

VARIANTS = [
    # name, size, mode, save options
    ("s444", (400, 300), "RGB", {"subsampling": 0}),
    ("s422", (400, 300), "RGB", {"subsampling": 1}),
    ("s420", (400, 300), "RGB", {"subsampling": 2}),
    ("gray", (400, 300), "L", {}),
    ("progressive420", (400, 300), "RGB", {"subsampling": 2, "progressive": True}),
    ("progressive444", (400, 300), "RGB", {"subsampling": 0, "progressive": True}),
    ("progressive-gray", (400, 300), "L", {"progressive": True}),
    ("odd420", (397, 283), "RGB", {"subsampling": 2}),
    ("odd422-progressive", (333, 251), "RGB", {"subsampling": 1, "progressive": True}),
    ("tall420", (123, 611), "RGB", {"subsampling": 2}),
    ("tiny420", (9, 7), "RGB", {"subsampling": 2}),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    photo = Image.open(SRC).convert("RGB")
    for name, size, mode, options in VARIANTS:
        image = photo.resize(size, Image.BILINEAR).convert(mode)
        try:
            image.save(os.path.join(OUT, name + ".jpg"), quality=90, **options)
        except (TypeError, ValueError) as e:
            print("skipped %s: %s" % (name, e))


if __name__ == "__main__":
    main()
