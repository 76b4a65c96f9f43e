#!/usr/bin/env python3
"""Spindle's image random stream and random_resized_crop, reimplemented from the normative text in
dev.spindle.spark.image's package documentation ("Random operations") with the standard library
only: no Java, no numpy. RandomOpsReferenceSuite checks that it draws what Spindle draws.

Reads lines "seed epoch index width height scale_min scale_max ratio_min ratio_max" from stdin and
writes, for each, "top left height width next": the box random_resized_crop draws for that sample
of a width x height image, and the stream's next double() after it (what hflip compares with p).
"""
import math
import os
import sys

# The plan's stream (mix, stream, next, below) from the plan's own reference implementation.
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scala", "dev", "spindle", "spark", "plan"))
from reference_plan import M64, Stream  # noqa: E402

IMAGE_OPS = 3


class SampleStream(Stream):
    """One sample's stream: stream(seed, epoch, 3, index), plus the image package's draws."""

    def __init__(self, seed, epoch, index):
        super().__init__(seed & M64, epoch, IMAGE_OPS, index)

    def double(self):
        return (self.next() >> 11) * 2.0 ** -53

    def uniform(self, a, b):
        r = self.double() * (b - a) + a
        return math.nextafter(b, -math.inf) if r >= b and b > a else r


def random_resized_crop(rng, width, height, s0, s1, r0, r1):
    area = float(width) * height
    log0, log1 = math.log(r0), math.log(r1)
    for _ in range(10):
        target = area * rng.uniform(s0, s1)
        aspect = math.exp(rng.uniform(log0, log1))
        w = round(math.sqrt(target * aspect))  # Python's round: to nearest, ties to even
        h = round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            top = rng.below(height - h + 1)
            left = rng.below(width - w + 1)
            return top, left, h, w
    ratio = width / height
    w, h = width, height
    if ratio < r0:
        h = round(w / r0)
    elif ratio > r1:
        w = round(h * r1)
    return (height - h) // 2, (width - w) // 2, h, w


def main():
    out = []
    for line in sys.stdin:
        if not line.strip():
            continue
        f = line.split()
        seed, epoch, index, width, height = (int(v) for v in f[:5])
        s0, s1, r0, r1 = (float(v) for v in f[5:9])
        rng = SampleStream(seed, epoch, index)
        top, left, h, w = random_resized_crop(rng, width, height, s0, s1, r0, r1)
        out.append(f"{top} {left} {h} {w} {rng.double()!r}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
