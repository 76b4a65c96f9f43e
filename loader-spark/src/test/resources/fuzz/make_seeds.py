"""Regenerates the fuzz targets' seed corpora (one small input per file, under fuzz/TARGET/).

Run with Debian's Python (PIL): /usr/bin/python3 make_seeds.py. Parquet seeds come from DuckDB
(loader-spark/src/test/node, installed by bin/setup-test-deps); the script skips them, saying so,
where node or DuckDB is missing. Inputs that a fuzzing run found and that the suite now checks are
added beside the seeds by hand, named after what they found (found-*).
"""
import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../../../loader-gpu/python"))
from spindle_bridge import protocol as p  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "../../python"))
import make_format_variants as fv  # noqa: E402  (its BMP and TIFF encoders)


def put(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


def tar_bytes(fmt, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            elif kind == "sym":
                info.type = tarfile.SYMTYPE
                info.linkname = data.decode()
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    data = buf.getvalue().rstrip(b"\0")  # tarfile pads to 10 KiB: keep the end blocks only
    return data + b"\0" * (-len(data) % 512 + 1024)


def base256_size(archive):
    """The first header's size field rewritten as GNU base-256 (0x80 lead), checksum fixed."""
    h = bytearray(archive[:512])
    size = int(h[124:136].rstrip(b"\0 ").decode() or "0", 8)
    h[124:136] = b"\x80" + size.to_bytes(11, "big")
    h[148:156] = b"        "
    h[148:156] = ("%06o\0 " % sum(h)).encode()
    return bytes(h) + archive[512:]


def tars():
    sample = [("s0.jpg", b"\xff\xd8jpeg", "f"), ("s0.cls", b"3", "f"), ("s1.jpg", b"x" * 700, "f"),
              ("s1.cls", b"1", "f")]
    long_name = "d/" + "n" * 150 + ".jpg"
    seeds = {
        "ustar.tar": tar_bytes(tarfile.USTAR_FORMAT, sample),
        "ustar-prefix.tar": tar_bytes(tarfile.USTAR_FORMAT, [("p" * 90 + "/" + "q" * 60 + ".cls",
                                                               b"7", "f")]),
        "gnu-longname.tar": tar_bytes(tarfile.GNU_FORMAT, [(long_name, b"1", "f"),
                                                           ("l" * 120, b"x", "sym")]),
        "pax.tar": tar_bytes(tarfile.PAX_FORMAT, [("\u00e9t\u00e9/" + "p" * 120 + ".png",
                                                   b"\x89PNG", "f"), ("dir", b"", "dir")]),
        "dirs-links.tar": tar_bytes(tarfile.GNU_FORMAT, [("a", b"", "dir"), ("a/l", b"../x", "sym"),
                                                         ("a/f.txt", b"hi", "f")]),
        "empty.tar": b"\0" * 1024,
    }
    seeds["base256.tar"] = base256_size(seeds["ustar.tar"])
    seeds["no-end-blocks.tar"] = seeds["ustar.tar"][:-1024]
    seeds["concatenated.tar"] = seeds["ustar.tar"] + b"\0" * 8192 + seeds["pax.tar"]
    seeds["macos.tar"] = tar_bytes(tarfile.USTAR_FORMAT, [
        ("._s0.jpg", b"\0\x05\x16\x07\0\x02\0\0Mac OS X", "f"), ("s0.jpg", b"\xff\xd8jpeg", "f"),
        ("__MACOSX/._s0.cls", b"\0\x05\x16\x07", "f"), ("s0.cls", b"3", "f"),
        ("s0.label", b"4", "f"), ("__meta__", b"{}", "f")])
    for name, data in seeds.items():
        put("tar", name, data)
        put("tar-gz", name + ".gz", gzip.compress(data, mtime=0))
        put("tar-xz", name + ".xz", lzma.compress(data))
        put("tar-bz2", name + ".bz2", bz2.compress(data))
        zst = zstd(data)
        if zst is not None:
            put("tar-zst", name + ".zst", zst)
    put("tar-gz", "two-members.tar.gz", gzip.compress(seeds["ustar.tar"][:1024], mtime=0)
        + gzip.compress(seeds["ustar.tar"][1024:], mtime=0))
    put("tar-xz", "two-streams.tar.xz", lzma.compress(seeds["ustar.tar"][:1024])
        + lzma.compress(seeds["ustar.tar"][1024:]))
    put("tar-xz", "delta-filter.tar.xz", lzma.compress(seeds["ustar.tar"], filters=[
        {"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_LZMA2, "preset": 1}]))
    put("tar-xz", "sha256-check.tar.xz", lzma.compress(seeds["ustar.tar"], check=lzma.CHECK_SHA256))
    put("tar-bz2", "two-streams.tar.bz2", bz2.compress(seeds["ustar.tar"][:1024])
        + bz2.compress(seeds["ustar.tar"][1024:]))


def zstd(data):
    """The zstd command's frame of data (with its checksum), or None where it is missing."""
    try:
        return subprocess.run(["zstd", "-q", "-c", "--check"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("no tar-zst seeds: the zstd command failed:", e, file=sys.stderr)
        return None


def images():
    out = {}
    grad = Image.new("RGB", (23, 17))
    grad.putdata([((x * 11) % 256, (y * 15) % 256, (x * y) % 256)
                  for y in range(17) for x in range(23)])

    def jpeg(name, img, **kw):
        b = io.BytesIO()
        img.save(b, "JPEG", **kw)
        out[name] = b.getvalue()

    def png(name, img, **kw):
        b = io.BytesIO()
        img.save(b, "PNG", **kw)
        out[name] = b.getvalue()

    jpeg("baseline-420.jpg", grad, quality=80)
    jpeg("baseline-444.jpg", grad, quality=90, subsampling=0)
    jpeg("progressive.jpg", grad, quality=75, progressive=True)
    jpeg("gray.jpg", grad.convert("L"), quality=85)
    jpeg("cmyk.jpg", grad.convert("CMYK"), quality=85)
    exif = Image.Exif()
    exif[0x0112] = 6
    jpeg("exif-6.jpg", grad, quality=70, exif=exif.tobytes())
    jpeg("restart.jpg", grad, quality=70, restart_marker_blocks=1)
    jpeg("one-pixel.jpg", Image.new("RGB", (1, 1), (200, 10, 30)))
    png("rgb.png", grad)
    png("gray.png", grad.convert("L"))
    png("palette.png", grad.convert("P"))
    png("rgba.png", grad.convert("RGBA"))
    png("gray16.png", Image.frombytes("I;16", (23, 17), bytes(range(256)) * 3 + bytes(14)))
    png("one-pixel.png", Image.new("RGB", (1, 1)))
    for name, data in out.items():
        for target in ("image-header", "decode-native", "decode-opencv"):
            put(target, name, data)
    for name, data in other_formats(grad).items():
        for target in ("image-header", "decode-opencv"):
            put(target, name, data)


def other_formats(grad):
    """Seeds of the formats beside JPEG and PNG, and a PNG with an eXIf chunk."""
    w, h = grad.size
    raw = grad.tobytes()

    def save(img, fmt, **kw):
        b = io.BytesIO()
        img.save(b, fmt, **kw)
        return b.getvalue()

    exif = Image.Exif()
    exif[0x0112] = 6
    bgr = [r << 16 | g << 8 | b for r, g, b in grad.getdata()]
    p565 = [(r >> 3) << 11 | (g >> 2) << 5 | b >> 3 for r, g, b in grad.getdata()]
    q = grad.quantize(colors=16)
    index = list(q.getdata())
    palette = [tuple(q.getpalette()[i:i + 3]) for i in range(0, 48, 3)]
    rows = [index[y * w:(y + 1) * w] for y in range(h)]
    tile = b"".join(raw[y * w * 3:(y + 1) * w * 3] + bytes(3 * (32 - w)) for y in range(h))
    out = {
        "bmp-24.bmp": save(grad, "BMP"),
        "bmp-8.bmp": save(grad.convert("P"), "BMP"),
        "bmp-1.bmp": save(grad.convert("1"), "BMP"),
        "bmp-16-565.bmp": fv.bmp(w, h, 16, fv.rows_of(p565, w, h, 16), compression=3,
                                 masks=(0xF800, 0x7E0, 0x1F)),
        "bmp-32-v5.bmp": fv.bmp(w, h, 32, fv.rows_of([0xFF000000 | v for v in bgr], w, h, 32),
                                header=124, compression=3,
                                masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000)),
        "bmp-rle8.bmp": fv.bmp(w, h, 8, fv.rle8(rows), palette, compression=1),
        "bmp-rle4.bmp": fv.bmp(w, h, 4, fv.rle4(rows), palette, compression=2),
        "pnm-p6.ppm": save(grad, "PPM"),
        "pnm-p5.pgm": save(grad.convert("L"), "PPM"),
        "pnm-p4.pbm": save(grad.convert("1"), "PPM"),
        "pnm-p3.ppm": b"P3\n%d %d\n255\n" % (w, h) + fv.text(raw),
        "pnm-p6-16.ppm": b"P6\n%d %d\n65535\n" % (w, h) + struct.pack(">%dH" % len(raw),
                                                                       *(v * 257 for v in raw)),
        "pnm-p5-max100.pgm": b"P5\n%d %d\n100\n" % (w, h) + bytes(v * 100 // 255 for v in
                                                                  grad.convert("L").tobytes()),
        "tiff-rgb.tif": save(grad, "TIFF"),
        "tiff-orientation6.tif": save(grad, "TIFF", tiffinfo={274: 6}),
        "tiff-palette.tif": save(grad.convert("P"), "TIFF"),
        "tiff-g4.tif": save(grad.convert("1"), "TIFF", compression="group4"),
        "tiff-rgb16.tif": fv.tiff(w, h, 3, 16, [struct.pack("<%dH" % len(raw),
                                                            *(v * 257 for v in raw))]),
        "tiff-planar.tif": fv.tiff(w, h, 3, 8, [raw[0::3], raw[1::3], raw[2::3]], planar=2),
        "tiff-tiled.tif": fv.tiff(w, h, 3, 8, [tile + bytes(3 * 32 * (32 - h))], tile=(32, 32)),
        "webp-lossy.webp": save(grad, "WEBP", quality=60),
        "webp-lossless.webp": save(grad, "WEBP", lossless=True),
        "webp-alpha.webp": save(grad.convert("RGBA"), "WEBP", quality=60),
        "webp-animated.webp": save(grad, "WEBP", save_all=True, append_images=[grad.rotate(180)]),
        "webp-exif6.webp": save(grad, "WEBP", lossless=True, exif=exif.tobytes()),
        "gif.gif": save(grad.convert("P"), "GIF"),
        "gif-transparent.gif": save(grad.convert("P"), "GIF", transparency=3),
        "gif-animated.gif": save(grad, "GIF", save_all=True, append_images=[grad.rotate(180)]),
        "gif-partial.gif": fv.partial(save(grad.convert("P"), "GIF")),
        "png-exif6.png": save(grad, "PNG", exif=exif.tobytes()),
    }
    for compression in ("tiff_lzw", "tiff_adobe_deflate", "packbits", "jpeg"):
        out["tiff-%s.tif" % compression.replace("tiff_", "")] = save(grad, "TIFF",
                                                                     compression=compression)
    return out


def manifests():
    tar_shards = [{"path": "s-%03d.tar" % i, "format": "TAR", "bytes": 10240, "modificationTime":
                   1700000000000 + i, "samples": 8, "entries": []} for i in range(2)]
    docs = {
        "tar.json": {"format": "spindle-manifest/4", "input": "file:/data/shards",
                     "classNames": [], "parquetColumns": None, "shards": tar_shards},
        "folder.json": {"format": "spindle-manifest/4", "input": "file:/data/folder",
                        "classNames": ["cat", "dog"], "parquetColumns": None, "shards": [
                            {"path": "", "format": "IMAGE_FOLDER", "bytes": 300,
                             "modificationTime": 5, "samples": 2,
                             "entries": [{"path": "cat/a.jpg", "label": 0},
                                         {"path": "dog/b.png", "label": 1}]}]},
        "parquet.json": {"format": "spindle-manifest/4", "input": "file:/data/pq/part-{0..1}.parquet",
                         "classNames": [], "parquetColumns": {"image": "image", "label": "label"},
                         "shards": [{"path": "part-0.parquet", "format": "PARQUET", "bytes": 9,
                                     "modificationTime": 1, "samples": 3, "entries": []}]},
        "outdated.json": {"format": "spindle-manifest/2", "input": "/x", "shards": []},
    }
    for name, doc in docs.items():
        put("manifest", name, json.dumps(doc).encode())
    for name in ("tar", "folder", "parquet"):
        body = manifest_columns(docs[name + ".json"])
        put("manifest-bin", name + ".bin", manifest_bin(docs[name + ".json"], body))
    put("manifest-bin", "tar.columns", manifest_columns(docs["tar.json"]))


# The binary manifest (spindle-manifest-bin/2), written from the layout in
# loader-spark/src/main/java/dev/spindle/spark/manifest/package-info.java, independently of the Java
# codec: ManifestBinarySuite reads these seeds as the same manifests as their JSON twins.
FORMAT_CODES = {"TAR": 1, "IMAGE_FOLDER": 2, "PARQUET": 3}
U64 = (1 << 64) - 1


def varint(v):
    v &= U64
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def zigzag(v):
    v = (v + (1 << 63)) % (1 << 64) - (1 << 63)  # as a signed 64-bit value
    return varint((v << 1) ^ (v >> 63))


def string(s):
    b = s.encode("utf-8")
    return varint(len(b)) + b


def front_coded(paths, separate=False):
    """Each path as the count of leading bytes it shares with the one before, then the rest."""
    out, previous = [], b""
    for p in paths:
        b = p.encode("utf-8")
        shared = 0
        while shared < min(len(previous), len(b)) and previous[shared] == b[shared]:
            shared += 1
        out.append(varint(shared) + varint(len(b) - shared) + b[shared:])
        previous = b
    return out if separate else b"".join(out)


def manifest_columns(doc):
    shards, columns = doc["shards"], doc["parquetColumns"]
    out = string(doc["input"]) + varint(len(doc["classNames"]))
    out += b"".join(string(c) for c in doc["classNames"])
    out += b"\0" if columns is None else b"\1" + string(columns["image"]) + string(columns["label"])
    out += varint(len(shards)) + front_coded([s["path"] for s in shards])
    out += bytes(FORMAT_CODES[s["format"]] for s in shards)
    out += b"".join(zigzag(s["bytes"]) for s in shards)
    times = [s["modificationTime"] for s in shards]
    out += b"".join(zigzag(t - p) for t, p in zip(times, [0] + times))
    out += b"".join(varint(s["samples"]) for s in shards)
    out += b"".join(varint(len(s["entries"])) for s in shards)
    entries = [e for s in shards for e in s["entries"]]  # path front-coded, then label
    coded = front_coded([e["path"] for e in entries], separate=True)
    return out + b"".join(p + zigzag(e["label"]) for p, e in zip(coded, entries))


def fingerprint(doc):
    def s(text):
        b = text.encode("utf-8")
        return struct.pack(">i", len(b)) + b
    h = hashlib.sha256(s("spindle-manifest-fingerprint/1") + struct.pack(">i", len(doc["shards"])))
    for sh in doc["shards"]:
        h.update(s(sh["path"]) + s(sh["format"]) + struct.pack(">qqi", sh["bytes"], sh["samples"],
                                                               len(sh["entries"])))
        for e in sh["entries"]:
            h.update(s(e["path"]) + struct.pack(">i", e["label"]))
    h.update(struct.pack(">i", len(doc["classNames"])) + b"".join(s(c) for c in doc["classNames"]))
    return h.digest()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def manifest_bin(doc, body, json_bytes=-1, json_modified=-1):
    deflated = zlib.compress(body)
    samples = sum(s["samples"] for s in doc["shards"])
    out = b"spindle-manifest-bin/2\n" + struct.pack(">qq", json_bytes, json_modified)
    out += fingerprint(doc) + struct.pack(">iq", len(doc["shards"]), samples)
    out += struct.pack(">ii", len(body), len(deflated)) + deflated
    return out + struct.pack(">I", crc32c(out))


def loader_states():
    state = {"format": "spindle-loader-state/1",
             "manifest": {"sha256": "cd" * 32, "shards": 3, "samples": 90},
             "seed": -42, "epoch": 4, "batchSize": 8, "remainder": "DROP_LAST",
             "shuffleWindow": 64, "worldSize": 2, "batchesConsumed": [5, 6],
             "earlierLegs": [{"worldSize": 3, "batchesConsumed": [1, 2, 3]}]}
    put("loader-state", "resumed.json", json.dumps(state, indent=2).encode())
    state.update(epoch=0, remainder="PAD", earlierLegs=[], worldSize=1, batchesConsumed=[0])
    put("loader-state", "initial.json", json.dumps(state).encode())


def bridge():
    hello = p.hello("t0k3n-0123456789abcdef", 0, 2, -1, "cpu", "", 4242)
    put("bridge", "hello-next-release-bye",
        hello + p.next_request(1000) + p.release(0) + p.frame(p.BYE))
    put("bridge", "hello-resume-cuda", p.hello("", 1, 2, 5, "cuda:0", "format=x\nseed=3", 4242))
    put("bridge", "hello-only", hello)
    put("bridge", "bad-version", p.frame(p.HELLO, b"", version=4))


def parquet():
    node_dir = os.path.join(HERE, "../../node")
    script = os.path.join(node_dir, "run_duckdb.mjs")
    if not shutil.which("node") or not os.path.isdir(os.path.join(node_dir, "node_modules")):
        print("make_seeds: no node/DuckDB (bin/setup-test-deps): Parquet seeds left as they are")
        return
    out = os.path.join(HERE, "parquet")
    os.makedirs(out, exist_ok=True)
    rows = "SELECT ('\\xFF\\xD8' || repeat('a', i))::BLOB AS image, i AS label FROM range(5) t(i)"
    stmts = {
        "plain.parquet": "COPY (%s) TO '%%s' (FORMAT parquet, COMPRESSION uncompressed)" % rows,
        "groups-snappy.parquet": "COPY (%s) TO '%%s' (FORMAT parquet, ROW_GROUP_SIZE 2)" % rows,
        "struct-image.parquet": "COPY (SELECT {'bytes': image} AS image, label::UTINYINT AS label"
                                " FROM (%s)) TO '%%s' (FORMAT parquet)" % rows,
        "nulls.parquet": "COPY (SELECT CASE WHEN label = 1 THEN NULL ELSE image END AS image,"
                         " CASE WHEN label = 2 THEN NULL ELSE label::BIGINT END AS label"
                         " FROM (%s)) TO '%%s' (FORMAT parquet, COMPRESSION zstd)" % rows,
    }
    for name, sql in stmts.items():
        subprocess.run(["node", script, sql % os.path.join(out, name)], check=True)


if __name__ == "__main__":
    tars()
    images()
    manifests()
    loader_states()
    bridge()
    parquet()
