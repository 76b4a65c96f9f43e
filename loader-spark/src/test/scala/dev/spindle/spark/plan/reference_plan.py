#!/usr/bin/env python3
"""Independent reimplementation of Spindle's epoch plan, written from the package documentation of
dev.spindle.spark.plan (package-info.java) only. It prints the cross-implementation vectors that
ReferenceVectorsSuite pins (TokenBudgetPlanSuite those of token budgets); if the two ever disagree,
the documentation or the Java code is wrong.

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


def mix_weights(proportions):
    """Integer weights of decimal proportions given as strings ("Mixtures", step 1)."""
    from decimal import Decimal
    from math import gcd
    ds = [Decimal(p).normalize() for p in proportions]
    d = max(max(0, -x.as_tuple().exponent) for x in ds)
    ws = [int(x.scaleb(d)) for x in ds]
    g = 0
    for w in ws:
        g = gcd(g, w)
    return [w // g for w in ws]


def mix_pattern(weights):
    """Smooth weighted round-robin over one period ("Mixtures", step 2)."""
    period = sum(weights)
    credit = [0] * len(weights)
    out = []
    for _ in range(period):
        for s in range(len(weights)):
            credit[s] += weights[s]
        best = max(range(len(weights)), key=lambda s: (credit[s], -s))
        credit[best] -= period
        out.append(best)
    return out


def mix_order(sources, proportions, seed, epoch, window, rule="total"):
    """sources: each a list of shard sizes, laid end to end in the catalog. Steps 1-5."""
    weights = mix_weights(proportions)
    pattern = mix_pattern(weights)
    period = len(pattern)
    sizes = [sum(s) for s in sources]
    bases = [sum(sizes[:s]) for s in range(len(sources))]

    def slot_of(s, k):  # the slot of source s's entry k
        occ = [o for o in range(period) if pattern[o] == s]
        return k // weights[s] * period + occ[k % weights[s]]

    if rule == "total":
        n = sum(sizes)
    elif rule == "first-exhausted":
        n = min(slot_of(s, sizes[s]) for s in range(len(sources)))
    elif rule == "all-exhausted":
        n = max(slot_of(s, sizes[s] - 1) + 1 for s in range(len(sources)))
    else:
        n = int(rule[len("samples:"):])
    passes = {}

    def entry(s, k):
        j, pos = divmod(k, sizes[s])
        if (s, j) not in passes:
            sub = Stream(seed, epoch, 4, (s << 32) | j).next()
            passes[(s, j)] = [bases[s] + i for i in epoch_order(sources[s], sub, epoch, window)]
        return passes[(s, j)][pos]

    taken = [0] * len(sources)
    seq = []
    for p in range(n):
        s = pattern[p % period]
        seq.append(entry(s, taken[s]))
        taken[s] += 1
    return seq


def pack(seq, lengths, window, max_rows, tokens):
    """Token budgets, step 4: the epoch's batches (lists of indices), packed window by window."""
    batches = []
    for lo in range(0, len(seq), window):
        cur, total = [], 0
        for i in seq[lo:lo + window]:
            if cur and (len(cur) == max_rows or total + lengths[i] > tokens):
                batches.append(cur)
                cur, total = [], 0
            cur.append(i)
            total += lengths[i]
        batches.append(cur)
    return batches


def flat(batches):
    return [i for b in batches for i in b]


def digest(indices):
    return hashlib.sha256(b"".join(i.to_bytes(8, "big", signed=True) for i in indices)).hexdigest()


SIZES = [5, 0, 7, 3, 9, 4]
# Token budgets: the list field's length of each of the 28 samples (sample 13 is over a budget of 12).
LENGTHS = [(i * 7 + 3) % 11 + 1 for i in range(28)]
LENGTHS[13] = 15

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
    # Mixtures: sources of shard sizes A and B laid end to end (A's indices 0..15, B's 16..24).
    A, B = [6, 0, 4, 6], [5, 4]
    print("mix pattern 0.7/0.3:", mix_pattern(mix_weights(["0.7", "0.3"])))
    print("mix pattern 2/1/1:", mix_pattern(mix_weights(["2", "1", "1"])))
    for props, seed, epoch, world, batch, remainder, window, rule in [
        (["0.7", "0.3"], 42, 0, 2, 3, "DROP_LAST", 4, "total"),
        (["1", "3"], -5, 1, 2, 4, "PAD", 3, "samples:30"),
        (["0.5", "0.5"], 9, 0, 1, 2, "DROP_LAST", 100, "first-exhausted"),
        (["0.5", "0.5"], 9, 0, 1, 2, "DROP_LAST", 100, "all-exhausted"),
    ]:
        seq = mix_order([A, B], props, seed, epoch, window, rule)
        print("mix", props, seed, epoch, world, batch, remainder, window, rule, "N =", len(seq))
        for entries, real in split(seq, world, batch, remainder):
            print("  ", entries, real, digest(entries))
    # A mixture resumed 2 -> 3 after [2, 1] batches of the first mixture above.
    leg0 = split(mix_order([A, B], ["0.7", "0.3"], 42, 0, 4), 2, 3, "DROP_LAST")
    rest = [i for (entries, real), c in zip(leg0, [2, 1]) for i in entries[c * 3:real]]
    print("mix resume 2 -> 3 after [2, 1]:")
    for entries, real in split_pad_any(rest, 3, 3):
        print("  ", entries, real, digest(entries))
    # Token budgets: batches packed within windows, split as whole batches (batch size 1).
    print("lengths:", LENGTHS)
    for seed, epoch, world, rows, tokens, remainder, window in [
        (42, 0, 5, 4, 20, "DROP_LAST", 8),
        (-1, 3, 3, 3, 14, "PAD", 5),
        (7, 2, 2, 8, 23, "EXACT", 1000),
    ]:
        batches = pack(epoch_order(SIZES, seed, epoch, window), LENGTHS, window, rows, tokens)
        print("budget", seed, epoch, world, rows, tokens, remainder, window, "batches", len(batches))
        for entries, real in split(batches, world, 1, remainder):
            print("  ", entries, real, digest(flat(entries)))
    # A budgeted plan resumed 2 -> 3 after [1, 3] batches of the first one above.
    leg0 = split(pack(epoch_order(SIZES, 42, 0, 8), LENGTHS, 8, 4, 20), 2, 1, "DROP_LAST")
    rest = [b for (entries, real), c in zip(leg0, [1, 3]) for b in entries[c:real]]
    print("budget resume 2 -> 3 after [1, 3]:")
    for entries, real in split_pad_any(rest, 3, 1):
        print("  ", entries, real, digest(flat(entries)))
