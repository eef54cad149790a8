#!/usr/bin/env python3
"""Data-parallel training over the gloo backend (CPU) for gpualert's corpus.

Launched by torchrun or by gen/launch.py.  `--case` makes one rank
(`--fail-rank`) fail for real at step `--fail-at`."""
import argparse
import datetime
import math
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", default="none")
    p.add_argument("--fail-rank", type=int, default=1)
    p.add_argument("--fail-at", type=int, default=15)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--timeout", type=float, default=20)
    p.add_argument("--save", default=None)
    args = p.parse_args()
    args.case = os.environ.get("FAULT_CASE", args.case)
    args.fail_at = int(os.environ.get("FAULT_STEP", args.fail_at))
    args.fail_rank = int(os.environ.get("FAULT_RANK", args.fail_rank))
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.manual_seed(1234 + rank)
    print(f"[rank {rank}] initializing gloo process group (world_size={world}, "
          f"master={os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')})", flush=True)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    model = DDP(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    if rank == 0:
        print(f"model wrapped in DDP, {sum(p.numel() for p in model.parameters())} params", flush=True)
    t0 = time.time()
    for step in range(args.steps):
        x = torch.randn(32, 16)
        y = torch.randint(0, 4, (32,))
        if rank == args.fail_rank and step == args.fail_at:
            c = args.case
            if c == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if c == "hang":
                time.sleep(args.timeout * 3)
            if c == "keyerror":
                y = {"label": y}["labels"]
            if c == "memoryerror":
                buf = bytearray(1 << 45)
            if c == "segv":
                import ctypes
                ctypes.string_at(0)
            if c == "nan":
                x = x * float("inf")
            if c == "exit":
                sys.exit(1)
        loss = F.cross_entropy(model(x), y)
        if not math.isfinite(loss.item()):
            raise FloatingPointError(f"rank {rank}: loss is {loss.item()} at step {step}")
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            sys.stderr.write(f"\rtrain: {step + 1}/{args.steps} loss={loss.item():.4f}")
            sys.stderr.flush()
        if step % 10 == 9:
            print(f"\n[rank {rank}] step {step + 1} loss {loss.item():.4f} ({(time.time() - t0):.1f}s)", flush=True)
        if args.save and step % 10 == 9:
            torch.save(model.state_dict(), os.path.join(args.save, f"rank{rank}_step{step + 1}.pt"))
    dist.barrier()
    if rank == 0:
        print("\ntraining done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
