"""bin/bench-vs-torch's output: the tables it prints and the plot it draws (with Pillow), both
read from its JSON report (see bin/bench-vs-torch for the report's layout)."""
import os

COLOURS = {"native": (200, 60, 30), "native-resample": (120, 40, 160),
           "java-resample": (30, 150, 90), "opencv": (230, 150, 20), "dataloader": (40, 90, 200)}
HEAD = "%-44s %10s %13s %13s %8s %8s %8s"
LINE = "%-44s %10.0f %13.2f %13.2f %8.0f %8.0f %8.1f"


def tables(report):
    """Prints, per pipeline, every configuration, the thread scaling and the ratios."""
    for name, p in report["pipelines"].items():
        print("\n== %s: %s (Spindle: %s) ==" % (name, p["transform_dataloader"],
                                                 p["transforms_spindle"]))
        configurations(p)
        scaling(p)
        notes(p)
        ratios(p)


def configurations(p):
    print(HEAD % ("configuration", "images/s", "first batch s", "from start s", "RSS MB",
                 "PSS MB", "CPU s"))
    rows = [("DataLoader workers=%d" % d["num_workers"], d) for d in p["dataloader"]]
    for decoder, s in p["spindle"].items():
        rows += [("Spindle %s threads=%d%s" % (decoder, r["threads"], reduced(r)), r)
                 for r in s["by_threads"]]
        if "with_reduced_decode" in s:
            r = s["with_reduced_decode"]
            rows.append(("Spindle %s threads=%d%s" % (decoder, r["threads"], reduced(r)), r))
    if "spindle_plain_pool" in p:
        r = p["spindle_plain_pool"]
        rows.append(("Spindle native threads=%d, pool%s" % (r["threads"], reduced(r)), r))
    for label, r in rows:
        since_start = r.get("process_start_to_first_batch_s",
                            r.get("jvm_start_to_first_batch_s", float("nan")))
        print(LINE % (label, r["images_per_s"], r["time_to_first_batch_s"], since_start,
                      r["peak_rss_mb"], r["peak_pss_mb"], r["cpu_s"]))


def reduced(run):
    return ", reduced decode" if run.get("reduced_decode") else ""


def scaling(p):
    """Images/s per thread count and the speedup over the fewest threads, per decoder."""
    decoders = list(p["spindle"])
    counts = sorted({r["threads"] for s in p["spindle"].values() for r in s["by_threads"]})
    base = counts[0]
    print("thread scaling (speedup vs %d thread%s):" % (base, "" if base == 1 else "s"))
    print("%8s" % "threads" + "".join("%16s %8s" % (d + " img/s", "speedup") for d in decoders))
    for t in counts:
        cells = ""
        for d in decoders:
            rate = {r["threads"]: r["images_per_s"] for r in p["spindle"][d]["by_threads"]}
            cells += "%16.0f %7.2fx" % (rate[t], rate[t] / rate[base])
        print("%8d" % t + cells)


def notes(p):
    for decoder, s in p["spindle"].items():
        reference = ("native decoder, whole image"
                     if s.get("decode_only_decoder", "opencv").startswith("native")
                     else "OpenCV whole image")
        print("Spindle %s: decoder %s; resample: %s (%s); decode-only (%s,"
              " %d threads) %.0f images/s; preload %.2f s; JVM start to first batch %.2f s; JIT in steady epochs %.2f s;"
              " images/s per epoch %s" % (
                  decoder, s.get("jpeg_decoder"), s.get("resample_path", "java"),
                  s.get("resample"), reference, s["threads"], s["decode_only_images_per_s"],
                  s.get("preload_s", -1), s.get("jvm_start_to_first_batch_s", -1),
                  s.get("jit_compile_s_in_steady_epochs", -1),
                  ", ".join("%.0f" % r for r in s.get("epoch_images_per_s", []))))


