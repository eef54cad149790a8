#!/usr/bin/env python3
"""Small image-classifier style training script (CPU, synthetic data).

Used by gpualert's corpus generators: `--case` selects a failure mode that
is triggered for real at step `--fail-at`; `--case none` trains normally.
"""
import argparse
import json
import logging
import math
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("train")


class ColorFormatter(logging.Formatter):
    COLORS = {"INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31;1m",
              "DEBUG": "\x1b[36m"}

    def format(self, record):
        s = super().format(record)
        c = self.COLORS.get(record.levelname)
        return f"{c}{s}\x1b[0m" if c else s


class Synthetic(Dataset):
    def __init__(self, n, dim, classes, seed, case=None, fail_index=-1):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        w = torch.randn(dim, classes, generator=g)
        self.y = (self.x @ w).argmax(1)
        self.case = case
        self.fail_index = fail_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i == self.fail_index:
            if self.case == "worker_valueerror":
                raise ValueError(f"sample {i}: expected 32 features, got {int(self.x[i].numel()) - 3}")
            if self.case == "worker_memoryerror":
                blob = [bytearray(64 << 20) for _ in range(4096)]
                return blob
            if self.case == "worker_oomkill":
                blob = []
                while True:
                    blob.append(np.ones(16 << 20, dtype=np.uint8))
            if self.case == "worker_segv":
                import ctypes
                ctypes.string_at(0)
        return {"image": self.x[i], "label": self.y[i]}


class MLP(nn.Module):
    def __init__(self, dim, hidden, classes):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = F.gelu(self.fc2(x))
        return self.head(x)


def progress(it, total, desc, every, stream, width=10, postfix=None):
    """tqdm-like bar written with carriage returns."""
    t0 = time.time()
    for i, item in enumerate(it, 1):
        yield item
        if i % every == 0 or i == total:
            el = max(time.time() - t0, 1e-6)
            rate = i / el
            frac = i / total
            fill = int(frac * width)
            bar = "\u2588" * fill + (" " * (width - fill))
            rem = (total - i) / rate if rate else 0
            pf = (", " + postfix()) if postfix else ""
            stream.write(f"\r{desc}: {int(frac*100):3d}%|{bar}| {i}/{total} "
                         f"[{int(el)//60:02d}:{int(el)%60:02d}<{int(rem)//60:02d}:{int(rem)%60:02d}, "
                         f"{rate:.2f}it/s{pf}]")
            stream.flush()
    stream.write("\n")


