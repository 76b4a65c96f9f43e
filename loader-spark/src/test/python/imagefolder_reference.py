"""torchvision's ImageFolder on a folder tree, for ImageFolderSuite.

  make ROOT SPEC.json  writes the files SPEC lists ({"path": "cat/a.webp", "format": "WEBP"} for an
                       image PIL encodes, {"path": ..., "bytes": "text"} for any other file), each
                       image a small gradient whose colours depend on its path
  read ROOT            prints torchvision.datasets.ImageFolder(ROOT)'s classes, class_to_idx and
                       samples (paths relative to ROOT) as JSON; or the exception it raises
  sort NAME...         prints Python's sorted(NAMES) as JSON

Run with Debian's /usr/bin/python3 (python3-torchvision 0.14, python3-pil).
"""
import json
import os
import sys
import zlib

from PIL import Image


def make(root, spec_file):
    with open(spec_file, encoding="utf-8") as f:
        spec = json.load(f)
    for item in spec:
        path = os.path.join(root, item["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if "format" in item:
            seed = zlib.crc32(item["path"].encode("utf-8"))
            img = Image.new("RGB", (24, 16))
            img.putdata([((x * 9 + seed) % 256, (y * 13 + (seed >> 8)) % 256, (seed >> 16) % 256)
                         for y in range(16) for x in range(24)])
            if "mode" in item:
                img = img.convert(item["mode"])
            img.save(path, item["format"])
        else:
            with open(path, "wb") as f:
                f.write(item["bytes"].encode("utf-8"))


def read(root):
    from torchvision.datasets import ImageFolder
    try:
        ds = ImageFolder(root)
    except Exception as e:  # the refusal is what is compared
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
        return
    print(json.dumps({
        "classes": ds.classes,
        "class_to_idx": ds.class_to_idx,
        "samples": [[os.path.relpath(p, root), i] for p, i in ds.samples],
    }))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "read":
        read(sys.argv[2])
    elif sys.argv[1] == "sort":
        print(json.dumps(sorted(sys.argv[2:])))
    else:
        sys.exit("usage: imagefolder_reference.py make ROOT SPEC | read ROOT | sort NAME...")
