#!/usr/bin/python3
"""Summarises a JDK Flight Recording's CPU samples: which threads and methods the JVM spent its
time in. Usage: python3 bin/lib/jfr_summary.py FILE.jfr [--top 25] [--match REGEX ...]

Reads ``jfr print --json --events jdk.ExecutionSample`` (the JDK's own tool) and prints: samples
per thread (grouped by name without its number), the top methods by self samples (the leaf
frame), the top methods by inclusive samples (anywhere on the stack), and for each --match the
share of samples whose stack holds a frame matching it (e.g. ``FSInputChecker.verifySums``).
--native reads ``jdk.NativeMethodSample`` instead (threads in native code: reads, JNI decoders).
Shares are of all execution samples (the JVM samples running Java threads every 10-20 ms with
settings=profile; native frames and threads outside Java are not sampled).
"""
import argparse
import collections
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfr")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--match", action="append", default=[])
    ap.add_argument("--native", action="store_true",
                    help="jdk.NativeMethodSample (threads in native code) instead")
    a = ap.parse_args()
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
