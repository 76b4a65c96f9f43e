"""The soak's trainer (bin/spindle bench soak): one rank of a feed --serve run, for every epoch.

Usage: soak_trainer.py SOCKET RANK WORLD EPOCHS MARKERS
Iterates each epoch's batches with one SpindleLoader (torch tensors, a little arithmetic per
batch, as a training step touches its input) and appends "END <epoch> <batches>" to MARKERS after
each epoch, which the soak reads to take its per-epoch samples. SPINDLE_RUN_TOKEN: the run token.
"""
import sys

import torch
from spindle_bridge import SpindleLoader


def main(socket, rank, world, epochs, markers):
    loader = SpindleLoader(socket, rank, world, timeout_s=120, epochs=epochs)
    total = torch.zeros(())
    with loader, open(markers, "a", encoding="utf-8") as out:
        for epoch in loader.epochs():
            n = 0
            for images, labels in loader:
                total += images.float().mean() + labels.sum()
                n += 1
            out.write("END %d %d\n" % (epoch, n))
            out.flush()
    return 0 if torch.isfinite(total) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]))
