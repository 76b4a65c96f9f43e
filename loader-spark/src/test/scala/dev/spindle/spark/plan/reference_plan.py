#!/usr/bin/env python3
"""Independent reimplementation of Spindle's epoch plan, written from the package documentation of
dev.spindle.spark.plan (package-info.java) only. It prints the cross-implementation vectors that
ReferenceVectorsSuite pins; if the two ever disagree, the documentation or the Java code is wrong.

Usage: /usr/bin/python3 reference_plan.py
"""
import hashlib

M64 = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Stream:
    def __init__(self, seed, epoch, stream_id, block):
        self.state = mix(mix(mix(mix(seed & M64) ^ epoch) ^ stream_id) ^ block)

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        return mix(self.state)

    def below(self, n):
        return (self.next() * n) >> 64

    def shuffle(self, a, lo, hi):
        for i in range(hi - lo - 1, 0, -1):
            j = self.below(i + 1)
            a[lo + i], a[lo + j] = a[lo + j], a[lo + i]


def epoch_order(sizes, seed, epoch, window):
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    order = list(range(len(sizes)))
    Stream(seed, epoch, 1, 0).shuffle(order, 0, len(order))
    seq = [i for s in order for i in range(offsets[s], offsets[s + 1])]
    n = len(seq)
    b = 0
    while b * window < n:
        Stream(seed, epoch, 2, b).shuffle(seq, b * window, min(n, (b + 1) * window))
        b += 1
    return seq


def split(seq, world, batch, remainder):
    """Per rank: (entries, real count)."""
    n, rnd = len(seq), world * batch
    if n < rnd or (remainder == "EXACT" and n % rnd):
        raise ValueError("refused")
    if remainder != "PAD":
        per = n // rnd * batch
        return [(seq[r * per:(r + 1) * per], per) for r in range(world)]
    per = -(-n // rnd) * batch
    q, e = divmod(n, world)
    out = []
    for r in range(world):
        start, share = r * q + min(r, e), q + (1 if r < e else 0)
        own = seq[start:start + share]
        pad = [own[j % share] if share else seq[j % n] for j in range(per - share)]
        out.append((own + pad, share))
    return out


def split_pad_any(seq, world, batch):
    """The PAD split a resume uses: never refused while anything is left."""
    n, rnd = len(seq), world * batch
    per = -(-n // rnd) * batch
    q, e = divmod(n, world)
    out = []
    for r in range(world):
        start, share = r * q + min(r, e), q + (1 if r < e else 0)
        own = seq[start:start + share]
        out.append((own + [own[j % share] if share else seq[j % n] for j in range(per - share)], share))
    return out


def digest(indices):
    return hashlib.sha256(b"".join(i.to_bytes(8, "big", signed=True) for i in indices)).hexdigest()


SIZES = [5, 0, 7, 3, 9, 4]

if __name__ == "__main__":
    s = Stream(0, 0, 0, 0)
    s.state = 1234567
    print("splitmix64(1234567):", [s.next() for _ in range(5)])
    for seed, epoch, world, batch, remainder, window in [
        (42, 0, 2, 3, "DROP_LAST", 4),
        (42, 1, 2, 3, "DROP_LAST", 4),
        (-1, 3, 3, 2, "PAD", 5),
        (7, 2, 2, 7, "EXACT", 1000),
    ]:
        ranks = split(epoch_order(SIZES, seed, epoch, window), world, batch, remainder)
        print(seed, epoch, world, batch, remainder, window)
        for entries, real in ranks:
            print("  ", entries, real, digest(entries))
    # Resume N -> M: leg 0 above (seed 42, epoch 0, 2 ranks), ranks consumed [1, 2] batches of 3;
    # the rest, rank by rank, is split with PAD among 3 ranks.
    leg0 = split(epoch_order(SIZES, 42, 0, 4), 2, 3, "DROP_LAST")
    rest = [i for (entries, real), c in zip(leg0, [1, 2]) for i in entries[c * 3:real]]
    print("resume 2 -> 3 after [1, 2]:")
    for entries, real in split_pad_any(rest, 3, 3):
        print("  ", entries, real, digest(entries))
