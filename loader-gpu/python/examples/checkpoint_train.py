import os, sys, torch, torch.distributed as dist, torch.nn as nn, torch.nn.functional as F
from spindle_bridge import SpindleLoader, checkpoint
dist.init_process_group("gloo")
model = nn.parallel.DistributedDataParallel(nn.Sequential(          # your model
    nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loader = SpindleLoader.from_env()
path = os.path.join(sys.argv[1], "rank-%d.pt" % dist.get_rank())  # one file per rank
extra = checkpoint.load(path, model, opt, loader)   # None: no checkpoint, a fresh start
step = extra["step"] if extra else 0
for epoch in loader.epochs():
    for batch in loader:
        x = batch.images.permute(0, 3, 1, 2).float() / 255
        loss = (F.cross_entropy(model(x), batch.labels, reduction="none") * batch.weights).sum()
        opt.zero_grad(); (loss / batch.weights.sum().clamp(min=1)).backward(); opt.step()
        step += 1
        if step % 100 == 0:                         # the same steps on every rank
            checkpoint.save(path, model, opt, loader, step=step)
    checkpoint.save(path, model, opt, loader, step=step)   # and at each epoch's end
