"""A training script for the declared-fields test of train: DDP (gloo, CPU) ranks that check each
batch's extra fields have the types the client promises (a tensor of numbers, a list of str, a
Ragged list) and record, for every real row (weight 1), its key, plan index, label, caption,
tokens (the Ragged row and its padded form), score and the MD5 of its image's bytes to
OUT/fields-R.jsonl: what the test compares with the data set and with the DataSource's read."""
import hashlib
import json
import os
import sys

import torch
import torch.distributed as dist

from spindle_bridge import Ragged, SpindleLoader


def main():
    out = sys.argv[1]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loader = SpindleLoader.from_env()
    with open(os.path.join(out, "fields-%d.jsonl" % rank), "w") as rec:
        for epoch in loader.epochs():
            for batch in loader:
                captions, tokens, score = batch["caption"], batch["tokens"], batch["score"]
                assert list(batch.fields) == ["caption", "tokens", "score"], list(batch.fields)
                assert isinstance(captions, list) and all(isinstance(c, str) for c in captions)
                assert isinstance(tokens, Ragged) and len(tokens) == batch.rows
                assert isinstance(score, torch.Tensor) and score.dtype == torch.float32
                padded = tokens.pad(value=-1)
                assert padded.shape == (batch.rows, int(tokens.lengths().max()))
                for r in range(batch.rows):
                    if float(batch.weights[r]) != 1.0:
                        continue
                    row = tokens.row(r).tolist()
                    assert padded[r].tolist() == row + [-1] * (padded.shape[1] - len(row))
                    rec.write(json.dumps({
                        "epoch": epoch, "key": batch.keys[r], "index": int(batch.indices[r]),
                        "label": int(batch.labels[r]), "caption": captions[r], "tokens": row,
                        "score": float(score[r]),
                        "image_md5": hashlib.md5(batch.images[r].numpy().tobytes()).hexdigest(),
                    }) + "\n")
                t = torch.ones(1)
                dist.all_reduce(t)
    loader.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
