#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compose logs for failure classes a CPU-only machine cannot produce.

Every composed log starts from a REAL run of gen/proj/train.py on this
machine (its stdout/stderr: config lines, progress bars, metric lines and
the Python traceback frames of a real PyTorch call stack).  The run is made
to fail at a chosen point for a CPU-reproducible reason (a shape mismatch
inside nn.Linear, a bad loss.item(), an autograd error), and only then is
the final exception replaced by a GPU-side message whose format is taken
from the project that emits it; the source is noted next to each template
below and in labels.tsv's origin column.  Paths of the CPU Python install
are swapped for typical GPU-node environments, and the CPU-fallback
warning line becomes a device line.  Numbers are drawn from a seeded RNG.

    /usr/bin/python3 corpus/gen/compose.py
"""
import os
import random
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (PY, make_workdir, redact, remove_owned_logs, run,  # noqa: E402
                    update_labels, write_log)

ENVS = ["/home/user/.conda/envs/train/lib/python3.11/site-packages/",
        "/opt/conda/lib/python3.11/site-packages/",
        "/home/user/venvs/llm/lib/python3.11/site-packages/",
        "/usr/local/lib/python3.11/dist-packages/"]
GPUS = [("NVIDIA A100-SXM4-80GB", 79.15), ("NVIDIA H100 80GB HBM3", 79.10), ("Tesla V100-SXM2-32GB", 31.74),
        ("NVIDIA A100-SXM4-40GB", 39.39), ("NVIDIA GeForce RTX 3090", 23.69), ("NVIDIA L40S", 44.39)]
BUSIDS = ["0000:3b:00", "0000:5e:00", "0000:86:00", "0000:af:00", "0000:07:00", "0000:b1:00", "0000:ca:00"]
PIDS = range(12000, 98000)

GiB = 1 << 30
MiB = 1 << 20


def fmt(n):
    """c10::CachingAllocator::format_size"""
    if n <= 1024:
        return f"{int(n)} bytes"
    if n <= 1048576:
        return f"{n / 1024:.2f} KiB"
    if n <= 1073741824:
        return f"{n / 1048576:.2f} MiB"
    return f"{n / 1073741824:.2f} GiB"


# ------------------------------------------------------------------ real base runs
_cache = {}


def base(case, seed, fail_at=-1, extra=()):
    """Real run of the project's training script; returns its redacted output."""
    key = (case, seed, fail_at, tuple(extra))
    if key not in _cache:
        wd = make_workdir()
        try:
            rc, out = run([PY, "train.py", "--seed", str(seed), *extra], wd,
                          env={"FAULT_CASE": case, "FAULT_STEP": str(fail_at)})
            _cache[key] = redact(out, wd).decode("utf-8", "surrogateescape")
        finally:
            shutil.rmtree(wd, ignore_errors=True)
    return _cache[key]


def gpuify(text, rng, torch_ver, gpu):
    env = rng.choice(ENVS)
    text = text.replace("/usr/lib/python3/dist-packages/", env)
    text = text.replace("torch 1.13.0a0", f"torch {torch_ver}")
    text = text.replace("WARNING train: CUDA is not available, training on CPU",
                        f"INFO train: using device cuda:0 ({gpu})")
    return text


EXC = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b[^:\n]*: ")


def replace_exc(text, msg):
    """Replace the final exception line (and what follows) by msg."""
    lines = text.split("\n")
    idx = max(i for i, l in enumerate(lines) if EXC.match(l))
    return "\n".join(lines[:idx]) + "\n" + msg


def insert_before_tb(text, block, newline=True):
    i = text.rfind("Traceback (most recent call last):")
    pre = text[:i]
    if newline and not pre.endswith("\n"):
        pre += "\n"
    return pre + block + text[i:]


def cut(text, nth_bar):
    """Cut a successful run's output in the middle of training (after the
    nth progress update), as a job that dies mid-step shows it."""
    pos = [m.start() for m in re.finditer("\r", text)]
    return text[:pos[min(nth_bar, len(pos) - 1)]] if pos else text


def split_tail(text, marker=None):
    """(body, tail): tail starts at the final traceback or at marker."""
    i = text.rfind(marker) if marker else text.rfind("Traceback (most recent call last):")
    if i < 0:
        return text, ""
    j = text.rfind("\n", 0, i) + 1
    return text[:j] + (text[j:i] if text[j:i].strip() else ""), text[i:]


def ranks(texts, style="srun", order=None):
    """Join per-rank outputs, line-prefixed as `srun -l` (3: ) or torchrun ([rank3]:).
    The bodies (training output) are interleaved; the failure tails follow
    in `order` (first failing rank first), as they happen minutes apart."""
    def pre(r, line):
        p = f"{r}: " if style == "srun" else f"[rank{r}]:"
        return line if line.startswith(p) else p + line
    bodies, tails = [], []
    for t in texts:
        b, tl = t if isinstance(t, tuple) else split_tail(t)
        bodies.append(b)
        tails.append(tl)
    out = interleave(bodies, pre)
    for r in (order or range(len(texts))):
        for line in tails[r].split("\n"):
            if line:
                out.append(pre(r, line))
    return "\n".join(out) + "\n"


def interleave(texts, pre):
    out = []
    split = [t.split("\n") for t in texts]
    n = max(len(s) for s in split)
    step = 4
    for start in range(0, n, step):
        for r, lines in enumerate(split):
            for line in lines[start:start + step]:
                if start + step >= len(lines) and line == "" and lines[-1] == "":
                    continue
                out.append(pre(r, line))
    return out


