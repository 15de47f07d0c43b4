"""Distributed data parallel on CPU over the nodes of a PBS job (gloo), the smallest real case.

Started once per rank by torchrun (examples/ddp.sh: `pbsdsh -u torchrun ... ddp.py`), which sets
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT; `init_process_group` reads them
(init_method "env://", the default). Each rank all-reduces its rank + 1, checks the sum
1 + 2 + ... + WORLD_SIZE, takes one DDP training step of a tiny model and checks that every
rank ends with the same weights. Prints one line per rank:
    ddp rank <r> of <n> on <host> all_reduce <sum> ok
and exits non-zero when a check fails.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main() -> int:
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    host = socket.gethostname()

    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    expected = world * (world + 1) / 2
    reduced_ok = value.item() == expected

    torch.manual_seed(0)  # the same initial model everywhere (DDP also broadcasts rank 0's)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(rank)  # each rank its own data
    inputs, targets = torch.randn(8, 4, generator=generator), torch.randn(8, 1, generator=generator)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(inputs), targets).backward()  # gradients all-reduced
    optimizer.step()
    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.zeros_like(weights) for _ in range(world)]
    dist.all_gather(gathered, weights)
    same_ok = all(torch.equal(weights, other) for other in gathered)

    ok = reduced_ok and same_ok
    status = "ok" if ok else f"FAILED (expected {expected:g}, weights equal: {same_ok})"
    # One write per line: the ranks of a node share torchrun's stdout, and print() may write
    # the text and its newline separately (unbuffered), interleaving two ranks' lines.
    os.write(1, f"ddp rank {rank} of {world} on {host} all_reduce {value.item():g} {status}\n".encode())
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
