"""A trainer stand-in the JVM suites launch: consumes a rank's batches and records what arrived.

Each batch becomes one tab-separated line in --out (UTF-8): ``B, number, sha256 of the image
bytes, type, labels, plan indices, keys, shape, device, view`` (lists comma-separated, keys
'|'-separated, shape 'x'-separated), then the loss weights (comma-separated, as ``%g``), as
the trainer saw them through the views: the type it got
(Tensor, ndarray or cupy's ndarray), the device they live on (``cpu``, ``cuda:N``) and, on CUDA,
whether the images are a view of the feeder's slab at the batch's offset (``view`` / ``copy``;
``-`` on the host); the weights come last. Then ``END, wait seconds, state JSON, opener``; or ``ERROR, code, message``
when the feeder refused the trainer. ``--device cuda:N`` reads a feeder on a GPU by CUDA IPC;
``--ipc cupy|driver`` picks how the handle is opened. ``--recipe`` (torch tensors, even with
``--numpy``) also runs the README's loss recipe on each batch (a per-row ``cross_entropy`` of a
linear model, weighted by ``batch.weights``, then ``backward()``) and writes ``L, number, per-row
losses, loss`` after the batch's line (values as ``repr``). ``--fields`` writes ``F, number, JSON``
after it: per extra field (``batch[name]``) its ``type``, and its values: ``values`` (a tensor's
list), ``strings`` (a list of str), or a Ragged's ``rows`` (each ``row(i)`` as a list),
``offsets`` and ``pad`` (``pad(value=-1)`` as nested lists).
"""
import argparse
import hashlib
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import SpindleLoader, ProtocolError  # noqa: E402


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--socket", required=True)
    a.add_argument("--rank", type=int, required=True)
    a.add_argument("--world", type=int, required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--state-in")
    a.add_argument("--state-out")
    a.add_argument("--die-after", type=int, default=0)
    a.add_argument("--hang-after", type=int, default=0,
                   help="after this many batches, sleep holding the last one (never release it)")
    a.add_argument("--device", default="cpu")
    a.add_argument("--expect-error", action="store_true")
    a.add_argument("--numpy", action="store_true", help="numpy arrays instead of torch tensors")
    a.add_argument("--ipc", choices=["cupy", "driver"], help="CUDA IPC opener (default: auto)")
    a.add_argument("--token", help="the run token (default: SPINDLE_RUN_TOKEN)")
    a.add_argument("--recipe", action="store_true",
                   help="run the README's weighted loss recipe on each batch (needs torch)")
    a.add_argument("--fields", action="store_true",
                   help="write each batch's extra fields (F lines)")
    a.add_argument("--scribble", action="store_true",
                   help="after recording a batch, write into its images and labels in place")
    args = a.parse_args()
    state = json.load(open(args.state_in)) if args.state_in else None
    with open(args.out, "w", encoding="utf-8") as out:
        try:
            loader = SpindleLoader(args.socket, args.rank, args.world, device=args.device,
                                   state=state, timeout_s=60,
                                   as_numpy=args.numpy and not args.recipe, ipc=args.ipc,
                                   token=args.token)
        except ProtocolError as e:
            out.write("ERROR\t%s\t%s\n" % (e.code, e))
            return 0 if args.expect_error else 1
        if args.expect_error:
            out.write("CONNECTED\n")
            return 1
        for batch in loader:
            images, labels = batch
            b = loader.last
            assert b is batch
            out.write("\t".join([
                "B", str(b.number), hashlib.sha256(host_bytes(images)).hexdigest(),
                type(images).__name__,
                ",".join(map(str, labels.tolist())), ",".join(map(str, b.indices)),
                "|".join(b.keys), "x".join(map(str, images.shape)), device_of(images),
                view_of(loader, images, b),
                ",".join("%g" % w for w in host_list(b.weights))]) + "\n")
            if args.recipe:
                out.write(recipe(batch) + "\n")
            if args.fields:
                out.write("F\t%d\t%s\n" % (b.number, json.dumps(
                    {name: field_record(batch[name]) for name in b.fields})))
            out.flush()
            if args.scribble:
                images[0, 0, 0, 0] = 1
                images[...] = 255  # in place, on every byte of the batch
                labels[...] = -7
            if args.hang_after and loader.batches_yielded == args.hang_after:
                time.sleep(3600)  # holds the batch: the feeder's trainer timeout ends it
            if args.die_after and loader.batches_yielded == args.die_after:
                with open(args.state_out, "w") as s:
                    json.dump(loader.state_dict(), s)
                os.kill(os.getpid(), signal.SIGKILL)  # dies holding the current batch
        opener = loader._cuda.opener if loader._cuda is not None else "-"
        out.write("END\t%f\t%s\t%s\n" % (loader.wait_s, json.dumps(loader.state_dict()),
                                            opener))
        loader.close()
    return 0


_MODEL = []


def recipe(batch):
    """The README's loss recipe on ``batch``: ``L``, its number, the per-row losses, the loss."""
    import torch
    import torch.nn.functional as F
    images, labels = batch
    x = images.float().flatten(1) / 255
    if not _MODEL:
        torch.manual_seed(0)
        _MODEL.append(torch.nn.Linear(x.shape[1], 10).to(x.device))
    per_row = F.cross_entropy(_MODEL[0](x), labels, reduction="none")
    loss = (per_row * batch.weights).sum() / batch.weights.sum().clamp(min=1)
    loss.backward()
    return "\t".join(["L", str(batch.number), ",".join(map(repr, per_row.tolist())),
                      repr(loss.item())])


def field_record(value):
    """An extra field as the trainer got it, for the suite to compare (see --fields)."""
    if isinstance(value, list):
        return {"type": "list", "strings": value}
    if hasattr(value, "pad"):  # Ragged
        return {"type": type(value).__name__, "dtype": str(value.values.dtype),
                "rows": [host_list(value.row(i)) for i in range(len(value))],
                "offsets": host_list(value.offsets), "pad": host_list(value.pad(value=-1))}
    return {"type": type(value).__name__, "dtype": str(value.dtype), "values": host_list(value)}


def host_bytes(images):
    """The image bytes as the trainer sees them, copied to the host for hashing."""
    if hasattr(images, "cpu"):  # torch
        return images.cpu().numpy().tobytes()
    if hasattr(images, "get"):  # cupy
        return images.get().tobytes()
    return images.tobytes()


def host_list(array):
    """A tensor's or array's values as a host list."""
    if hasattr(array, "cpu"):  # torch
        return array.cpu().tolist()
    if hasattr(array, "get"):  # cupy
        return array.get().tolist()
    return array.tolist()


def device_of(images):
    if hasattr(images, "device") and hasattr(images, "cpu"):
        return str(images.device)
    if hasattr(images, "data") and hasattr(images.data, "device_id"):  # cupy
        return "cuda:%d" % images.data.device_id
    return "cpu"


def view_of(loader, images, b):
    if loader.memory_base is None:
        return "-"
    ptr = images.data_ptr() if hasattr(images, "data_ptr") else images.data.ptr
    return "view" if ptr == loader.memory_base + b.image_offset else "copy"


if __name__ == "__main__":
    sys.exit(main())
