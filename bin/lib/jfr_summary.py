#!/usr/bin/python3
"""Summarises a JDK Flight Recording's CPU samples: which threads and methods the JVM spent its
time in. Usage: python3 bin/lib/jfr_summary.py FILE.jfr [--top 25] [--match REGEX ...]

Reads ``jfr print --json --events jdk.ExecutionSample`` (the JDK's own tool) and prints: samples
per thread (grouped by name without its number), the top methods by self samples (the leaf
frame), the top methods by inclusive samples (anywhere on the stack), and for each --match the
share of samples whose stack holds a frame matching it (e.g. ``FSInputChecker.verifySums``).
--native reads ``jdk.NativeMethodSample`` instead (threads in native code: reads, JNI decoders).
--compilations [--split T1,T2,...] reads ``jdk.Compilation`` instead (record with
``settings=profile,jdk.Compilation#threshold=0ms``: profile alone drops compilations under
100 ms): the JIT's seconds and count, all tiers and C2's (level 4), in each window
between the given wall-clock times (Unix seconds, e.g. a trainer's epoch ends), with the window's
longest compilations.
Shares are of all execution samples (the JVM samples running Java threads every 10-20 ms with
settings=profile; native frames and threads outside Java are not sampled).
"""
import argparse
import collections
import datetime
import json
import re
import subprocess
import sys


def samples(path, event):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", event,
                          path], check=True, capture_output=True).stdout
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        frames = [f["method"]["type"]["name"].rsplit(".", 1)[-1] + "." + f["method"]["name"]
                  for f in (v.get("stackTrace") or {}).get("frames", [])]
        yield thread, frames


def seconds(duration):
    """A JFR JSON duration ("PT0.012S", "PT1M2.5S") in seconds."""
    return sum(float(n) * {"H": 3600, "M": 60, "S": 1}[u]
               for n, u in re.findall(r"([\d.]+)([HMS])", duration))


def compilations(path, split, top):
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.Compilation", path],
                         check=True, capture_output=True).stdout
    rows = []
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        start = datetime.datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()
        m = v["method"]
        rows.append((start, seconds(v["duration"]), v["compileLevel"],
                     m["type"]["name"].replace("/", ".") + "." + m["name"]))
    if not rows:
        sys.exit("jfr_summary: no jdk.Compilation events in %s" % path)
    bounds = [float("-inf")] + split + [float("inf")]
    for lo, hi in zip(bounds, bounds[1:]):
        window = [r for r in rows if lo <= r[0] < hi]
        name = "before %.3f" % hi if lo == float("-inf") else (
            "after %.3f" % lo if hi == float("inf") else "%.3f to %.3f" % (lo, hi))
        print("%s: %d compilations, %.2f s (C2: %.2f s)" % (
            name, len(window), sum(r[1] for r in window), sum(r[1] for r in window if r[2] == 4)))
        for r in sorted(window, key=lambda r: -r[1])[:top]:
            print("  %6.0f ms  level %d  %s" % (1000 * r[1], r[2], r[3]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfr")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--match", action="append", default=[])
    ap.add_argument("--native", action="store_true",
                    help="jdk.NativeMethodSample (threads in native code) instead")
    ap.add_argument("--compilations", action="store_true",
                    help="jdk.Compilation: the JIT's seconds per window (--split)")
    ap.add_argument("--split", default="",
                    help="comma-separated Unix times that cut --compilations into windows")
    a = ap.parse_args()
    if a.compilations:
        compilations(a.jfr, [float(t) for t in a.split.split(",") if t], a.top)
        return
    event = "jdk.NativeMethodSample" if a.native else "jdk.ExecutionSample"
    threads, self_, incl, matched, total = (collections.Counter(), collections.Counter(),
                                            collections.Counter(), collections.Counter(), 0)
    for thread, frames in samples(a.jfr, event):
        total += 1
        threads[re.sub(r"\d+", "N", thread)] += 1
        if frames:
            self_[frames[0]] += 1
        for f in set(frames):
            incl[f] += 1
        for m in a.match:
            if any(re.search(m, f) for f in frames):
                matched[m] += 1
    if not total:
        sys.exit("jfr_summary: no %s events in %s" % (event, a.jfr))

    def table(title, counter):
        print("%s (of %d %s events)" % (title, total, event))
        for k, n in counter.most_common(a.top):
            print("  %5.1f%%  %s" % (100.0 * n / total, k))

    table("threads", threads)
    table("self", self_)
    table("inclusive", incl)
    for m in a.match:
        print("stack matches %-40s %5.1f%%" % (m, 100.0 * matched[m] / total))


if __name__ == "__main__":
    main()
