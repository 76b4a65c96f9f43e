"""A training script for the test of train with token-budget batches (spark.spindle.batchTokens):
DDP (gloo, CPU) ranks that record, per batch, its epoch, rows, the tokens of its real rows (weight
1) and their keys to OUT/budget-R.jsonl (what the test checks against the corpus: every sample once
an epoch, no batch over the budget or the most rows, equal batch counts per rank), and train a tiny
next-token model (embedding + linear over ``batch["tokens"].pad()``, id 0 the padding) with a few
SGD steps a batch, recording each step's loss to OUT/loss-R.json.

Usage: budget_trainer.py OUT VOCABULARY MAX_ROWS BUDGET"""
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from spindle_bridge import SpindleLoader


def main():
    out, vocab = sys.argv[1], int(sys.argv[2]) + 1
    max_rows, budget = int(sys.argv[3]), int(sys.argv[4])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, vocab)))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    loader = SpindleLoader.from_env()
    with open(os.path.join(out, "budget-%d.jsonl" % rank), "w") as rec:
        for epoch in loader.epochs():
            for batch in loader:
                tokens = batch["tokens"]
                weights = torch.as_tensor(batch.weights).clone()
                real = [r for r in range(batch.rows) if float(weights[r]) == 1.0]
                rec.write(json.dumps({
                    "epoch": epoch, "rows": batch.rows,
                    "tokens": sum(len(tokens.row(r)) for r in range(batch.rows)),
                    "keys": [batch.keys[r] for r in real],
                    "token_lists": [tokens.row(r).tolist() for r in real]}) + "\n")
                ids = tokens.pad().long().clone()  # the slot's memory is the feeder's: copy
                ids[weights == 0] = 0  # padding rows and stand-ins teach nothing
                # A padding batch (every row weight 0) teaches nothing but still steps with the
                # other ranks: DDP's all-reduce needs every rank's backward.
                learns = bool((ids[:, 1:] != 0).any())
                for _ in range(3):
                    logits = model(ids[:, :-1])
                    if learns:
                        loss = torch.nn.functional.cross_entropy(
                            logits.reshape(-1, vocab), ids[:, 1:].reshape(-1), ignore_index=0)
                    else:
                        loss = logits.sum() * 0.0
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    if learns:
                        losses.append(float(loss))
    with open(os.path.join(out, "loss-%d.json" % rank), "w") as f:
        json.dump(losses, f)
    loader.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
