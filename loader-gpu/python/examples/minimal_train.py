import torch.distributed as dist; from spindle_bridge import SpindleLoader
dist.init_process_group("gloo")                    # RANK, WORLD_SIZE, MASTER_ADDR/PORT: set by train
loader = SpindleLoader.from_env()                  # socket, token, device, state, epochs: set too
for epoch in loader.epochs():
    for images, labels in loader: print(dist.get_rank(), epoch, tuple(images.shape), labels[:4].tolist())
