"""Small CPU training run used by gpualert's scheduler corpus (torch MLP on synthetic data)."""
import argparse, os, signal, sys, time, warnings

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=100)
p.add_argument("--samples", type=int, default=2048)
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--sleep", type=float, default=0.12, help="pause per step (I/O stand-in)")
p.add_argument("--on-sigterm", choices=["default", "raise", "kbd", "checkpoint"], default="default")
p.add_argument("--workers", type=int, default=0)
p.add_argument("--leak-mb", type=float, default=0, help="keep this many MB per step alive (bug)")
p.add_argument("--worker-cache-mb", type=float, default=0, help="per-sample cache in loader workers (bug)")
p.add_argument("--ckpt", default="ckpt")
args = p.parse_args()

rank = int(os.environ.get("SLURM_PROCID", "0"))
torch.manual_seed(1234 + rank)
torch.set_num_threads(1)


def on_term(signum, frame):
    if args.on_sigterm == "raise":
        raise RuntimeError(f"Received signal {signum} (SIGTERM); aborting training at epoch {state['epoch']} step {state['step']}")
    if args.on_sigterm == "checkpoint":
        print(f"[rank{rank}] caught SIGTERM, writing checkpoint {args.ckpt}/last-rank{rank}.pt", flush=True)
        os.makedirs(args.ckpt, exist_ok=True)
        torch.save({"model": model.state_dict(), "epoch": state["epoch"]}, f"{args.ckpt}/last-rank{rank}.pt")
        print(f"[rank{rank}] checkpoint written, exiting", flush=True)
        sys.exit(0)


if args.on_sigterm == "kbd":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
elif args.on_sigterm != "default":
    signal.signal(signal.SIGTERM, on_term)


class Synthetic(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(7)
        self.x = torch.randn(n, 32, generator=g)
        w = torch.randn(32, 1, generator=g)
        self.y = torch.tensor((self.x @ w).squeeze(1) > 0, dtype=torch.long)
        self.cache = []

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if args.worker_cache_mb:
            # "augmentation cache" that is never evicted: grows in every worker
            self.cache.append(torch.ones(int(args.worker_cache_mb * 262144)))
        return self.x[i], self.y[i]


ds = Synthetic(args.samples)
# real torch warning: copy-constructing a tensor from a tensor
ds.y = torch.tensor(ds.y)
loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
lossf = nn.CrossEntropyLoss()
state = {"epoch": 0, "step": 0}
kept = []

print(f"[rank{rank}] torch {torch.__version__} | params {sum(p.numel() for p in model.parameters())} | "
      f"samples {len(ds)} | batch {args.batch_size} | workers {args.workers} | node {os.environ.get('SLURMD_NODENAME', '?')}", flush=True)


def bar(ep, i, n, t0, loss):
    el = time.time() - t0
    rate = i / el if el > 0 else 0.0
    rem = (n - i) / rate if rate > 0 else 0.0
    filled = int(10 * i / n)
    frac = "▏▎▍▌▋▊▉"[int(70 * i / n) % 7] if filled < 10 else ""
    b = ("█" * filled + frac).ljust(10)
    return (f"\rEpoch {ep}: {100 * i // n:3d}%|{b}| {i}/{n} [{int(el) // 60:02d}:{int(el) % 60:02d}<"
            f"{int(rem) // 60:02d}:{int(rem) % 60:02d}, {rate:5.2f}it/s, loss={loss:.4f}]")


for epoch in range(args.epochs):
    state["epoch"] = epoch
    model.train()
    t0 = time.time()
    tot, correct, seen = 0.0, 0, 0
    n = len(loader)
    for i, (x, y) in enumerate(loader, 1):
        state["step"] = i
        out = model(x)
        loss = lossf(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.leak_mb:
            kept.append(torch.randn(int(args.leak_mb * 262144)) + loss.detach())
        tot += loss.item() * len(y)
        correct += (out.argmax(1) == y).sum().item()
        seen += len(y)
        if rank == 0 or args.on_sigterm == "kbd":
            sys.stderr.write(bar(epoch, i, n, t0, loss.item()))
            sys.stderr.flush()
        time.sleep(args.sleep)
    sched.step()
    if rank == 0 or args.on_sigterm == "kbd":
        sys.stderr.write("\n")
    print(f"[rank{rank}] epoch {epoch:3d} | train_loss {tot / seen:.4f} | acc {correct / seen:.4f} | "
          f"lr {sched.get_last_lr()[0]:.2e} | {time.time() - t0:.1f}s", flush=True)
print(f"[rank{rank}] training finished", flush=True)
# SPDX-License-Identifier: MIT