def ratios(p):
    decoders = list(p["ratios"])
    print("%-48s" % "ratios (main runs, best DataLoader: workers=%d)"
          % p["best_dataloader_workers"] + "".join("%10s" % d for d in decoders))
    for key in next(iter(p["ratios"].values())):
        print("%-48s" % key + "".join("%10.2f" % p["ratios"][d][key] for d in decoders))
    for decoder, s in p["spindle"].items():
        r = s.get("with_reduced_decode")
        if r:
            print("%s with reduced decode: %.0f images/s, %.2f x the best DataLoader (full"
                  " decode), %.2f x its full decode" % (decoder, r["images_per_s"],
                                                      r["images_per_s_vs_best_dataloader"],
                                                      r["images_per_s_vs_full_decode"]))
    if "native_vs_opencv_images_per_s" in p:
        print("native vs opencv images/s: %.2f" % p["native_vs_opencv_images_per_s"])
    if "native_resample_vs_java_resample_images_per_s" in p:
        print("native resample vs java resample images/s: %.2f"
              % p["native_resample_vs_java_resample_images_per_s"])


def plot(report, path):
    """Images/s against threads (Spindle) and workers (DataLoader), a panel per pipeline."""
    from PIL import Image, ImageDraw, ImageFont
    pipelines = report["pipelines"]
    panel_w, h = 640, 440
    img = Image.new("RGB", (panel_w * len(pipelines), h), "white")
    d = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 13)
    except OSError:
        font = ImageFont.load_default()
    for i, (name, p) in enumerate(pipelines.items()):
        panel(d, font, i * panel_w, panel_w, h, name, p, report["batch_size"])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    img.save(path)


def panel(d, font, x0, w, h, name, p, batch_size):
    left, bottom, top, right = 70, 50, 40, 20
    series = [("Spindle %s (threads)" % decoder, COLOURS.get(decoder, (0, 0, 0)),
               [(r["threads"], r["images_per_s"]) for r in s["by_threads"]])
              for decoder, s in p["spindle"].items()]
    series.append(("PyTorch DataLoader (workers)", COLOURS["dataloader"],
                   [(r["num_workers"], r["images_per_s"]) for r in p["dataloader"]]))
    xmax = max(x for _, _, pts in series for x, _ in pts) or 1
    ymax = max(y for _, _, pts in series for _, y in pts) * 1.15

    def at(x, y):
        return (x0 + left + x / xmax * (w - left - right),
                h - bottom - y / ymax * (h - top - bottom))

    d.line([at(0, 0), at(xmax, 0)], fill="black")
    d.line([at(0, 0), at(0, ymax)], fill="black")
    for x in range(0, xmax + 1, max(1, xmax // 16)):
        d.text((at(x, 0)[0] - 4, h - bottom + 6), str(x), fill="black", font=font)
    step = nice_step(ymax / 6)
    for y in range(0, int(ymax) + 1, step):
        d.line([at(0, y), at(xmax, y)], fill=(225, 225, 225))
        d.text((x0 + 8, at(0, y)[1] - 7), str(y), fill="black", font=font)
    d.text((x0 + left, h - 22), "threads (Spindle) / worker processes (DataLoader)",
           fill="black", font=font)
    d.text((x0 + 8, 8), "%s: images/s, batch %d" % (name, batch_size), fill="black",
           font=font)
    d.text((x0 + 8, 24), p["transform_dataloader"], fill=(90, 90, 90), font=font)
    for i, (label, colour, pts) in enumerate(series):
        pts = sorted(pts)
        if len(pts) > 1:
            d.line([at(x, y) for x, y in pts], fill=colour, width=3)
        for x, y in pts:
            cx, cy = at(x, y)
            d.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=colour)
        d.text((x0 + w - 230, top + 24 + 18 * i), label, fill=colour, font=font)


def nice_step(rough):
    """The smallest of 1, 2, 5 times a power of ten that is at least `rough` (at least 1)."""
    power = 1
    while True:
        for m in (1, 2, 5):
            if m * power >= rough:
                return m * power
        power *= 10
