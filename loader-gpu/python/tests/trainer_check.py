"""A trainer stand-in the JVM suites launch: consumes a rank's batches and records what arrived.

Each batch becomes one tab-separated line in --out (UTF-8): ``B, number, sha256 of the image
bytes, type, labels, plan indices, keys`` (lists comma-separated, keys '|'-separated), as the trainer
saw them through the shared-memory views, and the type it got (Tensor or ndarray). Then ``END, wait seconds, state JSON``; or ``ERROR,
code, message`` when the feeder refused the trainer.
"""
import argparse
import hashlib
import json
import os
import signal
import sys

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
    a.add_argument("--device", default="cpu")
    a.add_argument("--expect-error", action="store_true")
    a.add_argument("--numpy", action="store_true", help="numpy arrays instead of torch tensors")
    args = a.parse_args()
    state = json.load(open(args.state_in)) if args.state_in else None
    with open(args.out, "w", encoding="utf-8") as out:
        try:
            loader = SpindleLoader(args.socket, args.rank, args.world, device=args.device,
                                   state=state, timeout_s=60, as_numpy=args.numpy)
        except ProtocolError as e:
            out.write("ERROR\t%s\t%s\n" % (e.code, e))
            return 0 if args.expect_error else 1
        if args.expect_error:
            out.write("CONNECTED\n")
            return 1
        for images, labels in loader:
            b = loader.last
            raw = images.numpy() if hasattr(images, "numpy") else images
            out.write("\t".join([
                "B", str(b.number), hashlib.sha256(raw.tobytes()).hexdigest(),
                type(images).__name__,
                ",".join(map(str, labels.tolist())), ",".join(map(str, b.indices)),
                "|".join(b.keys), "x".join(map(str, images.shape))]) + "\n")
            out.flush()
            if args.die_after and loader.batches_yielded == args.die_after:
                with open(args.state_out, "w") as s:
                    json.dump(loader.state_dict(), s)
                os.kill(os.getpid(), signal.SIGKILL)  # dies holding the current batch
        out.write("END\t%f\t%s\n" % (loader.wait_s, json.dumps(loader.state_dict())))
        loader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
