#!/usr/bin/python3
"""Reference pixels for the preprocess job's real-photo check: for every image file given, writes
OUT_DIR/<index>.rgb, the raw uint8 RGB HWC bytes of torchvision's Resize(SIZE) + CenterCrop(SIZE)
applied to the image opened the way torchvision's ImageFolder opens it (PIL, convert("RGB")).
Needs Debian's python3-pil and python3-torchvision. Usage: torchvision_reference.py SIZE OUT_DIR FILE...
"""
import os
import sys

from PIL import Image
import torchvision.transforms as T


def main():
    size, out_dir, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    transform = T.Compose([T.Resize(size), T.CenterCrop(size)])
    for i, path in enumerate(files):
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        with open(os.path.join(out_dir, "%d.rgb" % i), "wb") as out:
            out.write(transform(img).tobytes())


if __name__ == "__main__":
    main()