def trigger(case, args, model, x, y, opt, step):
    """Failure modes that happen inside the training step (user code bugs)."""
    if case == "typeerror_none":
        warmup = args.warmup_steps
        return min(1.0, step / (warmup * 2))
    if case == "typeerror_str":
        return opt.param_groups[0]["lr"] * "2"
    if case == "valueerror_reshape":
        return np.arange(x.shape[0] * 3).reshape(x.shape[0], 4)
    if case == "keyerror":
        batch = {"image": x, "label": y}
        return batch["labels"]
    if case == "attributeerror":
        return model.module.head
    if case == "indexerror":
        return x[:, args.dim + 8]
    if case == "indexerror_list":
        milestones = [10, 20]
        return milestones[step // 10]
    if case == "assertion":
        assert x.shape[0] == args.batch_size + 2, f"batch size {x.shape[0]} != {args.batch_size + 2}"
    if case == "matmul_shape":
        proj = torch.randn(args.dim - 2, 16)
        return x @ proj
    if case == "linear_shape":
        return model.fc2(x)
    if case == "cat_shape":
        return torch.cat([x, y[: x.shape[0] // 2, None].float()], dim=1)
    if case == "view_stride":
        return x.t().view(-1, 8)
    if case == "nameerror":
        return schedular.step()  # noqa: F821
    if case == "zerodiv":
        n_val = sum(1 for _ in range(0))
        return 10.0 / n_val
    if case == "dtype_double":
        return model(x.double())
    if case == "dtype_target":
        return F.cross_entropy(model(x), y.int())
    if case == "embedding_float":
        emb = nn.Embedding(100, 8)
        return emb(x.abs() * 10)
    if case == "backward_twice":
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        loss.backward()
    if case == "inplace":
        h = torch.sigmoid(model(x))
        h += 1
        h.sum().backward()
    if case == "json_config":
        return json.loads("{'lr': 0.001, 'warmup': 100}")
    if case == "memoryerror":
        cache = []
        while True:
            cache.append(bytearray(256 << 20))
    if case == "numpy_alloc":
        return np.zeros((args.batch_size, 1 << 17, 1 << 12), dtype=np.float64)
    if case == "torch_alloc":
        return torch.empty(args.batch_size << 28, dtype=torch.float32)
    if case == "self_sigterm":
        os.kill(os.getpid(), 15)
    if case == "self_sigusr1":
        os.kill(os.getpid(), 10)
    if case == "self_sighup":
        os.kill(os.getpid(), 1)
    if case == "os_exit":
        os._exit(1)
    if case == "cuda_tensor":
        return x.cuda()
    if case == "segv":
        import ctypes
        ctypes.string_at(0)
    if case == "abort":
        os.abort()
    if case == "recursion_segv":
        sys.setrecursionlimit(10**7)
        def walk(n):
            return walk(n + 1) + 1
        walk(0)
    if case == "exit3":
        log.info("validation metric below threshold, stopping")
        sys.exit(3)
    if case == "np_overflow":
        np.seterr(all="raise")
        return np.exp(np.float64(step * 40.0))
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", default="none")
    p.add_argument("--fail-at", type=int, default=-1)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--optim", default="adamw")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--bar-every", type=int, default=1)
    p.add_argument("--warmup-steps", type=int, default=None)
    p.add_argument("--save", default=None, help="checkpoint path")
    p.add_argument("--resume", default=None)
    p.add_argument("--data", default=None, help="optional data file (.npy)")
    p.add_argument("--color", action="store_true")
    p.add_argument("--crlf", action="store_true")
    p.add_argument("--nan-check", default="none",
                   choices=["none", "raise", "assert", "anomaly", "clip", "scaler", "skip"])
    p.add_argument("--loss-fn", default="ce", choices=["ce", "logmse"])
    p.add_argument("--warn", default="", help="comma list of benign warnings to emit")
    p.add_argument("--print-records", default=None, help="echo raw text records from this file")
    p.add_argument("--final", default=None, help="last status text, written without newline")
    args = p.parse_args()
    # the corpus generators pass the failure mode through the environment so
    # that it shows up neither on command lines nor in the logged config
    args.case = os.environ.get("FAULT_CASE", args.case)
    args.fail_at = int(os.environ.get("FAULT_STEP", args.fail_at))

    if args.crlf:
        sys.stdout.reconfigure(newline="\r\n")
        sys.stderr.reconfigure(newline="\r\n")
    sys.stdout.reconfigure(errors="surrogateescape")
    handler = logging.StreamHandler(sys.stdout)
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    handler.setFormatter(ColorFormatter(fmt) if args.color else logging.Formatter(fmt))
    logging.basicConfig(level=logging.INFO, handlers=[handler])

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    cfg = {k: v for k, v in vars(args).items() if k not in ("case", "fail_at")}
    log.info("config: %s", json.dumps(cfg, sort_keys=True))
    log.info("torch %s, numpy %s, %d threads", torch.__version__, np.__version__, torch.get_num_threads())
    if not torch.cuda.is_available():
        log.warning("CUDA is not available, training on CPU")
    device = torch.device("cpu")

    for w in filter(None, args.warn.split(",")):
        if w == "tensor_copy":
            torch.tensor(torch.ones(2))
        elif w == "future":
            warnings.warn("The `fp16_opt_level` argument is deprecated and will be removed in v2.0; use `precision` instead", FutureWarning)
        elif w == "deprecation":
            warnings.warn("`Trainer.resume_from` is deprecated, pass `ckpt_path` to `fit()`", DeprecationWarning, stacklevel=1)
        elif w == "gradscaler":
            torch.cuda.amp.GradScaler()
        elif w == "sched_order":
            m = nn.Linear(2, 2)
            o = torch.optim.SGD(m.parameters(), lr=0.1)
            s = torch.optim.lr_scheduler.StepLR(o, 1)
            s.step()
        elif w == "retry":
            for attempt in range(1, 4):
                try:
                    if attempt < 3:
                        raise ConnectionError(f"HTTPSConnectionPool(host='hub.example.org', port=443): Read timed out. (attempt {attempt})")
                    log.info("downloaded tokenizer.json (2.1 MB)")
                    break
                except ConnectionError:
                    log.exception("download failed, retrying in %ds", 2 ** attempt)
        elif w == "batch_probe":
            for bs in (1 << 34, 1 << 12, args.batch_size):
                try:
                    torch.empty(bs, args.dim, 64)
                    log.info("batch size probe: %d fits", bs)
                    break
                except RuntimeError as e:
                    log.warning("batch size probe: %d does not fit (%s)", bs, str(e).splitlines()[0])
        elif w == "missing_override":
            try:
                open(os.path.join("configs", "local_override.yaml"))
            except FileNotFoundError as e:
                log.warning("no local override (%s), using defaults", e)

    if args.print_records:
        with open(args.print_records, "rb") as f:
            for n, raw in enumerate(f):
                line = raw.rstrip(b"\n").decode("utf-8", errors="surrogateescape")
                print(f"record {n}: {line}")

    train_ds = Synthetic(args.steps_per_epoch * args.batch_size, args.dim, args.classes, args.seed,
                         case=args.case if args.case.startswith("worker_") else None,
                         fail_index=max(args.fail_at, 0) * args.batch_size + 3)
    val_ds = Synthetic(4 * args.batch_size, args.dim, args.classes, args.seed + 1)
    loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=False, num_workers=args.workers)
    vloader = DataLoader(val_ds, batch_size=args.batch_size)
    if args.data:
        arr = np.load(args.data)
        log.info("loaded %s with shape %s", args.data, arr.shape)
    model = MLP(args.dim, args.hidden, args.classes).to(device)
    log.info("model has %d parameters", sum(p.numel() for p in model.parameters()))
    if args.optim == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    if args.resume:
        log.info("resuming from %s", args.resume)
        state = torch.load(args.resume)
        model.load_state_dict(state["model"])
    if args.nan_check == "anomaly":
        torch.autograd.set_detect_anomaly(True)
    scale = 65536.0
    step = 0
    skipped = 0
    for epoch in range(args.epochs):
        model.train()
        losses = []
        cur = {"loss": float("nan")}
        bar = progress(loader, len(loader), f"Epoch {epoch}", args.bar_every, sys.stderr,
                       postfix=lambda: f"loss={cur['loss']:.4f}")
        for batch in bar:
            x, y = batch["image"].to(device), batch["label"].to(device)
            if step == args.fail_at and not args.case.startswith("worker_"):
                trigger(args.case, args, model, x, y, opt, step)
            at = step == args.fail_at
            if at and args.case == "compose_forward":
                # gen/compose.py: a real failure inside nn.Linear's forward (F.linear)
                model.fc2.weight = nn.Parameter(torch.randn(args.hidden, args.hidden + 1))
            out = model(x)
            if at and args.case == "compose_item":
                # gen/compose.py: a real failure at loss.item()
                loss = F.cross_entropy(out, y, reduction="none")
            elif at and args.case == "compose_backward":
                # gen/compose.py: a real failure inside the autograd engine
                prob = torch.sigmoid(out)
                loss = prob.sum()
                prob.add_(1.0)
            elif args.loss_fn == "logmse":
                target = F.one_hot(y, args.classes).float()
                loss = (torch.log(out.pow(2) + 1e-12 * (step < args.fail_at)) - target).pow(2).mean()
            else:
                loss = F.cross_entropy(out, y)
            lv = loss.item()
            if args.nan_check == "raise" and not math.isfinite(lv):
                raise FloatingPointError(f"Loss is {lv}, stopping training")
            if args.nan_check == "assert":
                assert not torch.isnan(loss), f"loss is nan at step {step}"
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if args.nan_check == "clip":
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
            if args.nan_check in ("scaler", "skip"):
                gn = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
                if not torch.isfinite(gn):
                    skipped += 1
                    scale /= 2.0
                    log.warning("Detected inf or nan in gradients (grad norm %s), skipping step; loss scale -> %g", gn.item(), scale)
                    if args.nan_check == "scaler" and scale < 1e-4:
                        raise FloatingPointError(f"Minimum loss scale reached ({scale:g}). Your loss is probably exploding. Try lowering the learning rate.")
                    step += 1
                    continue
            opt.step()
            cur["loss"] = lv
            losses.append(lv)
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} | loss {lv:.4f} | lr {opt.param_groups[0]['lr']:.2e} | "
                      f"{args.batch_size * args.log_every} samples", flush=True)
        model.eval()
        correct = total = 0
        vloss = 0.0
        with torch.no_grad():
            for batch in vloader:
                o = model(batch["image"])
                vloss += F.cross_entropy(o, batch["label"], reduction="sum").item()
                correct += (o.argmax(1) == batch["label"]).sum().item()
                total += len(batch["label"])
        nan_batches = sum(1 for l in losses if not math.isfinite(l))
        log.info("epoch %d done: train_loss=%.4f val_loss=%.4f val_acc=%.3f nan_batches=%d skipped_steps=%d",
                 epoch, float(np.mean(losses)) if losses else float("nan"), vloss / total, correct / total,
                 nan_batches, skipped)
        if args.save:
            torch.save({"model": model.state_dict(), "epoch": epoch}, args.save)
            log.info("saved checkpoint to %s", args.save)
    log.info("training finished after %d steps", step)
    if args.final:
        sys.stdout.flush()
        sys.stderr.write(args.final)
        sys.stderr.flush()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
