"""Logistic regression by hand in numpy with tqdm-style progress (gpualert scheduler corpus)."""
import argparse, os, signal, sys, time

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=200)
p.add_argument("--steps", type=int, default=50)
p.add_argument("--sleep", type=float, default=0.1)
p.add_argument("--on-sigterm", choices=["default", "raise", "kbd"], default="default")
p.add_argument("--grow-mb", type=float, default=0, help="append this many MB of history per step (bug)")
args = p.parse_args()

rank = int(os.environ.get("SLURM_PROCID", "0"))
if args.on_sigterm == "kbd":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
elif args.on_sigterm == "raise":
    def _h(s, f):
        raise RuntimeError(f"rank {rank}: terminated by signal {s}")
    signal.signal(signal.SIGTERM, _h)

rng = np.random.default_rng(42 + rank)
X = rng.standard_normal((4096, 64)).astype(np.float32)
w_true = rng.standard_normal(64).astype(np.float32)
y = (X @ w_true + 0.1 * rng.standard_normal(4096) > 0).astype(np.float32)
w = np.zeros(64, dtype=np.float32)
history = []
lr = 0.05
print(f"rank {rank}: numpy {np.__version__}, {X.shape[0]} samples, {X.shape[1]} features", flush=True)


def step(idx):
    global w
    xb, yb = X[idx], y[idx]
    p_ = 1 / (1 + np.exp(-(xb @ w)))
    grad = xb.T @ (p_ - yb) / len(idx)
    w -= lr * grad
    eps = 1e-7
    return float(-np.mean(yb * np.log(p_ + eps) + (1 - yb) * np.log(1 - p_ + eps)))


for ep in range(args.epochs):
    t0 = time.time()
    losses = []
    for i in range(1, args.steps + 1):
        idx = rng.integers(0, len(X), 128)
        losses.append(step(idx))
        if args.grow_mb:
            history.append(np.ones(int(args.grow_mb * 131072), dtype=np.float64) * losses[-1])
        el = time.time() - t0
        sys.stderr.write(f"\rrank {rank} epoch {ep:3d}: {100 * i // args.steps:3d}%|{'#' * (10 * i // args.steps):<10}| "
                         f"{i}/{args.steps} [{el:4.1f}s, {i / el:5.1f}it/s, loss={losses[-1]:.4f}]")
        sys.stderr.flush()
        time.sleep(args.sleep)
    acc = float(np.mean(((X @ w) > 0) == (y > 0.5)))
    sys.stderr.write("\n")
    print(f"rank {rank} | epoch {ep:3d} | loss {np.mean(losses):.4f} | acc {acc:.4f} | |w| {np.linalg.norm(w):.3f}", flush=True)
# SPDX-License-Identifier: MIT
