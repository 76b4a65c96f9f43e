"""A training script for the test of train over samples without an image: DDP (gloo, CPU)
ranks that check each batch has no images (``batch.images`` is None), labels -100 (no label is
declared) and the tokens as a Ragged list; record every real row's (weight 1) epoch, key, plan
index and tokens to OUT/text-R.jsonl; and train a tiny next-token model (embedding + linear over
``batch["tokens"].pad()``, id 0 the padding) with a few SGD steps a batch, recording each step's
loss to OUT/loss-R.json: what the test compares with the corpus."""
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from spindle_bridge import Ragged, SpindleLoader


def main():
    out, vocab = sys.argv[1], int(sys.argv[2]) + 1
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, vocab)))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    loader = SpindleLoader.from_env()
    with open(os.path.join(out, "text-%d.jsonl" % rank), "w") as rec:
        for epoch in loader.epochs():
            for batch in loader:
                assert batch.images is None and batch["image"] is None, type(batch.images)
                assert list(batch.fields) == ["text", "tokens"], list(batch.fields)
                assert [int(x) for x in batch.labels] == [-100] * batch.rows
                tokens = batch["tokens"]
                assert isinstance(tokens, Ragged) and len(tokens) == batch.rows
                for r in range(batch.rows):
                    if float(batch.weights[r]) == 1.0:
                        rec.write(json.dumps({
                            "epoch": epoch, "key": batch.keys[r], "index": int(batch.indices[r]),
                            "text": batch["text"][r], "tokens": tokens.row(r).tolist()}) + "\n")
                ids = tokens.pad().long().clone()  # the slot's memory is the feeder's: copy
                weights = torch.as_tensor(batch.weights).clone()
                ids[weights == 0] = 0  # padding rows and stand-ins teach nothing
                for _ in range(3):
                    logits = model(ids[:, :-1])
                    loss = torch.nn.functional.cross_entropy(
                        logits.reshape(-1, vocab), ids[:, 1:].reshape(-1), ignore_index=0)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.append(float(loss))
    with open(os.path.join(out, "loss-%d.json" % rank), "w") as f:
        json.dump(losses, f)
    loader.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
