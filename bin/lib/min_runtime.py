#!/usr/bin/env python3
"""Cuts a JVM classpath down to what one run loaded, for a machine that has neither Maven nor the
network and takes 64 MiB a call (bin/gpu-bundle's runtime for bin/gpu-check's train check).

Usage: bin/lib/min_runtime.py --log CLASSES.log --classpath CP --out DIR [--skip REGEX]
                              [--have DIR] [--drop REGEX] [--whole 300] [--whole-jar REGEX]
                              [--nested] [--whole-package REGEX]

CLASSES.log is the run's -Xlog:class+load=info:file=CLASSES.log. For each jar of CP (colon
separated) that the run loaded a class from, DIR gets:
- the classes the run loaded from it, and every class of each of their packages that has at most
  --whole classes (a class one run did not need may be needed by another, most likely a sibling:
  another logger's, another branch's; Spark's largest packages, thousands of expressions, only as
  loaded);
- every class of a package matching --whole-package (a regular expression on the package's path,
  e.g. org/apache/spark/scheduler), whatever its size, if the run loaded any class of that jar;
- with --nested, every class nested in the top-level class of a class the run loaded
  (Outer$Inner, Outer$$anon$2, a Scala object Outer$, for Outer or any class nested in it): what a path the run did not take loads beside its class (a timer that
  fires after a minute, an error's rendering);
- its other entries, but signatures and other platforms' native libraries; a service file
  (META-INF/services/...) keeps only the providers DIR holds.
A jar of this platform's native libraries and no classes (Netty's epoll transport: its classes
live in another jar) is taken whole, and so is a jar matching --whole-jar (a regular expression on
its path: a library whose classes another command line reaches differently, e.g. picocli's
converters, one per option type). Left out: jars the run loaded nothing from, folders, other
platforms' native jars, jars matching --skip (a regular expression on the path: those shipped
whole beside the runtime) or named as a jar in --have (a folder of jars shipped beside it), and
entries matching --drop (a regular expression on the entry's name: e.g. the web UI's files). The
first jar holding an entry wins, as on the classpath.
"""
import argparse
import collections
import os
import re
import sys
import zipfile

LOADED = re.compile(r"\[class,load\] (\S+) source: (?:jar:)?file:(\S+?)(?:!/)?$")
OTHER_PLATFORMS = re.compile(r"(?i)(arm64|aarch_?64|ppc_?64|loongarch|s390|riscv|win32|win64|windows|darwin|"
                             r"macosx|osx|freebsd|linux-x86(?!_64)|linux32|android|ios)")
NATIVE = re.compile(r"\.(so(\.\d+)*|dll|dylib|jnilib)$")
SIGNATURE = re.compile(r"^META-INF/[^/]+\.(SF|RSA|DSA|EC)$")


def loaded_classes(log):
    by_jar = collections.defaultdict(set)
    with open(log, errors="replace") as f:
        for line in f:
            m = LOADED.search(line.rstrip("\n"))
            if m and m.group(2).endswith(".jar"):
                by_jar[m.group(2)].add(m.group(1).replace(".", "/") + ".class")
    return by_jar


def natives_only(jar):
    """A jar of native libraries and no classes (Netty's epoll transport for this platform): the
    run loads no class from it, but its classes in another jar load its library."""
    with zipfile.ZipFile(jar) as z:
        names = z.namelist()
    return (not any(n.endswith(".class") and not n.endswith("module-info.class") for n in names)
            and any(NATIVE.search(n) for n in names))


def package(entry):
    return entry.rsplit("/", 1)[0] if "/" in entry else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--classpath", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip", default=None)
    ap.add_argument("--whole", type=int, default=300)
    ap.add_argument("--have", default=None)
    ap.add_argument("--drop", default=None)
    ap.add_argument("--whole-jar", default=None)
    ap.add_argument("--nested", action="store_true")
    ap.add_argument("--whole-package", default=None)
    a = ap.parse_args()
    whole_jar = re.compile(a.whole_jar) if a.whole_jar else None
    whole_package = re.compile(a.whole_package) if a.whole_package else None
    skip = re.compile(a.skip) if a.skip else None
    drop = re.compile(a.drop) if a.drop else None
    have = set(os.listdir(a.have)) if a.have else set()
    by_jar = loaded_classes(a.log)
    if not by_jar:
        sys.exit("min_runtime: no classes loaded from jars in %s (was it written with "
                 "-Xlog:class+load=info:file=...?)" % a.log)
    written, services, classes, jars = set(), {}, 0, 0
    for jar in a.classpath.split(":"):
        if (not jar.endswith(".jar") or (skip and skip.search(jar))
                or os.path.basename(jar) in have or OTHER_PLATFORMS.search(os.path.basename(jar))):
            continue
        entire = bool(whole_jar and whole_jar.search(jar))
        if jar not in by_jar and not natives_only(jar) and not entire:
            continue
        jars += 1
        with zipfile.ZipFile(jar) as z:
            sizes = collections.Counter(package(n) for n in z.namelist() if n.endswith(".class"))
            whole = ({package(n) for n in z.namelist()} if entire else
                     {package(c) for c in by_jar.get(jar, ()) if sizes[package(c)] <= a.whole})
            if whole_package and jar in by_jar:
                whole |= {p for p in sizes if whole_package.search(p)}
            wanted = by_jar.get(jar, set())
            if a.nested:
                outers = {c[:-len(".class")].split("$", 1)[0] for c in wanted}
                wanted = wanted | {n for n in z.namelist() if n.endswith(".class")
                                   and "$" in n and n.split("$", 1)[0] in outers}
            for e in z.infolist():
                name = e.filename
                if (e.is_dir() or name in written or SIGNATURE.match(name)
                        or (drop and drop.search(name))):
                    continue
                if name.endswith(".class"):
                    if name not in wanted and package(name) not in whole:
                        continue
                    classes += 1
                elif NATIVE.search(name) and OTHER_PLATFORMS.search(name):
                    continue
                if name.startswith("META-INF/services/") and not name.endswith("/"):
                    services.setdefault(name, []).extend(
                        z.read(e).decode("utf-8", "replace").splitlines())
                    written.add(name)
                    continue
                path = os.path.join(a.out, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(z.read(e))
                written.add(name)
    for name, lines in services.items():
        keep = []
        for line in lines:
            provider = line.split("#", 1)[0].strip()
            if provider and os.path.exists(os.path.join(a.out, provider.replace(".", "/") + ".class")):
                keep.append(provider)
        if keep:
            path = os.path.join(a.out, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("\n".join(dict.fromkeys(keep)) + "\n")
    print("min_runtime: %d classes and their jars' resources from %d jars into %s"
          % (classes, jars, a.out))


if __name__ == "__main__":
    main()
