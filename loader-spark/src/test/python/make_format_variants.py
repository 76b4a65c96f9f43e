"""Writes src/test/resources/formats/: small images in the formats beside JPEG and PNG that Spindle
decodes (BMP, PNM, TIFF, WebP, GIF) and PNGs with an eXIf chunk, in the variants users have, and
variants.tsv, what Spindle must make of each:

    exact      decodes to the bytes torchvision's loader (Pillow 9.4) gives
    within1    decodes within one 8-bit step of them (CMYK TIFF: OpenCV's integer conversion)
    decodes    decodes, but Pillow 9.4 reads it otherwise (a Pillow bug or a malformed file)
    refused    quarantined with a message starting with the detail column

Images come from a 37x23 crop of photos/photo0.jpg, written by Pillow where Pillow writes the
variant and by the small encoders here (BMP, PNM, TIFF byte layouts) where it does not. Files
whose name contains "exif" carry an EXIF orientation that ImageOps.exif_transpose applies.
Run with Debian's python3-pil:

    /usr/bin/python3 src/test/python/make_format_variants.py
"""
import io
import os
import struct
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "resources", "formats")
W, H = 37, 23
ROWS = []  # (name, expectation, detail)


def put(name, data, expect="exact", detail=""):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    ROWS.append((name, expect, detail))


def pil(img, fmt, **options):
    b = io.BytesIO()
    img.save(b, fmt, **options)
    return b.getvalue()


def photo():
    src = os.path.join(HERE, "..", "resources", "photos", "photo0.jpg")
    return Image.open(src).convert("RGB").resize((W, H), Image.BILINEAR)


def with_alpha(img):
    rgba = img.convert("RGBA")
    rgba.putalpha(Image.frombytes("L", img.size, bytes((x * 7 + y * 11) % 256
                                                       for y in range(img.size[1])
                                                       for x in range(img.size[0]))))
    return rgba


# ---------------------------------------------------------------- BMP

def bmp(width, height, bits, pixels, palette=None, header=40, compression=0, masks=None,
        topdown=False, colours_used=None, pixels_at=None):
    """pixels: the pixel array as stored (rows bottom-up unless topdown, padded to 4 bytes)."""
    pal = b""
    if palette is not None:
        pal = b"".join(bytes((b, g, r)) + (b"" if header == 12 else b"\0") for r, g, b in palette)
    fields = struct.pack("<III", *masks[:3]) if masks is not None and header == 40 else b""
    if header == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        used = colours_used if colours_used is not None else (len(palette) if palette else 0)
        info = struct.pack("<IiiHHIIiiII", header, width, -height if topdown else height, 1, bits,
                           compression, len(pixels), 2835, 2835, used, 0)
        if header >= 108:
            m = list(masks or ()) + [0] * 4
            info += struct.pack("<IIII", *m[:4]) + b"sRGB" + b"\0" * 48
        if header == 124:
            info += struct.pack("<IIII", 4, 0, 0, 0)
    start = 14 + len(info) + len(fields) + len(pal)
    at = start if pixels_at is None else pixels_at
    body = info + fields + pal + b"\0" * (at - start)
    return b"BM" + struct.pack("<IHHI", 14 + len(body) + len(pixels), 0, 0, at) + body + pixels


