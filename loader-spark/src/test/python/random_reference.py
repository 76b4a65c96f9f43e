#!/usr/bin/env python3
"""Spindle's image random stream and random_resized_crop, reimplemented from the normative text in
dev.spindle.spark.image's package documentation ("Random operations") with the standard library
only: no Java, no numpy. RandomOpsReferenceSuite checks that it draws what Spindle draws.

Reads lines "seed epoch index width height scale_min scale_max ratio_min ratio_max" from stdin and
writes, for each, "top left height width next": the box random_resized_crop draws for that sample
of a width x height image, and the stream's next double() after it (what hflip compares with p).
"""
import math
import sys

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
IMAGE_OPS = 3


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Stream:
    """stream(seed, epoch, id, block) of the plan's package documentation."""

    def __init__(self, seed, epoch, stream, block):
        s = mix(mix(mix(mix(seed & M64) ^ (epoch & M64)) ^ stream) ^ (block & M64))
        self.state = s

    def next(self):
        self.state = (self.state + GAMMA) & M64
        return mix(self.state)

    def below(self, n):
        return (self.next() * n) >> 64

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
        rng = Stream(seed, epoch, IMAGE_OPS, index)
        top, left, h, w = random_resized_crop(rng, width, height, s0, s1, r0, r1)
        out.append(f"{top} {left} {h} {w} {rng.double()!r}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