# ------------------------------------------------------------------ message templates
# pytorch c10/cuda/CUDAException.cpp (c10_cuda_check_implementation) appends this note
NOTE_OLD = ("CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below "
            "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
NOTE_NEW = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def note(ver):
    return NOTE_OLD if ver.startswith("1.") else NOTE_NEW


def cuda_error(ver, text):
    return f"RuntimeError: CUDA error: {text}\n" + note(ver)


def oom_message(rng, ver, tot_gib):
    """pytorch c10/cuda/CUDACachingAllocator.cpp, OutOfMemoryError text by version."""
    tot = tot_gib * GiB
    a = rng.choice([rng.randint(2, 512) * MiB, rng.randint(1, 40) * GiB // 4])
    free = rng.randint(1, 900) * MiB
    alloc = tot - free - rng.randint(300, 2000) * MiB
    res = alloc + rng.randint(20, 1500) * MiB
    g = rng.choice([0, 0, 0, 1, 2, 3, 5])
    if ver < "2.1":
        exc = "RuntimeError" if ver < "1.13" else "torch.cuda.OutOfMemoryError"
        return (f"{exc}: CUDA out of memory. Tried to allocate {fmt(a)} (GPU {g}; {fmt(tot)} total capacity; "
                f"{fmt(alloc)} already allocated; {fmt(free)} free; {fmt(res)} reserved in total by PyTorch) "
                "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  "
                "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n")
    exc = "torch.OutOfMemoryError" if ver >= "2.5" else "torch.cuda.OutOfMemoryError"
    other = ""
    other_b = 0
    if rng.random() < 0.3:
        other_b = rng.randint(2, 20) * GiB
        other = f"Process {rng.choice(PIDS)} has {fmt(other_b)} memory in use. "
    inuse = tot - free - other_b
    unalloc = rng.randint(20, 1500) * MiB
    alloc = inuse - rng.randint(400, 900) * MiB - unalloc
    res = alloc + unalloc
    if ver.startswith("2.1"):
        return (f"{exc}: CUDA out of memory. Tried to allocate {fmt(a)}. GPU {g} has a total capacty of {fmt(tot)} "
                f"of which {fmt(free)} is free. {other}Including non-PyTorch memory, this process has {fmt(inuse)} "
                f"memory in use. Of the allocated memory {fmt(alloc)} is allocated by PyTorch, and {fmt(res - alloc)} "
                "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
                "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
                "PYTORCH_CUDA_ALLOC_CONF\n")
    return (f"{exc}: CUDA out of memory. Tried to allocate {fmt(a)}. GPU {g} has a total capacity of {fmt(tot)} "
            f"of which {fmt(free)} is free. {other}Including non-PyTorch memory, this process has {fmt(inuse)} "
            f"memory in use. Of the allocated memory {fmt(alloc)} is allocated by PyTorch, and {fmt(res - alloc)} "
            "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


def cpp_frames(rng, env, what_lines, where="c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43"):
    """terminate() output of an uncaught c10::Error (pytorch c10/util/Exception.cpp backtrace format)."""
    lib = env + "torch/lib/"
    base_addr = rng.randint(0x7f0000000000, 0x7fffff000000) & ~0xfff
    fr = [("c10::Error::Error(c10::SourceLocation, std::string) + 0x57", "libc10.so"),
          ("c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64",
           "libc10.so"),
          ("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118",
           "libc10_cuda.so"),
          ("<unknown function> + 0x1d5a7", "libc10_cuda.so"),
          ("c10::TensorImpl::~TensorImpl() + 0x21", "libc10.so"),
          ("<unknown function> + 0x4d7e2c", "libtorch_python.so")]
    out = ["terminate called after throwing an instance of 'c10::Error'", "  what():  " + what_lines[0]]
    out += what_lines[1:]
    out += ["", f"Exception raised from {where} (most recent call first):"]
    for i, (sym, so) in enumerate(fr):
        out.append(f"frame #{i}: {sym} (0x{base_addr + rng.randint(0x1000, 0xfffff):x} in {lib}{so})")
    out.append("")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ composed cases
CASES = []


def case(name, cls, origin):
    def deco(fn):
        CASES.append((name, cls, origin, fn))
        return fn
    return deco


VERS = ["1.12.1", "1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0"]

# ---- cuda_oom -------------------------------------------------------------
for i, ver in enumerate(["1.12.1", "1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.4.1", "2.5.1", "2.6.0"]):
    def mk(i=i, ver=ver):
        @case(f"torch-{ver.replace('.', '')}-alloc-{i + 1:02d}", "cuda_oom",
              "pytorch c10/cuda/CUDACachingAllocator.cpp (OutOfMemoryError text of torch " + ver + ")")
        def _(rng):
            gpu, tot = rng.choice(GPUS)
            kind = ["compose_forward", "compose_backward", "compose_forward"][i % 3]
            t = base(kind, 600 + i, 5 + 7 * i % 60, ["--color"] if i == 3 else [])
            return replace_exc(gpuify(t, rng, ver, gpu), oom_message(rng, ver, tot)), 1
    mk()


@case("cuda-error-oom-09", "cuda_oom", "pytorch c10/cuda/CUDAException.cpp (C10_CUDA_CHECK: cudaErrorMemoryAllocation)")
def _(rng):
    t = base("compose_backward", 609, 33)
    return replace_exc(gpuify(t, rng, "2.3.1", "NVIDIA A100-SXM4-40GB"), cuda_error("2.3.1", "out of memory")), 1


@case("cublas-alloc-failed-10", "cuda_oom", "pytorch aten/src/ATen/cuda/CublasHandlePool.cpp (cublasCreate)")
def _(rng):
    t = base("compose_forward", 610, 0)
    return replace_exc(gpuify(t, rng, "2.0.1", "Tesla V100-SXM2-32GB"),
                       "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n"), 1


@case("jax-resource-exhausted-11", "cuda_oom",
      "openxla xla/pjrt/gpu (PjRt GPU client BFC allocator, RESOURCE_EXHAUSTED status)")
def _(rng):
    t = cut(base("none", 611), 37)
    n = rng.randint(8, 60) * GiB + rng.randint(0, GiB)
    return t + ("\nTraceback (most recent call last):\n"
                "  File \"/home/user/proj/train_jax.py\", line 141, in <module>\n    state, metrics = train_step(state, batch)\n"
                "                     ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                f"{n} bytes.\n"
                "--------------------\n"
                "For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
                "Set JAX_TRACEBACK_FILTERING=off to include these.\n"), 1


@case("tf-oom-tensor-12", "cuda_oom", "tensorflow tensorflow/core/framework/op_kernel.cc (ResourceExhausted OOM)")
def _(rng):
    t = cut(base("none", 612), 51)
    b = rng.choice([32, 64, 128])
    return t + ("\nTraceback (most recent call last):\n"
                "  File \"/home/user/proj/train_tf.py\", line 88, in <module>\n    model.fit(ds, epochs=10)\n"
                "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n\n"
                f"OOM when allocating tensor with shape[{b},512,56,56] and type float on "
                "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
                "\t [[{{node resnet50/conv2_block1_1_conv/Conv2D}}]]\n"
                "Hint: If you want to see a list of allocated tensors when OOM happens, add "
                "report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't "
                "available when running in Eager mode.\n"), 1


@case("ddp-rank0-oom-then-watchdog-13", "cuda_oom",
      "pytorch c10/cuda/CUDACachingAllocator.cpp + torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog)")
def _(rng):
    ver = "2.2.2"
    gpu, tot = GPUS[0]
    r0 = replace_exc(gpuify(base("compose_forward", 613, 21), rng, ver, gpu), oom_message(rng, ver, tot))
    others = []
    seq = rng.randint(300, 5000)
    for r in (1, 2, 3):
        t = gpuify(cut(base("none", 620 + r), 21 + r), rng, ver, gpu)
        others.append((t + "\n", watchdog_lines(rng, r, seq, ver)))
    return ranks([r0] + others, "srun"), 1


@case("torchrun-oom-rank2-14", "cuda_oom",
      "pytorch c10/cuda/CUDACachingAllocator.cpp + torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog)")
def _(rng):
    ver = "2.4.1"
    gpu, tot = GPUS[1]
    seq = rng.randint(300, 5000)
    outs = []
    for r in range(4):
        if r == 2:
            outs.append(replace_exc(gpuify(base("compose_backward", 614, 17), rng, ver, gpu),
                                    oom_message(rng, ver, tot)))
        else:
            outs.append((gpuify(cut(base("none", 630 + r), 17), rng, ver, gpu) + "\n",
                         watchdog_lines(rng, r, seq, ver)))
    return ranks(outs, "torchrun", order=[2, 0, 1, 3]), 1


# ---- nccl -------------------------------------------------------------------
def watchdog_lines(rng, rank, seq, ver, op="ALLREDUCE"):
    """pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog timeout + abort."""
    numel = rng.choice([1, 2, 12, 4096, 263169, 1048576 * 64])
    ran = 600000 + rng.randint(3, 900)
    work = (f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000)")
    if ver < "2.2":
        return (f"[E ProcessGroupNCCL.cpp:475] [Rank {rank}] Watchdog caught collective operation timeout: {work} "
                f"ran for {ran} milliseconds before timing out.\n"
                "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous "
                "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
                "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.\n"
                "terminate called after throwing an instance of 'std::runtime_error'\n"
                f"  what():  [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran} "
                "milliseconds before timing out.\n")
    p = f"[rank{rank}]:"
    return (f"{p}[E ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: {work} "
            f"ran for {ran} milliseconds before timing out.\n"
            f"{p}[E ProcessGroupNCCL.cpp:1664] [PG 0 Rank {rank}] Exception (either an error or timeout) detected by "
            f"watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.\n"
            f"{p}[E ProcessGroupNCCL.cpp:621] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the "
            "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
            f"{p}[E ProcessGroupNCCL.cpp:627] [Rank {rank}] To avoid data inconsistency, we are taking the entire "
            "process down.\n"
            "terminate called after throwing an instance of 'c10::DistBackendError'\n"
            f"  what():  [PG 0 Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] "
            f"Watchdog caught collective operation timeout: {work} ran for {ran} milliseconds before timing out.\n")


for i, ver in enumerate(["2.0.1", "2.1.2", "2.3.1", "2.5.1"]):
    def mk(i=i, ver=ver):
        @case(f"watchdog-timeout-{ver.replace('.', '')}-{i + 1:02d}", "nccl",
              "pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog, torch " + ver + ")")
        def _(rng):
            gpu, _t = rng.choice(GPUS)
            seq = rng.randint(100, 90000)
            t = gpuify(cut(base("none", 700 + i, extra=["--epochs", "3"]), 30 + 11 * i), rng, ver, gpu)
            op = ["ALLREDUCE", "_ALLGATHER_BASE", "BROADCAST", "REDUCE_SCATTER"][i]
            out = t + "\n" + watchdog_lines(rng, rng.randint(0, 7), seq, ver, op)
            if i % 2:
                out = ranks([(t + "\n", watchdog_lines(rng, 0, seq, ver, op)),
                             (gpuify(cut(base("none", 710 + i), 30 + 11 * i), rng, ver, gpu) + "\n",
                              watchdog_lines(rng, 1, seq, ver, op))], "srun")
            return out, -6
    mk()


def nccl_exc(ver, line, reason, nccl_ver, code, descr, last):
    """pytorch torch/csrc/distributed/c10d/NCCLUtils.hpp (C10D_NCCL_CHECK) + nccl src/misc/ (error strings)."""
    exc = "torch.distributed.DistBackendError" if ver >= "2.0" else "RuntimeError"
    s = (f"{exc}: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{line}, {reason} "
         f"(run with NCCL_DEBUG=INFO for details), NCCL version {nccl_ver}\n{code}: {descr}")
    if last:
        s += f" \nLast error:\n{last}"
    return s + "\n"


NCCL_CASES = [
    ("unhandled-system-error", "2.1.2", 1331, "unhandled system error", "2.18.6", "ncclSystemError",
     "System call (e.g. socket, malloc) or external library call failed or device error.",
     "socketProgress: Connection closed by remote peer gpu-node12.cluster<42811>"),
    ("remote-error", "2.3.1", 1970, "remote process exited or there was a network error", "2.20.5",
     "ncclRemoteError", "A call failed possibly due to a network error or a remote process exiting prematurely.",
     "NET/IB : Got completion from peer 10.12.3.41<58120> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
     "localGid ::ffff:10.12.3.40 remoteGidsfe80::ba3f:d203:2b:3ac1 hca mlx5_2"),
    ("internal-error", "2.2.2", 1691, "internal error - please report this issue to the NCCL developers",
     "2.19.3", "ncclInternalError", "Internal check failed.", "Proxy Call to rank 5 failed (Connect)"),
    ("invalid-usage", "2.0.1", 1269, "invalid usage", "2.14.3", "ncclInvalidUsage",
     "This usually reflects invalid usage of NCCL library.", "Duplicate GPU detected : rank 1 and rank 0 both on "
     "CUDA device 3b000"),
]
# Two ranks on one GPU is the set-up's fault, not the network's: NCCL's report of it is
# cuda_setup's evidence.
NCCL_CASE_CLASS = {"invalid-usage": "cuda_setup"}
for i, (nm, ver, line, reason, nv, code, descr, last) in enumerate(NCCL_CASES):
    def mk(i=i, nm=nm, ver=ver, line=line, reason=reason, nv=nv, code=code, descr=descr, last=last):
        @case(f"{nm}-{i + 5:02d}", NCCL_CASE_CLASS.get(nm, "nccl"),
              "pytorch torch/csrc/distributed/c10d/NCCLUtils.hpp (C10D_NCCL_CHECK) + nccl src/init.cc/src/transport")
        def _(rng):
            gpu, _t = rng.choice(GPUS)
            t = gpuify(base("compose_backward", 720 + i, 9 + 13 * i), rng, ver, gpu)
            warn = ""
            if i in (0, 1):
                h = "gpu-node07"
                pid = rng.choice(PIDS)
                warn = (f"{h}:{pid}:{pid + 37} [{i}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB ; "
                        "OOB ib0:10.12.3.40<0>\n"
                        f"{h}:{pid}:{pid + 41} [{i}] misc/socket.cc:49 NCCL WARN socketProgress: "
                        "Connection closed by remote peer\n")
            if warn:
                t = insert_before_tb(t, warn)
            return replace_exc(t, nccl_exc(ver, line, reason, nv, code, descr, last)), 1
    mk()


@case("old-nccl-error-09", "nccl", "pytorch torch/lib/c10d/ProcessGroupNCCL.cpp (torch 1.8 NCCL error text)")
def _(rng):
    t = gpuify(base("compose_backward", 730, 44), rng, "1.8.1", "Tesla V100-SXM2-32GB")
    return replace_exc(t, "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1614378073850/work/torch/lib/"
                          "c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n"), 1


# ---- cuda_kernel ----------------------------------------------------------
KERNEL = [
    ("illegal-memory-access", "an illegal memory access was encountered", "compose_item", "2.1.2"),
    ("illegal-memory-access-old", "an illegal memory access was encountered", "compose_backward", "1.13.1"),
    ("misaligned-address", "misaligned address", "compose_item", "2.3.1"),
    ("unspecified-launch-failure", "unspecified launch failure", "compose_backward", "2.0.1"),
    ("illegal-instruction", "an illegal instruction was encountered", "compose_item", "2.4.1"),
    ("too-many-resources", "too many resources requested for launch", "compose_forward", "1.12.1"),
]
for i, (nm, msg, where, ver) in enumerate(KERNEL):
    def mk(i=i, nm=nm, msg=msg, where=where, ver=ver):
        @case(f"{nm}-{i + 1:02d}", "cuda_kernel",
              "pytorch c10/cuda/CUDAException.cpp (C10_CUDA_CHECK) with CUDA runtime cudaGetErrorString text")
        def _(rng):
            gpu, _t = rng.choice(GPUS)
            t = gpuify(base(where, 800 + i, 6 + 9 * i), rng, ver, gpu)
            return replace_exc(t, cuda_error(ver, msg)), 1
    mk()


@case("illegal-memory-access-terminate-07", "cuda_kernel",
      "pytorch c10/cuda/CUDAException.cpp + c10/util/Exception.cpp (uncaught c10::Error at teardown)")
def _(rng):
    ver = "2.2.2"
    env = rng.choice(ENVS)
    t = gpuify(base("compose_item", 807, 29), rng, ver, GPUS[0][0])
    t = replace_exc(t, cuda_error(ver, "an illegal memory access was encountered"))
    what = ("CUDA error: an illegal memory access was encountered\n" + NOTE_NEW).rstrip("\n").split("\n")
    return t + cpp_frames(rng, env, what), -6


@case("cublas-sgemm-08", "cuda_kernel", "pytorch aten/src/ATen/cuda/CUDABlas.cpp (TORCH_CUDABLAS_CHECK)")
def _(rng):
    t = gpuify(base("compose_forward", 808, 12), rng, "1.13.1", GPUS[2][0])
    return replace_exc(t, "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( "
                          "handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n"), 1


@case("cublas-gemmex-09", "cuda_kernel", "pytorch aten/src/ATen/cuda/CUDABlas.cpp (TORCH_CUDABLAS_CHECK)")
def _(rng):
    t = gpuify(base("compose_forward", 809, 27), rng, "2.1.2", GPUS[0][0])
    return replace_exc(t, "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( "
                          "handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, "
                          "CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`\n"), 1


@case("cudnn-execution-failed-10", "cuda_kernel", "pytorch aten/src/ATen/cudnn/Exceptions.h (AT_CUDNN_CHECK)")
def _(rng):
    t = gpuify(base("compose_backward", 810, 15), rng, "2.0.1", GPUS[3][0])
    return replace_exc(t, "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"), 1


@case("cudnn-internal-error-11", "cuda_kernel", "pytorch aten/src/ATen/native/cudnn/Conv_v7.cpp (repro snippet) + "
      "aten/src/ATen/cudnn/Exceptions.h")
def _(rng):
    t = gpuify(base("compose_forward", 811, 3), rng, "1.12.1", GPUS[4][0])
    return replace_exc(t, "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n"
                          "You can try to repro this exception using the following code snippet. If that doesn't "
                          "trigger the error, please include your original repro script when reporting this issue.\n\n"
                          "import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"
                          "torch.backends.cudnn.benchmark = True\ntorch.backends.cudnn.deterministic = False\n"
                          "torch.backends.cudnn.allow_tf32 = True\n"
                          "data = torch.randn([64, 256, 28, 28], dtype=torch.half, device='cuda', requires_grad=True)\n"
                          "net = torch.nn.Conv2d(256, 256, kernel_size=[3, 3], padding=[1, 1], stride=[1, 1], "
                          "dilation=[1, 1], groups=1)\nnet = net.cuda().half()\nout = net(data)\n"
                          "out.backward(torch.randn_like(out))\ntorch.cuda.synchronize()\n\n"
                          "ConvolutionParams \n    memory_format = Contiguous\n    data_type = CUDNN_DATA_HALF\n"
                          "    padding = [1, 1, 0]\n    stride = [1, 1, 0]\n    dilation = [1, 1, 0]\n"
                          "    groups = 1\n    deterministic = false\n    allow_tf32 = true\n"
                          "input: TensorDescriptor 0x55d0c8a1e2c0\n    type = CUDNN_DATA_HALF\n"
                          "    nbDims = 4\n    dimA = 64, 256, 28, 28, \n    strideA = 200704, 784, 28, 1, \n"
                          "output: TensorDescriptor 0x55d0c8a1f3a0\n    type = CUDNN_DATA_HALF\n    nbDims = 4\n"
                          "    dimA = 64, 256, 28, 28, \n    strideA = 200704, 784, 28, 1, \n"
                          "weight: FilterDescriptor 0x7f1a6c012f80\n    type = CUDNN_DATA_HALF\n"
                          "    tensor_format = CUDNN_TENSOR_NCHW\n    nbDims = 4\n    dimA = 256, 256, 3, 3, \n"
                          "Pointer addresses: \n    input: 0x7f19e4000000\n    output: 0x7f19e8000000\n"
                          "    weight: 0x7f1a0a200000\n"), 1


@case("triton-illegal-address-12", "cuda_kernel", "triton python/triton/backends/nvidia/driver.c (Triton Error [CUDA])")
def _(rng):
    t = gpuify(base("compose_forward", 812, 36), rng, "2.4.1", GPUS[1][0])
    return replace_exc(t, "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n"), 1


@case("ddp-illegal-access-rank2-13", "cuda_kernel",
      "pytorch c10/cuda/CUDAException.cpp + torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog)")
def _(rng):
    ver = "2.3.1"
    seq = rng.randint(200, 9000)
    outs = []
    for r in range(3):
        if r == 2:
            outs.append(replace_exc(gpuify(base("compose_item", 813, 25), rng, ver, GPUS[0][0]),
                                    cuda_error(ver, "an illegal memory access was encountered")))
        else:
            outs.append((gpuify(cut(base("none", 840 + r), 25), rng, ver, GPUS[0][0]) + "\n",
                         watchdog_lines(rng, r, seq, ver)))
    return ranks(outs, "torchrun", order=[2, 0, 1]), 1


# ---- device_assert -----------------------------------------------------------
ASSERTS = [  # pytorch aten/src/ATen/native/cuda/<file> CUDA_KERNEL_ASSERT, printed once per failing thread
    ("IndexKernel.cu", 92, "operator()", '`-sizes[i] <= index && index < sizes[i] && "index out of bounds"`'),
    ("Loss.cu", 250, "nll_loss_forward_reduce_cuda_kernel_2d", "`t >= 0 && t < n_classes`"),
    ("Indexing.cu", 1146, "indexSelectLargeIndex", "`srcIndex < srcSelectDimSize`"),
    ("Loss.cu", 94, "operator()", "`input_val >= zero && input_val <= one`"),
    ("ScatterGatherKernel.cu", 367, "operator()", '`idx_dim >= 0 && idx_dim < index_size && "index out of bounds"`'),
]
PREFIXES = ["/opt/conda/conda-bld/pytorch_1670525541990/work/aten/src/ATen/native/cuda/",
            "../aten/src/ATen/native/cuda/", "/pytorch/aten/src/ATen/native/cuda/",
            "/opt/pytorch/pytorch/aten/src/ATen/native/cuda/"]


def assert_lines(rng, k):
    f, line, fn, cond = ASSERTS[k % len(ASSERTS)]
    pre = rng.choice(PREFIXES)
    blk = rng.randint(0, 300)
    t0 = rng.choice([0, 32, 64, 96])
    n = rng.randint(3, 24)
    return "".join(f"{pre}{f}:{line}: {fn}: block: [{blk},0,0], thread: [{t0 + j},0,0] Assertion {cond} failed.\n"
                   for j in range(n))


for i in range(10):
    def mk(i=i):
        ver = ["1.12.1", "1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "1.13.1"][i]
        @case(f"{ASSERTS[i % 5][0].split('.')[0].lower()}-assert-{i + 1:02d}", "device_assert",
              f"pytorch aten/src/ATen/native/cuda/{ASSERTS[i % 5][0]} (CUDA_KERNEL_ASSERT) + c10/cuda/CUDAException.cpp")
        def _(rng):
            gpu, _t = rng.choice(GPUS)
            where = ["compose_item", "compose_backward", "compose_forward"][i % 3]
            t = gpuify(base(where, 900 + i, 4 + 8 * i, ["--crlf"] if i == 6 else []), rng, ver, gpu)
            blk = assert_lines(rng, i)
            if i == 6:
                blk = blk.replace("\n", "\r\n")
            t = insert_before_tb(t, blk, newline=(i % 4 != 0))
            msg = cuda_error(ver, "device-side assert triggered")
            if i == 6:
                msg = msg.replace("\n", "\r\n")
            return replace_exc(t, msg), 1
    mk()


@case("cuda-assert-terminate-11", "device_assert", "pytorch c10/cuda/CUDAException.cpp + c10/util/Exception.cpp")
def _(rng):
    env = rng.choice(ENVS)
    t = gpuify(base("compose_item", 911, 19), rng, "2.1.2", GPUS[0][0])
    t = insert_before_tb(t, assert_lines(rng, 1))
    t = replace_exc(t, cuda_error("2.1.2", "device-side assert triggered"))
    what = ("CUDA error: device-side assert triggered\n" + NOTE_NEW).rstrip("\n").split("\n")
    return t + cpp_frames(rng, env, what), -6


@case("ddp-assert-then-nccl-12", "device_assert",
      "pytorch aten/src/ATen/native/cuda/IndexKernel.cu + torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp")
def _(rng):
    ver = "2.2.2"
    seq = rng.randint(200, 9000)
    t1 = gpuify(base("compose_item", 912, 14), rng, ver, GPUS[1][0])
    t1 = insert_before_tb(t1, assert_lines(rng, 0))
    t1 = replace_exc(t1, cuda_error(ver, "device-side assert triggered"))
    t0 = gpuify(base("compose_backward", 913, 15), rng, ver, GPUS[1][0])
    t0 = replace_exc(t0, nccl_exc(ver, 1691, "remote process exited or there was a network error", "2.19.3",
                                  "ncclRemoteError", "A call failed possibly due to a network error or a remote "
                                  "process exiting prematurely.", "socketProgress: Connection closed by remote peer "
                                  "gpu-node07<51932>"))
    return ranks([t0, t1], "srun", order=[1, 0]), 1


@case("cuda-samples-assert-13", "device_assert", "NVIDIA cuda-samples Common/helper_cuda.h (checkCudaErrors) + "
      "CUDA runtime cudaErrorAssert")
def _(rng):
    t = cut(base("none", 914), 44)
    return t + ("\nsolver.cu:88: void scatter_rows(const int *, float *, int): block: [12,0,0], thread: [5,0,0] "
                "Assertion `row < n_rows` failed.\n"
                "CUDA error at solver.cu:214 code=710(cudaErrorAssert) \"cudaDeviceSynchronize()\" \n"), 1


# ---- gpu_hw -------------------------------------------------------------------
def xid(rng, code, text, when=None, bus=None, pid=True):
    """nvidia driver NVRM Xid line as printed to the kernel log (dmesg -T)."""
    bus = bus or rng.choice(BUSIDS)
    ts = when or f"[Mon Nov 30 0{rng.randint(1, 9)}:{rng.randint(10, 59)}:{rng.randint(10, 59)} 2026]"
    p = f" pid={rng.choice(PIDS)}, name=python," if pid else ""
    return f"{ts} NVRM: Xid (PCI:{bus}): {code},{p} {text}\n"


def dmesg_block(lines):
    return "+ dmesg -T | grep NVRM | tail\n" + "".join(lines)


@case("ecc-uncorrectable-01", "gpu_hw", "pytorch c10/cuda/CUDAException.cpp with CUDA runtime text of "
      "cudaErrorECCUncorrectable")
def _(rng):
    t = gpuify(base("compose_item", 1001, 31), rng, "2.1.2", GPUS[0][0])
    return replace_exc(t, cuda_error("2.1.2", "uncorrectable ECC error encountered")), 1


@case("ecc-uncorrectable-old-02", "gpu_hw", "pytorch c10/cuda/CUDAException.cpp with CUDA runtime text of "
      "cudaErrorECCUncorrectable")
def _(rng):
    t = gpuify(base("compose_backward", 1002, 8), rng, "1.13.1", GPUS[2][0])
    return replace_exc(t, cuda_error("1.13.1", "uncorrectable ECC error encountered")), 1


@case("xid79-fallen-off-bus-03", "gpu_hw", "nvidia driver Xid 79 via kernel log (NVIDIA Xid catalog) + nvidia-smi")
def _(rng):
    bus = rng.choice(BUSIDS)
    t = gpuify(base("compose_item", 1003, 40), rng, "2.2.2", GPUS[1][0])
    t = replace_exc(t, cuda_error("2.2.2", "unknown error"))
    t += ("+ nvidia-smi\n"
          f"Unable to determine the device handle for GPU{bus}.0: GPU is lost.  Reboot the system to recover this "
          "GPU\n")
    t += dmesg_block([xid(rng, 79, "GPU has fallen off the bus.", bus=bus),
                      f"[Mon Nov 30 04:12:09 2026] NVRM: GPU {bus}.0: GPU has fallen off the bus.\n"])
    return t, 1


@case("xid48-dbe-then-illegal-access-04", "gpu_hw", "nvidia driver Xid 48 via kernel log (NVIDIA Xid catalog) + "
      "pytorch c10/cuda/CUDAException.cpp")
def _(rng):
    t = gpuify(base("compose_item", 1004, 22), rng, "2.0.1", GPUS[2][0])
    t = insert_before_tb(t, dmesg_block([xid(rng, 48, "An uncorrectable double bit error (DBE) has been detected "
                                                     "on GPU in the framebuffer at partition 6, subpartition 0.")]))
    return replace_exc(t, cuda_error("2.0.1", "an illegal memory access was encountered")), 1


@case("xid94-contained-ecc-05", "gpu_hw", "nvidia driver Xid 94 via kernel log (NVIDIA Xid catalog)")
def _(rng):
    t = gpuify(base("compose_backward", 1005, 17), rng, "2.3.1", GPUS[1][0])
    t = replace_exc(t, cuda_error("2.3.1", "uncorrectable ECC error encountered"))
    return t + dmesg_block([xid(rng, 94, "Contained: SM (0x1). RST: No, D-RST: No")]), 1


@case("xid95-uncontained-06", "gpu_hw", "nvidia driver Xid 95 via kernel log (NVIDIA Xid catalog)")
def _(rng):
    t = gpuify(base("compose_item", 1006, 12), rng, "2.4.1", GPUS[0][0])
    t = insert_before_tb(t, dmesg_block([xid(rng, 95, "Uncontained: FBHUB. RST: Yes, D-RST: No")]))
    return replace_exc(t, cuda_error("2.4.1", "an illegal memory access was encountered")), 1


@case("xid74-nvlink-07", "gpu_hw", "nvidia driver Xid 74 (NVLink) via kernel log + nccl src/include/checks.h")
def _(rng):
    t = gpuify(base("compose_backward", 1007, 35), rng, "2.2.2", GPUS[0][0])
    pid = rng.choice(PIDS)
    t = insert_before_tb(t, xid(rng, 74, "NVLink: fatal error detected on link 5(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, "
                                        "0x0)", pid=False) +
                         f"gpu-node07:{pid}:{pid + 12} [3] transport/nvls.cc:151 NCCL WARN Cuda failure 'unspecified "
                         "launch failure'\n")
    return replace_exc(t, nccl_exc("2.2.2", 1691, "unhandled cuda error", "2.19.3", "ncclUnhandledCudaError",
                                   "Call to CUDA function failed.", "Cuda failure 'unspecified launch failure'")), 1


@case("xid119-gsp-timeout-08", "gpu_hw", "nvidia driver Xid 119 (GSP RPC timeout) via kernel log (NVIDIA Xid catalog)")
def _(rng):
    t = gpuify(base("compose_item", 1008, 27), rng, "2.5.1", GPUS[1][0])
    t = insert_before_tb(t, dmesg_block([xid(rng, 119, "Timeout after 6s of waiting for RPC response from GPU3 GSP! "
                                                      "Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).")]))
    return replace_exc(t, cuda_error("2.5.1", "unspecified launch failure")), 1


@case("ecc-nccl-cuda-failure-09", "gpu_hw", "nccl src/include/checks.h (Cuda failure) + pytorch NCCLUtils.hpp")
def _(rng):
    t = gpuify(base("compose_backward", 1009, 19), rng, "2.3.1", GPUS[0][0])
    pid = rng.choice(PIDS)
    t = insert_before_tb(t, f"gpu-node07:{pid}:{pid + 9} [1] init.cc:1871 NCCL WARN Cuda failure 'uncorrectable "
                            "ECC error encountered'\n")
    return replace_exc(t, nccl_exc("2.3.1", 1970, "unhandled cuda error", "2.20.5", "ncclUnhandledCudaError",
                                   "Call to CUDA function failed.",
                                   "Cuda failure 'uncorrectable ECC error encountered'")), 1


@case("cuda-samples-ecc-10", "gpu_hw", "NVIDIA cuda-samples Common/helper_cuda.h (checkCudaErrors), "
      "cudaErrorECCUncorrectable = 214")
def _(rng):
    t = cut(base("none", 1010), 23)
    return t + "\nCUDA error at src/stencil.cu:141 code=214(cudaErrorECCUncorrectable) \"cudaMemcpy(h_out, d_out, " \
               "bytes, cudaMemcpyDeviceToHost)\" \n", 1


@case("xid63-row-remap-11", "gpu_hw", "nvidia driver Xid 63/64 via kernel log (NVIDIA Xid catalog) + nvidia-smi")
def _(rng):
    bus = rng.choice(BUSIDS)
    t = gpuify(base("compose_item", 1011, 9), rng, "1.13.1", GPUS[3][0])
    t = replace_exc(t, cuda_error("1.13.1", "uncorrectable ECC error encountered"))
    return t + dmesg_block([xid(rng, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the "
                                         "framebuffer at partition 2, subpartition 1.", bus=bus),
                            xid(rng, 63, "Row Remapper: New row marked for remapping, reset gpu to activate.",
                                bus=bus, pid=False)]), 1


@case("unknown-error-smi-12", "gpu_hw", "pytorch c10/cuda/CUDAException.cpp (cudaErrorUnknown) + nvidia-smi")
def _(rng):
    bus = rng.choice(BUSIDS)
    t = gpuify(base("compose_forward", 1012, 16), rng, "2.0.1", GPUS[0][0])
    t = replace_exc(t, cuda_error("2.0.1", "unknown error"))
    return t + f"+ nvidia-smi -q -d ECC\nUnable to determine the device handle for GPU{bus}.0: Unknown Error\n", 1


@case("xid79-ddp-13", "gpu_hw", "nvidia driver Xid 79 via kernel log + pytorch ProcessGroupNCCL.cpp (watchdog)")
def _(rng):
    ver = "2.1.2"
    seq = rng.randint(300, 8000)
    r1 = replace_exc(gpuify(base("compose_item", 1013, 30), rng, ver, GPUS[0][0]), cuda_error(ver, "unknown error"))
    r1 = insert_before_tb(r1, dmesg_block([xid(rng, 79, "GPU has fallen off the bus.")]))
    r0 = (gpuify(cut(base("none", 1014), 30), rng, ver, GPUS[0][0]) + "\n", watchdog_lines(rng, 0, seq, ver))
    return ranks([r0, r1], "srun", order=[1, 0]), 1


# ---- cuda_setup (beyond what the CPU build shows) --------------------------------
def setup_tb(rng, ver, last_frames, msg, seed):
    """Failure at startup: real log head (config lines) + traceback in torch.cuda."""
    t = base("none", seed, extra=["--epochs", "1", "--steps-per-epoch", "3"])
    head = "\n".join(l for l in t.split("\n")[:3])
    env = rng.choice(ENVS)
    return gpuify(head, rng, ver, "cuda") .replace(" (cuda)", "") + "\n" + \
        "Traceback (most recent call last):\n" + \
        "  File \"/home/user/proj/train.py\", line 289, in <module>\n    main()\n" + \
        last_frames.replace("ENV/", env) + msg


CUDA_INIT = ("  File \"/home/user/proj/train.py\", line 214, in main\n    model = MLP(args.dim, args.hidden, "
             "args.classes).to(device)\n"
             "  File \"ENV/torch/cuda/__init__.py\", line 298, in _lazy_init\n    torch._C._cuda_init()\n")
SETUP = [
    ("no-cuda-gpus-01", "2.1.2", "RuntimeError: No CUDA GPUs are available\n",
     "pytorch c10/cuda/CUDAFunctions.cpp (device_count_ensure_non_zero)"),
    ("driver-too-old-02", "2.2.2", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). "
     "Please update your GPU driver by downloading and installing a new version from the URL: "
     "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch "
     "version that has been compiled with your version of the CUDA driver.\n",
     "pytorch c10/cuda/CUDAFunctions.cpp (driver version check)"),
    ("no-driver-03", "2.0.1", "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
     "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
     "pytorch c10/cuda/CUDAFunctions.cpp (cudaErrorNoDevice/InsufficientDriver handling)"),
    ("driver-insufficient-04", "1.12.1", "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA "
     "runtime version\n" + NOTE_OLD, "CUDA runtime cudaErrorInsufficientDriver text via pytorch CUDAException.cpp"),
    ("no-capable-device-05", "1.13.1", "RuntimeError: CUDA error: no CUDA-capable device is detected\n" + NOTE_OLD,
     "CUDA runtime cudaErrorNoDevice text via pytorch c10/cuda/CUDAException.cpp"),
    ("devices-busy-06", "2.3.1", "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n" +
     NOTE_NEW, "CUDA runtime cudaErrorDevicesUnavailable text via pytorch c10/cuda/CUDAException.cpp"),
]
for i, (nm, ver, msg, origin) in enumerate(SETUP):
    def mk(i=i, nm=nm, ver=ver, msg=msg, origin=origin):
        @case(nm, "cuda_setup", origin)
        def _(rng):
            return setup_tb(rng, ver, CUDA_INIT, msg, 1100 + i), 1
    mk()


@case("no-kernel-image-07", "cuda_setup", "pytorch torch/cuda/__init__.py (_check_capability warning) + CUDA runtime "
      "cudaErrorNoKernelImageForDevice")
def _(rng):
    env = rng.choice(ENVS)
    t = gpuify(base("compose_forward", 1107, 0), rng, "1.12.1", "NVIDIA H100 80GB HBM3")
    warn = (f"{env}torch/cuda/__init__.py:146: UserWarning: \nNVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not "
            "compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA "
            "capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.\nIf you want to use the NVIDIA H100 80GB HBM3 GPU "
            "with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/\n\n"
            "  warnings.warn(incompatible_device_warn.format(device_name, capability, \" \".join(arch_list), "
            "device_name))\n")
    t = t.replace("INFO train: model has", "INFO train: model has", 1)
    i = t.find("\n", t.find("using device cuda:0")) + 1
    t = t[:i] + warn + t[i:]
    return replace_exc(t, cuda_error("1.12.1", "no kernel image is available for execution on the device")), 1


@case("invalid-device-ordinal-08", "cuda_setup", "CUDA runtime cudaErrorInvalidDevice text via pytorch "
      "c10/cuda/CUDAFunctions.cpp (set_device)")
def _(rng):
    ver = "2.2.2"
    frames = ("  File \"/home/user/proj/train.py\", line 201, in main\n    torch.cuda.set_device(local_rank)\n"
              "  File \"ENV/torch/cuda/__init__.py\", line 408, in set_device\n    torch._C._cuda_setDevice(device)\n")
    return setup_tb(rng, ver, frames, cuda_error(ver, "invalid device ordinal"), 1108), 1


@case("libcudart-12-missing-09", "cuda_setup", "glibc dlopen error text via CPython ctypes / torch/__init__.py "
      "(_load_global_deps)")
def _(rng):
    env = rng.choice(ENVS)
    return ("Traceback (most recent call last):\n"
            "  File \"/home/user/proj/train.py\", line 14, in <module>\n    import torch\n"
            f"  File \"{env}torch/__init__.py\", line 237, in <module>\n    _load_global_deps()\n"
            f"  File \"{env}torch/__init__.py\", line 196, in _load_global_deps\n"
            "    raise err\n"
            f"  File \"{env}torch/__init__.py\", line 157, in _load_global_deps\n"
            "    ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n"
            "  File \"/usr/lib/python3.11/ctypes/__init__.py\", line 376, in __init__\n"
            "    self._handle = _dlopen(self._name, mode)\n                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            "OSError: libcudart.so.12: cannot open shared object file: No such file or directory\n"), 1


# ---- io_error / disk_full errno texts that need special storage -----------------
@case("stale-file-handle-01", "io_error", "linux errno ESTALE (strerror text) raised by CPython Modules/_io/fileio.c")
def _(rng):
    # real torch.load traceback of a missing checkpoint; the errno differs on NFS
    t = base("none", 1201, extra=["--resume", "/nfs/home/user/ckpt/run17/last.pt"])
    return replace_exc(t, "OSError: [Errno 116] Stale file handle: '/nfs/home/user/ckpt/run17/last.pt'\n"), 1


@case("input-output-error-02", "io_error", "linux errno EIO (strerror text) raised by CPython Modules/_io/fileio.c")
def _(rng):
    # real np.load traceback of a missing file; on failing storage the errno is EIO
    t = base("none", 1202, extra=["--data", "/lustre/scratch/user/data/train_features.npy"])
    return replace_exc(t, "OSError: [Errno 5] Input/output error: '/lustre/scratch/user/data/train_features.npy'\n"), 1


@case("quota-exceeded-01", "disk_full", "linux errno EDQUOT (strerror text) raised by CPython Modules/_io/fileio.c")
def _(rng):
    t = cut(base("none", 1203, extra=["--epochs", "3"]), 95)
    return t + ("\nTraceback (most recent call last):\n"
                "  File \"/home/user/proj/train.py\", line 371, in <module>\n    main()\n"
                "  File \"/home/user/proj/train.py\", line 366, in main\n    log_file.write(json.dumps(metrics) + \"\\n\")\n"
                "OSError: [Errno 122] Disk quota exceeded\n"), 1


@case("quota-exceeded-cp-02", "disk_full", "GNU coreutils cp error format with linux errno EDQUOT text")
def _(rng):
    t = base("none", 1204, extra=["--epochs", "1"])
    return t + "cp: error writing '/home/user/results/run42/model_final.pt': Disk quota exceeded\n", 1


def main():
    owns = lambda r: r["source"] == "composed"  # noqa: E731
    remove_owned_logs(owns)
    rows = []
    for name, cls, origin, fn in CASES:
        rng = random.Random(f"{cls}/{name}")
        text, rc = fn(rng)
        assert "__COMPOSED" not in text
        path = write_log(cls, name, text.encode("utf-8", "surrogateescape"))
        rows.append({"file": path, "class": cls, "exit_code": rc, "source": "composed", "origin": origin})
        print(f"{cls:13s} {name:36s} rc={rc:3d} {len(text):7d} chars", flush=True)
    update_labels(rows, owns)


if __name__ == "__main__":
    main()