def rows_of(values, width, height, bits, topdown=False):
    """Packs rows of per-pixel values (palette indices, or ints of bits/8 bytes) as BMP stores."""
    out = bytearray()
    order = range(height) if topdown else range(height - 1, -1, -1)
    for y in order:
        row = values[y * width:(y + 1) * width]
        line = bytearray()
        if bits <= 8:
            acc = n = 0
            for v in row:
                acc, n = acc << bits | v, n + bits
                if n == 8:
                    line.append(acc)
                    acc = n = 0
            if n:
                line.append(acc << (8 - n))
        else:
            for v in row:
                line += v.to_bytes(bits // 8, "little")
        out += line + b"\0" * (-len(line) % 4)
    return bytes(out)


def rle8(rows, absolute=True):
    out = bytearray()
    for row in rows[::-1]:
        x = 0
        while x < len(row):
            n = 1
            while x + n < len(row) and row[x + n] == row[x] and n < 255:
                n += 1
            if n >= 3 or not absolute:
                out += bytes((n, row[x]))
                x += n
                continue
            m = 0
            while x + m < len(row) and m < 255 and not (
                    x + m + 2 < len(row) and row[x + m] == row[x + m + 1] == row[x + m + 2]):
                m += 1
            if m < 3:
                out += b"".join(bytes((1, v)) for v in row[x:x + m])
            else:
                out += bytes((0, m)) + bytes(row[x:x + m]) + (b"\0" if m % 2 else b"")
            x += m
        out += b"\0\0"
    return bytes(out + b"\0\1")


def rle4(rows, absolute=True):
    out = bytearray()
    for row in rows[::-1]:
        x = 0
        while x < len(row):
            n = 1
            while x + n < len(row) and row[x + n] == row[x] and n < 255:
                n += 1
            if n >= 4 or not absolute:
                out += bytes((n, row[x] << 4 | row[x]))
                x += n
                continue
            m = 0
            while x + m < len(row) and m < 254 and not (
                    x + m + 3 < len(row) and row[x + m] == row[x + m + 1] == row[x + m + 2] == row[x + m + 3]):
                m += 1
            if m < 3:
                out += b"".join(bytes((1, v << 4)) for v in row[x:x + m])
            else:
                v = row[x:x + m] + [0] * (m % 2)
                packed = bytes(v[i] << 4 | v[i + 1] for i in range(0, len(v), 2))
                out += bytes((0, m)) + packed + (b"\0" if len(packed) % 2 else b"")
            x += m
        out += b"\0\0"
    return bytes(out + b"\0\1")


def bmps(img):
    rgb = list(img.getdata())
    put("bmp-rgb.bmp", pil(img, "BMP"))
    put("bmp-l.bmp", pil(img.convert("L"), "BMP"))
    put("bmp-1.bmp", pil(img.convert("1"), "BMP"))
    put("bmp-p.bmp", pil(img.convert("P", palette=Image.ADAPTIVE, colors=200), "BMP"))
    put("bmp-rgba.bmp", pil(with_alpha(img), "BMP"))
    bgr = [r << 16 | g << 8 | b for r, g, b in rgb]
    for header, name in ((12, "core"), (108, "v4"), (124, "v5")):
        put(f"bmp-24-{name}.bmp", bmp(W, H, 24, rows_of(bgr, W, H, 24), header=header))
    put("bmp-24-topdown.bmp", bmp(W, H, 24, rows_of(bgr, W, H, 24, topdown=True), topdown=True))
    for bits, colours in ((1, 2), (4, 16), (8, 16), (8, 256)):
        q = img.quantize(colors=colours)
        pal = (q.getpalette() + [0] * 768)[:3 * colours]
        palette = [tuple(pal[i:i + 3]) for i in range(0, 3 * colours, 3)]
        index = [min(v, colours - 1) for v in q.getdata()]
        name = f"bmp-{bits}-{colours}c"
        put(name + ".bmp", bmp(W, H, bits, rows_of(index, W, H, bits), palette))
        if bits > 1:
            put(name + "-core.bmp", bmp(W, H, bits, rows_of(index, W, H, bits), palette, header=12))
            put(name + "-topdown.bmp", bmp(W, H, bits, rows_of(index, W, H, bits, True), palette,
                                           topdown=True))
    q = img.quantize(colors=256)
    pal = q.getpalette()[:48]
    put("bmp-8-beyond-palette.bmp",
        bmp(W, H, 8, rows_of(list(q.getdata()), W, H, 8), [tuple(pal[i:i + 3]) for i in
                                                           range(0, 48, 3)]),
        "decodes", "indices past its 16 colours: OpenCV black, Pillow grey")
    put("bmp-8-pixels-in-palette.bmp",
        bmp(W, H, 8, rows_of(list(q.getdata()), W, H, 8), [(i, i, 255 - i) for i in range(256)],
            pixels_at=14 + 40),
        "refused", "Garbled BMP header: pixel data at byte 54, where its palette starts")
    p555 = [(r >> 3) << 10 | (g >> 3) << 5 | b >> 3 for r, g, b in rgb]
    p565 = [(r >> 3) << 11 | (g >> 2) << 5 | b >> 3 for r, g, b in rgb]
    put("bmp-16-555.bmp", bmp(W, H, 16, rows_of(p555, W, H, 16)))
    put("bmp-16-555-fields.bmp", bmp(W, H, 16, rows_of(p555, W, H, 16), compression=3,
                                     masks=(0x7C00, 0x3E0, 0x1F)))
    put("bmp-16-565-fields.bmp", bmp(W, H, 16, rows_of(p565, W, H, 16), compression=3,
                                     masks=(0xF800, 0x7E0, 0x1F)))
    ramp = list(range(0, 65536, 64))  # every 16-bit value's top 10 bits: each 5/6-bit level
    put("bmp-16-555-ramp.bmp", bmp(32, 32, 16, rows_of([v >> 1 for v in ramp], 32, 32, 16)))
    put("bmp-16-565-ramp.bmp", bmp(32, 32, 16, rows_of(ramp, 32, 32, 16), compression=3,
                                   masks=(0xF800, 0x7E0, 0x1F)))
    put("bmp-16-565-v5.bmp", bmp(W, H, 16, rows_of(p565, W, H, 16), header=124, compression=3,
                                 masks=(0xF800, 0x7E0, 0x1F, 0)),
        "refused", "Unsupported BMP: 16-bit bit fields in a 124-byte header")
    put("bmp-24-fields.bmp", bmp(W, H, 24, rows_of(bgr, W, H, 24), compression=3,
                                 masks=(0xFF0000, 0xFF00, 0xFF)),
        "refused", "Unsupported BMP: bit fields with 24 bits a pixel")
    rgba = list(with_alpha(img).getdata())
    bgra = [a << 24 | r << 16 | g << 8 | b for r, g, b, a in rgba]
    put("bmp-32.bmp", bmp(W, H, 32, rows_of(bgra, W, H, 32)))
    put("bmp-32-bgrx-fields.bmp", bmp(W, H, 32, rows_of(bgra, W, H, 32), compression=3,
                                      masks=(0xFF0000, 0xFF00, 0xFF)))
    for header in (108, 124):
        put(f"bmp-32-bgra-h{header}.bmp", bmp(W, H, 32, rows_of(bgra, W, H, 32), header=header,
                                              compression=3,
                                              masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000)))
    rgba_le = [a << 24 | b << 16 | g << 8 | r for r, g, b, a in rgba]
    put("bmp-32-rgba-h124.bmp", bmp(W, H, 32, rows_of(rgba_le, W, H, 32), header=124,
                                    compression=3, masks=(0xFF, 0xFF00, 0xFF0000, 0xFF000000)))
    xbgr = [r << 24 | g << 16 | b << 8 for r, g, b, a in rgba]
    put("bmp-32-xbgr-h108.bmp", bmp(W, H, 32, rows_of(xbgr, W, H, 32), header=108,
                                    compression=3, masks=(0xFF000000, 0xFF0000, 0xFF00, 0)))
    put("bmp-32-xbgr-h40.bmp", bmp(W, H, 32, rows_of(xbgr, W, H, 32), compression=3,
                                   masks=(0xFF000000, 0xFF0000, 0xFF00)),
        "refused", "Unsupported BMP bit fields R FF000000 G FF0000 B FF00 A 0 in a 40-byte header")
    q8 = img.quantize(colors=64)
    pal8 = [tuple(q8.getpalette()[i:i + 3]) for i in range(0, 192, 3)]
    rows8 = [list(q8.getdata())[y * W:(y + 1) * W] for y in range(H)]
    put("bmp-rle8.bmp", bmp(W, H, 8, rle8(rows8), pal8, compression=1))
    put("bmp-rle8-runs.bmp", bmp(W, H, 8, rle8(rows8, absolute=False), pal8, compression=1))
    q4 = img.quantize(colors=16)
    pal4 = [tuple(q4.getpalette()[i:i + 3]) for i in range(0, 48, 3)]
    rows4 = [list(q4.getdata())[y * W:(y + 1) * W] for y in range(H)]
    put("bmp-rle4-runs.bmp", bmp(W, H, 4, rle4(rows4, absolute=False), pal4, compression=2))
    put("bmp-rle4.bmp", bmp(W, H, 4, rle4(rows4), pal4, compression=2),
        "decodes", "absolute runs of odd length: Pillow 9.4 reads one byte short")
    put("bmp-header-56.bmp", bmp(W, H, 24, rows_of(bgr, W, H, 24))[:14] + struct.pack("<I", 56)
        + bmp(W, H, 24, rows_of(bgr, W, H, 24))[18:], "refused", "Unsupported BMP header size 56")


# ---------------------------------------------------------------- PNM

def pnms(img):
    raw = img.tobytes()
    gray = img.convert("L").tobytes()
    put("pnm-p6.ppm", pil(img, "PPM"))
    put("pnm-p5.pgm", pil(img.convert("L"), "PPM"))
    put("pnm-p4.pbm", pil(img.convert("1"), "PPM"))
    put("pnm-p6-comment.ppm", b"P6\n# made by hand\n%d # width\n%d\n255\n" % (W, H) + raw)
    put("pnm-p3.ppm", b"P3\n# plain\n%d %d\n255\n" % (W, H) + text(raw))
    put("pnm-p2.pgm", b"P2\n%d %d\n255\n" % (W, H) + text(gray))
    put("pnm-p1.pbm", b"P1\n%d %d\n" % (W, H) + text(1 if v < 128 else 0 for v in gray))
    for m in (1, 15, 100):
        put(f"pnm-p6-max{m}.ppm", b"P6\n%d %d\n%d\n" % (W, H, m) + bytes(v * m // 255 for v in raw))
        put(f"pnm-p5-max{m}.pgm", b"P5\n%d %d\n%d\n" % (W, H, m)
            + bytes(v * m // 255 for v in gray))
        put(f"pnm-p3-max{m}.ppm", b"P3\n%d %d\n%d\n" % (W, H, m) + text(v * m // 255 for v in raw))
    put("pnm-p2-max15.pgm", b"P2\n%d %d\n15\n" % (W, H) + text(v * 15 // 255 for v in gray))
    deep = [v * 257 + (v * 31) % 256 if v < 255 else 65535 for v in raw]
    put("pnm-p6-16.ppm", b"P6\n%d %d\n65535\n" % (W, H) + struct.pack(">%dH" % len(deep), *deep))
    put("pnm-p6-max1000.ppm", b"P6\n%d %d\n1000\n" % (W, H)
        + struct.pack(">%dH" % len(raw), *(v * 1000 // 255 for v in raw)))
    put("pnm-p3-max1000.ppm", b"P3\n%d %d\n1000\n" % (W, H) + text(v * 1000 // 255 for v in raw))
    put("pnm-p5-16.pgm", b"P5\n%d %d\n65535\n" % (W, H)
        + struct.pack(">%dH" % len(gray), *(v * 257 for v in gray)),
        "refused", "Unsupported PNM: 16-bit grayscale (maximum value 65535)")


def text(values):
    return " ".join(str(v) for v in values).encode() + b"\n"


# ---------------------------------------------------------------- TIFF

def tiff(width, height, samples, bits, units, photometric=2, planar=1, extra=(), tile=None,
         order="<"):
    """An uncompressed TIFF: units are its strips (one, or one per plane) or tiles, as stored."""
    u16, u32 = order + "H", order + "I"
    entries = [(256, 4, [width]), (257, 4, [height]), (258, 3, [bits] * samples), (259, 3, [1]),
               (262, 3, [photometric]), (277, 3, [samples]), (284, 3, [planar])]
    if tile:
        entries += [(322, 4, [tile[0]]), (323, 4, [tile[1]]), (324, 4, None),
                    (325, 4, [len(u) for u in units])]
    else:
        rows = height if len(units) == (samples if planar == 2 else 1) else -(-height // len(units))
        entries += [(273, 4, None), (278, 4, [rows]), (279, 4, [len(u) for u in units])]
    entries = sorted(entries + list(extra), key=lambda e: e[0])
    head = 8 + 2 + 12 * len(entries) + 4
    blobs = bytearray()
    fields = []
    for tag, kind, values in entries:
        if values is None:
            fields.append((tag, kind, len(units), None))
            continue
        packed = b"".join(struct.pack(order + ("H" if kind == 3 else "I"), v) for v in values)
        if len(packed) <= 4:
            fields.append((tag, kind, len(values), packed.ljust(4, b"\0")))
        else:
            fields.append((tag, kind, len(values), struct.pack(u32, head + len(blobs))))
            blobs += packed
    table = head + len(blobs)
    data_at = table + 4 * len(units)
    offsets, p = [], data_at
    for u in units:
        offsets.append(p)
        p += len(u)
    blobs += b"".join(struct.pack(u32, o) for o in offsets)
    out = bytearray((b"II" if order == "<" else b"MM") + struct.pack(u16, 42)
                    + struct.pack(u32, 8) + struct.pack(u16, len(entries)))
    for tag, kind, count, value in fields:
        if value is None:
            value = struct.pack(u32, offsets[0] if len(units) == 1 else table)
        out += struct.pack(u16, tag) + struct.pack(u16, kind) + struct.pack(u32, count) + value
    return bytes(out + b"\0\0\0\0" + blobs + b"".join(units))


def tiles_of(buf, samples, tw, th):
    out = []
    for ty in range(0, H, th):
        for tx in range(0, W, tw):
            t = bytearray()
            for y in range(ty, ty + th):
                for x in range(tx, tx + tw):
                    inside = y < H and x < W
                    t += buf[(y * W + x) * samples:(y * W + x + 1) * samples] if inside else \
                        b"\0" * samples
            out.append(bytes(t))
    return out


def pack(values, bits):
    out = bytearray()
    for y in range(H):
        acc = n = 0
        for v in values[y * W:(y + 1) * W]:
            acc, n = acc << bits | v, n + bits
            if n == 8:
                out.append(acc)
                acc = n = 0
        if n:
            out.append(acc << (8 - n))
    return bytes(out)


def tiffs(img):
    raw = img.tobytes()
    gray = img.convert("L").tobytes()
    put("tiff-rgb.tif", pil(img, "TIFF"))
    for compression in ("tiff_lzw", "tiff_adobe_deflate", "packbits", "jpeg"):
        put(f"tiff-rgb-{compression.replace('tiff_', '')}.tif",
            pil(img, "TIFF", compression=compression))
    put("tiff-l.tif", pil(img.convert("L"), "TIFF"))
    put("tiff-l-lzw.tif", pil(img.convert("L"), "TIFF", compression="tiff_lzw"))
    put("tiff-1.tif", pil(img.convert("1"), "TIFF"))
    put("tiff-1-g4.tif", pil(img.convert("1"), "TIFF", compression="group4"))
    put("tiff-p.tif", pil(img.convert("P", palette=Image.ADAPTIVE, colors=100), "TIFF"))
    put("tiff-la.tif", pil(with_alpha(img).convert("LA"), "TIFF"))
    put("tiff-cmyk.tif", pil(img.convert("CMYK"), "TIFF"))
    put("tiff-multipage.tif", pil(img, "TIFF", save_all=True,
                                  append_images=[img.rotate(90, expand=True)]))
    for o in range(1, 9):
        put(f"tiff-orientation{o}.tif", pil(img, "TIFF", tiffinfo={274: o}))
    put("tiff-be-rgb.tif", tiff(W, H, 3, 8, [raw], order=">"))
    put("tiff-planar.tif", tiff(W, H, 3, 8, [raw[0::3], raw[1::3], raw[2::3]], planar=2))
    rows = [raw[y * W * 3:(y + 1) * W * 3] for y in range(H)]
    put("tiff-strips5.tif", tiff(W, H, 3, 8, [b"".join(rows[i:i + 5]) for i in range(0, H, 5)]))
    put("tiff-tiled.tif", tiff(W, H, 3, 8, tiles_of(raw, 3, 32, 32), tile=(32, 32)))
    put("tiff-tiled-orientation6.tif", tiff(W, H, 3, 8, tiles_of(raw, 3, 32, 32), tile=(32, 32),
                                            extra=[(274, 3, [6])]),
        "refused", "Unsupported TIFF: tiles with orientation 6")
    put("tiff-tiled-768.tif", tiff(W, H, 3, 8, tiles_of(raw, 3, 16, 16), tile=(16, 16)),
        "refused", "Unsupported TIFF: uncompressed tiles of 768 bytes")
    for o in (3, 7):
        put(f"tiff-gray-orientation{o}.tif", tiff(W, H, 1, 8, [gray], photometric=1,
                                                  extra=[(274, 3, [o])]))
    put("tiff-miniswhite.tif", tiff(W, H, 1, 8, [gray], photometric=0))
    colour_map = [(i * 4111) & 0xFFFF for i in range(16)] + [(i * 997 * 64) & 0xFFFF
                                                             for i in range(16)] + \
                 [i * 4369 for i in range(16)]
    put("tiff-palette4.tif", tiff(W, H, 1, 4, [pack([v >> 4 for v in gray], 4)], photometric=3,
                                  extra=[(320, 3, colour_map)]))
    rgbx = bytes(v for i in range(W * H) for v in raw[3 * i:3 * i + 3] + bytes([i % 256]))
    put("tiff-rgbx.tif", tiff(W, H, 4, 8, [rgbx], extra=[(338, 3, [0])]))
    deep = [v * 257 + (v * 31) % 256 if v < 255 else 65535 for v in raw]
    deep_bytes = struct.pack("<%dH" % len(deep), *deep)
    put("tiff-rgb16.tif", tiff(W, H, 3, 16, [deep_bytes]))
    put("tiff-rgb16-orientation6.tif", tiff(W, H, 3, 16, [deep_bytes], extra=[(274, 3, [6])]))
    cmyk = bytes((x * 5 + y * 3) % 256 if c < 3 else (x * 7) % 256
                 for y in range(H) for x in range(W) for c in range(4))
    put("tiff-cmyk-k.tif", tiff(W, H, 4, 8, [cmyk], photometric=5), "within1")
    put("tiff-rgba.tif", pil(with_alpha(img), "TIFF"), "refused",
        "Unsupported TIFF: RGB with an alpha channel")
    rgba = bytes(v for i in range(W * H) for v in raw[3 * i:3 * i + 3] + bytes([i * 13 % 256]))
    put("tiff-rgba-associated.tif", tiff(W, H, 4, 8, [rgba], extra=[(338, 3, [1])]), "refused",
        "Unsupported TIFF: RGB with an alpha channel")
    put("tiff-gray16.tif", pil(Image.frombytes("I;16", (W, H), struct.pack(
        "<%dH" % len(gray), *(v * 257 for v in gray))), "TIFF"), "refused",
        "Unsupported TIFF: 16-bit grayscale")
    put("tiff-gray4.tif", tiff(W, H, 1, 4, [pack([v >> 4 for v in gray], 4)], photometric=1),
        "refused", "Unsupported TIFF: 4-bit grayscale")
    put("tiff-float.tif", tiff(W, H, 1, 32, [struct.pack("<%df" % len(gray), *(v / 255 for v in
                                                                              gray))],
                               photometric=1, extra=[(339, 3, [3])]), "refused",
        "Unsupported TIFF sample format 3")


# ---------------------------------------------------------------- WebP, GIF, PNG

def exif(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def webps(img):
    rgba = with_alpha(img)
    put("webp-lossy.webp", pil(img, "WEBP", quality=80))
    put("webp-lossy-q100.webp", pil(img, "WEBP", quality=100))
    put("webp-lossless.webp", pil(img, "WEBP", lossless=True))
    put("webp-lossy-alpha.webp", pil(rgba, "WEBP", quality=80))
    put("webp-lossless-alpha.webp", pil(rgba, "WEBP", lossless=True))
    put("webp-gray.webp", pil(img.convert("L"), "WEBP", lossless=True))
    put("webp-animated.webp", pil(img, "WEBP", save_all=True, lossless=True, duration=100,
                                  append_images=[img.rotate(180)]))
    put("webp-animated-lossy.webp", pil(img, "WEBP", save_all=True, quality=70, duration=100,
                                        append_images=[img.rotate(180)]))
    for o in (3, 6, 8):
        put(f"webp-exif{o}.webp", pil(img, "WEBP", lossless=True, exif=exif(o)))


def gifs(img):
    p256 = img.convert("P", palette=Image.ADAPTIVE, colors=256)
    p64 = img.convert("P", palette=Image.ADAPTIVE, colors=64)
    put("gif-256.gif", pil(p256, "GIF"))
    put("gif-64.gif", pil(p64, "GIF"))
    put("gif-l.gif", pil(img.convert("L"), "GIF"))
    put("gif-interlaced.gif", pil(p64, "GIF", interlace=True))
    put("gif-animated.gif", pil(img, "GIF", save_all=True, duration=100,
                                append_images=[img.rotate(180)]))
    for t in (0, 3, 63):
        put(f"gif-transparent{t}.gif", pil(p64, "GIF", transparency=t))
    small = img.crop((0, 0, 20, 12)).convert("P", palette=Image.ADAPTIVE, colors=64)
    for name, options in (("gif-partial.gif", {}), ("gif-partial-transparent.gif",
                                                    {"transparency": 5})):
        put(name, partial(pil(small, "GIF", **options)))
    put("gif-local-table.gif", local_table(pil(p64, "GIF")))
    put("gif-outside.gif", partial(pil(small, "GIF"), left=30), "refused",
        "Unsupported GIF: its first image (20x12 at 30,6)")
    put("gif-no-table.gif", no_table(pil(p64, "GIF")), "refused", "Unsupported GIF without a"
                                                                  " colour table")


def gif_blocks(data):
    """(screen descriptor end, offset of the first image descriptor) of a GIF written by Pillow."""
    flags = data[10]
    p = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    while data[p] == 0x21:
        p += 2
        while data[p]:
            p += data[p] + 1
        p += 1
    return p


def partial(data, left=7, top=6):
    """The GIF's screen grown to 37x23, its image moved to (left, top)."""
    d = bytearray(data)
    d[6:10] = struct.pack("<HH", W, H)
    p = gif_blocks(d)
    d[p + 1:p + 5] = struct.pack("<HH", left, top)
    return bytes(d)


def local_table(data):
    """The GIF's global colour table moved into its first image as a local one."""
    d = bytearray(data)
    flags = d[10]
    size = 3 << ((flags & 7) + 1)
    table = d[13:13 + size]
    d[10] = flags & 0x70
    del d[13:13 + size]
    p = gif_blocks(d)
    d[p + 9] = d[p + 9] | 0x80 | (flags & 7)
    return bytes(d[:p + 10] + table + d[p + 10:])


def no_table(data):
    d = bytearray(data)
    flags = d[10]
    del d[13:13 + (3 << ((flags & 7) + 1))]
    d[10] = flags & 0x70
    return bytes(d)


def pngs(img):
    for o in range(1, 9):
        put(f"png-exif{o}.png", pil(img, "PNG", exif=exif(o)))
    plain = pil(img, "PNG")
    tiff_body = exif(6)[6:] if exif(6).startswith(b"Exif\0\0") else exif(6)
    chunk = struct.pack(">I", len(tiff_body)) + b"eXIf" + tiff_body + struct.pack(
        ">I", zlib.crc32(b"eXIf" + tiff_body))
    end = plain.rindex(b"IEND") - 4
    put("png-exif6-after-idat.png", plain[:end] + chunk + plain[end:])


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(os.path.join(OUT, name))
    img = photo()
    bmps(img)
    pnms(img)
    tiffs(img)
    webps(img)
    gifs(img)
    pngs(img)
    with open(os.path.join(OUT, "variants.tsv"), "w") as f:
        f.write("# file\texpectation\tdetail (make_format_variants.py)\n")
        for row in ROWS:
            f.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
