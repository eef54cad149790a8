#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reproduce failure (and success) logs for real on a CPU machine.

Run as root with /usr/bin/python3 (Debian python3-torch, CPU build):
    /usr/bin/python3 corpus/gen/reproduce.py [case-name-substring ...]
Each case copies gen/proj into a fresh temp dir, runs a real program there,
captures merged stdout+stderr and the exit status, redacts temp paths and
the host name (gen/common.py) and writes logs/<class>/<case>.log plus its
labels.tsv row (origin gen/reproduce.py:<case>).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (GEN, PY, make_workdir, redact, remove_owned_logs, run,  # noqa: E402
                    update_labels, write_log)

CASES = []
ORIGIN = "gen/reproduce.py:"


def case(name, cls, cmd, **kw):
    CASES.append(dict(name=name, cls=cls, cmd=cmd, **kw))


def T(*a):
    return [PY, "train.py", *a]


def Tsh(*a):
    return f"{PY} train.py " + " ".join(a)


# ---------------------------------------------------------------- setups
def build_native(wd):
    subprocess.run(["sh", os.path.join(GEN, "native", "build.sh"), os.path.join(wd, "build")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, CFLAGS="-w"))


def make_ckpt(wd, name="checkpoints/last.pt", cuda=False):
    os.makedirs(os.path.join(wd, "checkpoints"), exist_ok=True)
    code = ("import torch,sys\n"
            "import torch.serialization as s\n"
            "torch.manual_seed(0)\n"
            "m=torch.nn.Sequential(torch.nn.Linear(32,64),torch.nn.Linear(64,64),torch.nn.Linear(64,10))\n"
            "sd={'fc1.weight':m[0].weight,'fc1.bias':m[0].bias,'fc2.weight':m[1].weight,'fc2.bias':m[1].bias,"
            "'head.weight':m[2].weight,'head.bias':m[2].bias}\n"
            "sd={k:v.detach() for k,v in sd.items()}\n")
    if cuda:  # tag storages as cuda:0, as a checkpoint written on a GPU node is
        code += "s.location_tag=lambda storage:'cuda:0'\n"
    code += f"torch.save({{'model':sd,'epoch':3}}, {name!r})\n"
    subprocess.run([PY, "-c", code], cwd=wd, check=True)


def truncate(path, frac):
    n = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(int(n * frac))


def corrupt_member(path):
    # overwrite the middle of the first tensor record (keeps zip directory)
    with zipfile.ZipFile(path) as z:
        info = [i for i in z.infolist() if "/data/" in i.filename][0]
    with open(path, "r+b") as f:
        f.seek(info.header_offset)
        f.write(b"\x00" * 40)


def setup_truncated(wd):
    make_ckpt(wd)
    truncate(os.path.join(wd, "checkpoints/last.pt"), 0.6)


def setup_empty(wd):
    os.makedirs(os.path.join(wd, "checkpoints"), exist_ok=True)
    open(os.path.join(wd, "checkpoints/last.pt"), "wb").close()


def setup_corrupt(wd):
    make_ckpt(wd)
    corrupt_member(os.path.join(wd, "checkpoints/last.pt"))


def setup_cuda_ckpt(wd):
    make_ckpt(wd, cuda=True)


def setup_ro_ckpt_dir(wd):
    os.makedirs(os.path.join(wd, "checkpoints"), mode=0o755, exist_ok=True)


def setup_unreadable_data(wd):
    import numpy as np
    os.makedirs(os.path.join(wd, "data"), exist_ok=True)
    p = os.path.join(wd, "data/train_features.npy")
    np.save(p, np.zeros((16, 32), dtype=np.float32))
    os.chmod(p, 0)


def setup_truncated_npy(wd):
    import numpy as np
    os.makedirs(os.path.join(wd, "data"), exist_ok=True)
    p = os.path.join(wd, "data/train_features.npy")
    np.save(p, np.arange(4096 * 32, dtype=np.float32).reshape(4096, 32))
    truncate(p, 0.3)


def setup_records(wd):
    # a text shard with a latin-1 line and a NUL byte, as scraped data has
    with open(os.path.join(wd, "records.txt"), "wb") as f:
        f.write(b"caf\xe9 au lait\tlabel=3\n")
        f.write(b"plain record\tlabel=1\n")
        f.write(b"bin\x00ary\xff\xfe tail\tlabel=7\n")


def setup_shard(wd):
    os.makedirs(os.path.join(wd, "data"), exist_ok=True)
    with open(os.path.join(wd, "data/shard-000.bin"), "wb") as f:
        f.write(bytes(range(256)) * 1024)


def setup_syntax(wd):
    with open(os.path.join(wd, "metrics.py"), "w") as f:
        f.write("def top_k(logits, k=5)\n    return logits.topk(k).indices\n")
    with open(os.path.join(wd, "run_eval.py"), "w") as f:
        f.write("import torch\nprint('building evaluator', flush=True)\nfrom metrics import top_k\n"
                "print(top_k(torch.randn(4, 10)))\n")


def setup_relimport(wd):
    os.makedirs(os.path.join(wd, "models"), exist_ok=True)
    with open(os.path.join(wd, "models/vit.py"), "w") as f:
        f.write("print('vit module: loading', flush=True)\nfrom .layers import Attention\n")


def setup_circular(wd):
    os.makedirs(os.path.join(wd, "pkg"), exist_ok=True)
    open(os.path.join(wd, "pkg/__init__.py"), "w").close()
    with open(os.path.join(wd, "pkg/model.py"), "w") as f:
        f.write("from pkg.losses import FocalLoss\nclass Net: pass\n")
    with open(os.path.join(wd, "pkg/losses.py"), "w") as f:
        f.write("from pkg.model import Net\nclass FocalLoss: pass\n")


def both(*fs):
    def s(wd):
        for f in fs:
            f(wd)
    return s


def cgroup_setup(limit_mb):
    path = f"/sys/fs/cgroup/memory/gpualert-corpus-{limit_mb}"

    def pre(wd):
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit_mb << 20))

    def post(wd):
        try:
            os.rmdir(path)
        except OSError:
            pass
    return path, pre, post


def tmpfs_cmd(mnt, size, inner):
    """Run inner in a private mount namespace with a tiny tmpfs at mnt."""
    script = f'mount -t tmpfs -o size={size} tmpfs {mnt} || exit 99; trap "umount {mnt}" EXIT; {inner}'
    return f"mkdir -p {mnt} && unshare -m --propagation private bash -c {shlex.quote(script)}"


def pyc(code):
    return f"{PY} -c {shlex.quote(code)}"


L = [PY, os.path.join(GEN, "launch.py")]


JOB_HEAD = ('echo "job started $(date -u +%Y-%m-%dT%H:%M:%S) node: $(hostname)"\n'
            'echo "python: $(' + PY + ' --version 2>&1)"\n')


def job(body, head=True):
    return "#!/bin/bash\n" + (JOB_HEAD if head else "") + body + "\n"


# ============================================================ success
case("train-default-01", "success", T("--epochs", "3", "--seed", "1"))
case("train-color-02", "success", T("--epochs", "2", "--color", "--seed", "2"))
case("train-crlf-03", "success", T("--epochs", "2", "--crlf", "--seed", "3", "--bar-every", "4"))
case("train-long-progress-04", "success", T("--epochs", "10", "--steps-per-epoch", "1500", "--batch-size", "8",
                                              "--log-every", "250", "--seed", "4"), timeout=600)
case("train-warnings-05", "success", T("--warn", "tensor_copy,future,deprecation,gradscaler,sched_order",
                                        "--seed", "5"))
case("train-retried-download-06", "success", T("--warn", "retry,missing_override", "--seed", "6"))
case("train-batch-probe-07", "success", T("--warn", "batch_probe", "--seed", "7", "--epochs", "3"))
case("train-raw-records-08", "success", T("--print-records", "records.txt", "--seed", "8"), setup=setup_records)
case("train-no-final-newline-09", "success", T("--seed", "9", "--final", "writing summary... done"))
case("train-sgd-save-10", "success", T("--optim", "sgd", "--lr", "0.05", "--save", "checkpoints/model.pt",
                                        "--seed", "10"), setup=setup_ro_ckpt_dir)
case("train-resume-11", "success", T("--resume", "checkpoints/last.pt", "--seed", "11", "--color"), setup=make_ckpt)
case("train-job-script-12", "success", job(Tsh("--seed", "12", "--epochs", "2") + '\necho "exit status $?"'), shell=True)
case("ddp-launch-ok-13", "success", [PY, os.path.join(GEN, "launch.py"), "2", "29601", PY, "ddp_train.py"])
case("ddp-launch-rankprefix-ok-14", "success", [*L, "2", "29602", PY, "ddp_train.py", "--steps", "30"],
     env={"LAUNCH_PREFIX": "torchrun"})
case("train-workers-gradscaler-15", "success", T("--seed", "15", "--warn", "gradscaler", "--workers", "2"))
case("ddp-4ranks-plain-ok-16", "success", [*L, "4", "29617", PY, "ddp_train.py", "--steps", "25"],
     env={"LAUNCH_PREFIX": "none"})
case("train-resume-warnings-17", "success", T("--epochs", "1", "--resume", "checkpoints/last.pt", "--warn",
                                              "missing_override,deprecation", "--seed", "17"), setup=make_ckpt)
case("train-color-crlf-18", "success", T("--color", "--crlf", "--seed", "18", "--final", "done"))

# ============================================================ code_error
for i, (c, extra) in enumerate([
        ("typeerror_none", []), ("typeerror_str", ["--color"]), ("valueerror_reshape", []), ("keyerror", []),
        ("attributeerror", []), ("indexerror", []), ("indexerror_list", []), ("assertion", ["--crlf"]),
        ("matmul_shape", []), ("linear_shape", ["--workers", "2"]), ("cat_shape", []), ("view_stride", []),
        ("nameerror", []), ("zerodiv", []), ("dtype_double", []), ("dtype_target", []), ("embedding_float", []),
        ("backward_twice", []), ("inplace", []), ("json_config", [])], 1):
    case(f"{c.replace('_', '-')}-{i:02d}", "code_error",
         T("--case", c, "--fail-at", str(3 + (5 * i) % 70), "--seed", str(100 + i), *extra))
case("worker-valueerror-21", "code_error", T("--case", "worker_valueerror", "--fail-at", "12", "--workers", "2"))
case("syntax-error-22", "code_error", [PY, "run_eval.py"], setup=setup_syntax)
case("ddp-keyerror-rank1-23", "code_error", [PY, os.path.join(GEN, "launch.py"), "2", "29603", PY,
                                             "ddp_train.py", "--case", "keyerror", "--fail-at", "12"])
case("ddp-keyerror-plain-24", "code_error", [*L, "2", "29604", PY, "ddp_train.py", "--case", "keyerror",
                                             "--fail-at", "22"], env={"LAUNCH_PREFIX": "none"})
case("recursion-25", "code_error", [PY, "-X", "faulthandler", "train.py", "--case", "recursion_segv", "--fail-at", "5"])

# ============================================================ nan
case("nan-lr-raise-01", "nan", T("--optim", "sgd", "--lr", "30", "--nan-check", "raise", "--seed", "201"))
case("nan-lr-exit0-02", "nan", T("--optim", "sgd", "--lr", "30", "--seed", "202"))
case("nan-lr-exit0-color-03", "nan", T("--optim", "sgd", "--lr", "80", "--seed", "203", "--color", "--epochs", "3"))
case("nan-anomaly-04", "nan", T("--optim", "sgd", "--lr", "30", "--nan-check", "anomaly", "--seed", "204"))
case("nan-clip-nonfinite-05", "nan", T("--optim", "sgd", "--lr", "1e38", "--nan-check", "clip", "--seed", "205"))
case("nan-loss-scale-06", "nan", T("--optim", "sgd", "--lr", "30", "--nan-check", "scaler", "--seed", "206"))
case("nan-assert-07", "nan", T("--optim", "sgd", "--lr", "40", "--nan-check", "assert", "--seed", "207"))
case("nan-skip-exit0-08", "nan", T("--optim", "sgd", "--lr", "30", "--nan-check", "skip", "--seed", "208"))
case("nan-overflow-09", "nan", T("--case", "np_overflow", "--fail-at", "30", "--seed", "209"))
case("nan-lr-raise-10", "nan", T("--optim", "sgd", "--lr", "12", "--nan-check", "raise", "--seed", "210",
                                 "--epochs", "4", "--log-every", "5"))
case("nan-adamw-anomaly-11", "nan", T("--lr", "1e4", "--nan-check", "anomaly", "--seed", "211", "--color"))
case("ddp-nan-rank1-12", "nan", [PY, os.path.join(GEN, "launch.py"), "2", "29605", PY, "ddp_train.py",
                                 "--case", "nan", "--fail-at", "17"])
case("nan-adamw-exit0-13", "nan", T("--lr", "1e4", "--seed", "213", "--crlf"))

# ============================================================ host_oom
case("ulimit-memoryerror-01", "host_oom", "ulimit -v 4000000; " + Tsh("--case", "memoryerror", "--fail-at", "9"),
     shell=True)
case("ulimit-numpy-alloc-02", "host_oom", "ulimit -v 4000000; " + Tsh("--case", "numpy_alloc", "--fail-at", "14"),
     shell=True)
case("ulimit-torch-alloc-03", "host_oom", "ulimit -v 4000000; " + Tsh("--case", "torch_alloc", "--fail-at", "21"),
     shell=True)
case("prlimit-memoryerror-04", "host_oom", ["prlimit", "--as=3000000000", PY, "train.py", "--case", "memoryerror",
                                            "--fail-at", "31", "--color"])
case("bad-alloc-05", "host_oom", "ulimit -v 2000000; exec build/featcache", shell=True, setup=build_native)
case("bad-alloc-job-06", "host_oom", job("ulimit -v 1500000\nbuild/featcache\nrc=$?\necho \"featcache exited with $rc\"\nexit $rc"),
     shell=True, setup=build_native)
case("worker-memoryerror-07", "host_oom", "ulimit -v 5000000; " + Tsh("--case", "worker_memoryerror", "--fail-at",
                                                                        "10", "--workers", "2"), shell=True)
_cg, _pre, _post = cgroup_setup(700)
case("cgroup-worker-oomkill-08", "host_oom",
     f"echo $$ > {_cg}/cgroup.procs && exec " + Tsh("--case", "worker_oomkill", "--fail-at", "6", "--workers", "2"),
     shell=True, setup=_pre, post=_post)
case("cgroup-oomkill-job-09", "host_oom",
     job(f"echo $$ > {_cg}/cgroup.procs\n" + Tsh("--case", "memoryerror", "--fail-at", "16")), shell=True,
     setup=_pre, post=_post)
case("ddp-memoryerror-rank1-10", "host_oom", [PY, os.path.join(GEN, "launch.py"), "2", "29606", PY, "ddp_train.py",
                                             "--case", "memoryerror", "--fail-at", "21"])
case("shm-exhausted-11", "host_oom",
     tmpfs_cmd("/dev/shm", "256k", Tsh("--workers", "2", "--dim", "2048", "--seed", "311")), shell=True)
case("ulimit-memoryerror-crlf-12", "host_oom", "ulimit -v 4000000; " + Tsh("--case", "memoryerror", "--fail-at", "27",
                                                                             "--crlf"), shell=True)
case("huge-bytearray-13", "host_oom", [PY, "-c", "import torch\nvocab, seq, batch = 256000, 8192, 4096\n"
                                       "print(f'allocating logits buffer for batch={batch}', flush=True)\n"
                                       "buf = bytearray(vocab * seq * batch * 4)"])
case("numpy-huge-14", "host_oom", [PY, "-c", "import numpy as np\nn = 1 << 20\n"
                                   "print('building pairwise distance matrix', n, 'x', n, flush=True)\n"
                                   "d = np.zeros((n, n))"])

# ============================================================ disk_full
case("torch-save-tmpfs-01", "disk_full", tmpfs_cmd("ckpt", "64k", Tsh("--hidden", "256", "--save", "ckpt/model.pt")),
     shell=True)
case("open-write-tmpfs-02", "disk_full", tmpfs_cmd(
    "out", "64k", pyc("f = open('out/predictions.csv', 'w')\nprint('writing predictions', flush=True)\n"
                      "for i in range(100000):\n    f.write(f'{i},{i % 10},{i / 1e5:.6f}\\n')\nf.close()")),
     shell=True)
case("np-save-tmpfs-03", "disk_full", tmpfs_cmd(
    "out", "128k", pyc("import numpy as np\nprint('saving embeddings', flush=True)\n"
                       "np.save('out/emb.npy', np.zeros((512, 768), dtype=np.float32))")), shell=True)
case("cp-scratch-job-04", "disk_full", job("mkdir -p scratch\n" + tmpfs_cmd(
    "scratch", "64k", "echo staging dataset; cp data/shard-000.bin scratch/ && echo staged") +
    '\n' + Tsh("--data", "scratch/shard-000.npy")), shell=True, setup=setup_shard)
case("dd-tmpfs-05", "disk_full", tmpfs_cmd("scratch", "128k", "dd if=/dev/zero of=scratch/cache.bin bs=64k count=8"),
     shell=True)
case("tar-tmpfs-06", "disk_full", tmpfs_cmd("scratch", "64k", "tar -cf scratch/results.tar data"), shell=True,
     setup=setup_shard)
case("torch-save-tmpfs-color-07", "disk_full", tmpfs_cmd(
    "ckpt", "96k", Tsh("--hidden", "256", "--save", "ckpt/model.pt", "--color", "--epochs", "3")), shell=True)
case("logging-tmpfs-08", "disk_full", tmpfs_cmd(
    "logs", "16k", pyc("import logging, sys\n"
                       "logging.basicConfig(level=logging.INFO, handlers=[logging.FileHandler('logs/run.log'), "
                       "logging.StreamHandler(sys.stdout)])\n"
                       "for i in range(600):\n    logging.info('step %d loss %.4f', i, 1 / (i + 1))\n"
                       "with open('logs/summary.json', 'w') as f:\n"
                       "    f.write('{\"final_loss\": 0.0017}' * 2000)\n")),
     shell=True)
case("ddp-save-tmpfs-09", "disk_full", tmpfs_cmd(
    "ckpt", "8k", f"{PY} {GEN}/launch.py 2 29607 {PY} ddp_train.py --save ckpt"), shell=True)
case("torch-save-tmpfs-crlf-10", "disk_full", tmpfs_cmd(
    "ckpt", "64k", Tsh("--hidden", "256", "--save", "ckpt/model.pt", "--crlf")), shell=True)

case("shutil-copy-tmpfs-11", "disk_full", tmpfs_cmd(
    "scratch", "96k", pyc("import shutil, glob\nfor p in sorted(glob.glob('data/*.bin')):\n"
                          "    print('staging', p, flush=True)\n    shutil.copy(p, 'scratch/')")),
    shell=True, setup=setup_shard)
case("json-dump-tmpfs-12", "disk_full", tmpfs_cmd(
    "results", "32k", pyc("import json, random\nrandom.seed(0)\nrows = [{'id': i, 'score': random.random()} "
                          "for i in range(20000)]\nprint('dumping', len(rows), 'rows', flush=True)\n"
                          "with open('results/scores.json', 'w') as f:\n    json.dump(rows, f)")), shell=True)

# ============================================================ io_error
case("missing-data-01", "io_error", T("--data", "data/train_features.npy", "--seed", "401"))
case("missing-resume-02", "io_error", T("--resume", "checkpoints/epoch_12.pt", "--seed", "402"))
case("truncated-ckpt-03", "io_error", T("--resume", "checkpoints/last.pt", "--seed", "403"), setup=setup_truncated)
case("empty-ckpt-04", "io_error", T("--resume", "checkpoints/last.pt", "--seed", "404"), setup=setup_empty)
case("corrupt-ckpt-05", "io_error", T("--resume", "checkpoints/last.pt", "--seed", "405"), setup=setup_corrupt)
case("perm-save-06", "io_error", ["runuser", "-u", "nobody", "--", *T("--save", "checkpoints/model.pt", "--seed", "406")],
     setup=setup_ro_ckpt_dir)
case("perm-read-07", "io_error", ["runuser", "-u", "nobody", "--", *T("--data", "data/train_features.npy")],
     setup=setup_unreadable_data)
case("perm-mkdir-job-08", "io_error", job("runuser -u nobody -- mkdir -p runs/exp42 || exit 1\n" + Tsh()), shell=True)
case("script-typo-job-09", "io_error", job(f"{PY} trian.py --epochs 3"), shell=True)
case("truncated-npy-10", "io_error", T("--data", "data/train_features.npy", "--seed", "410"), setup=setup_truncated_npy)
case("isadirectory-11", "io_error", T("--resume", "checkpoints", "--seed", "411"), setup=setup_ro_ckpt_dir)
case("perm-save-color-12", "io_error", ["runuser", "-u", "nobody", "--",
                                        *T("--save", "checkpoints/model.pt", "--color", "--epochs", "1")],
     setup=setup_ro_ckpt_dir)

# ============================================================ import_error
case("missing-module-01", "import_error", [PY, "-c", "import torch\nprint('torch', torch.__version__, flush=True)\n"
                                           "import wandb"])
case("missing-module-02", "import_error", [PY, "-c", "from transformers import AutoModel"])
case("missing-module-job-03", "import_error", job(f"{PY} -c 'import apex.optimizers'\n"), shell=True)
case("bad-name-04", "import_error", [PY, "-c", "import torch\nfrom torch.optim import FusedLAMB"])
case("bad-name-05", "import_error", [PY, "-c", "from torch.utils.data import StatefulDataLoader"])
case("undefined-symbol-ctypes-06", "import_error",
     [PY, "-c", "import ctypes, os\nprint('loading custom ops', flush=True)\n"
      "lib = ctypes.CDLL(os.path.abspath('build/libfastops.so'))"], setup=build_native)
case("undefined-symbol-ext-07", "import_error",
     [PY, "-c", "import sys; sys.path.insert(0, 'build')\nimport torch\nimport _fused_optim"], setup=build_native)
case("version-node-08", "import_error",
     [PY, "-c", "import ctypes\nctypes.CDLL('build/libplugin.so')"], setup=build_native,
     env={"LD_LIBRARY_PATH": "build"})
case("relative-import-09", "import_error", [PY, "models/vit.py"], setup=setup_relimport)
case("circular-import-10", "import_error", [PY, "-c", "import pkg.model"], setup=setup_circular)
case("missing-submodule-11", "import_error", [PY, "-m", "proj.tools.export"])
case("missing-module-train-12", "import_error", [PY, "-c", "import runpy, sys\nsys.argv=['train.py']\n"
                                                 "import torch, numpy\nimport deepspeed"])
case("removed-alias-13", "import_error", [PY, "-c", "import numpy\nprint('numpy', numpy.__version__, flush=True)\n"
                                         "from numpy import float"])
case("missing-module-eval-14", "import_error", [PY, "-c", "import torch\nprint('evaluating', flush=True)\n"
                                                "from sklearn.metrics import f1_score"])

# ============================================================ segfault
case("ctypes-null-faulthandler-01", "segfault", [PY, "-X", "faulthandler", "train.py", "--case", "segv",
                                                  "--fail-at", "13"])
case("ctypes-null-bare-02", "segfault", T("--case", "segv", "--fail-at", "19", "--seed", "502"))
case("ctypes-null-job-03", "segfault", job(Tsh("--case", "segv", "--fail-at", "23")), shell=True)
case("abort-04", "segfault", T("--case", "abort", "--fail-at", "11"))
case("ctypes-null-faulthandler-color-05", "segfault", [PY, "-X", "faulthandler", "train.py", "--case", "segv",
                                                       "--fail-at", "33", "--color", "--epochs", "3"])
case("c-null-deref-06", "segfault", ["build/solver"], setup=build_native)
case("c-double-free-07", "segfault", ["build/collate"], setup=build_native)
case("c-invalid-free-08", "segfault", job("build/loadw"), shell=True, setup=build_native)
case("c-stack-smash-09", "segfault", ["build/parse"], setup=build_native)
case("c-sigill-10", "segfault", job("build/dispatch 3"), shell=True, setup=build_native)
case("c-sigbus-11", "segfault", job("build/mapshard shard.bin"), shell=True, setup=build_native)
case("cxx-terminate-12", "segfault", ["build/tokenizer"], setup=build_native)
case("worker-segv-13", "segfault", T("--case", "worker_segv", "--fail-at", "9", "--workers", "2"))
case("ddp-segv-rank1-14", "segfault", [PY, os.path.join(GEN, "launch.py"), "2", "29608", PY, "-X", "faulthandler",
                                       "ddp_train.py", "--case", "segv", "--fail-at", "14"])

# ============================================================ unknown
case("sys-exit3-01", "unknown", T("--case", "exit3", "--fail-at", "25"))
case("sigterm-02", "unknown", T("--case", "self_sigterm", "--fail-at", "17"))
case("sigusr1-03", "unknown", T("--case", "self_sigusr1", "--fail-at", "29"))
case("sighup-04", "unknown", T("--case", "self_sighup", "--fail-at", "33", "--color"))
case("os-exit-05", "unknown", T("--case", "os_exit", "--fail-at", "21"))
case("job-exit2-06", "unknown", job(Tsh("--epochs", "1") + '\necho "evaluation: 3/4 shards scored"\nexit 2'),
     shell=True)
case("job-set-e-07", "unknown", job("set -e\n" + Tsh("--epochs", "1") + "\ntouch metrics.json\ntest -s metrics.json\n"
                                   'echo "uploading results"'), shell=True)
case("job-false-08", "unknown", job(Tsh("--epochs", "1", "--seed", "808") + "\n/bin/false"), shell=True)
case("exit255-09", "unknown", [PY, "-c", "import sys\nprint('preprocessing 1200 files', flush=True)\n"
                               "print('preprocessing finished', flush=True)\nsys.exit(255)"])
# rank 1 exits 1 silently; rank 0 only shows gloo's "Connection closed by peer": nccl by the taxonomy
case("gloo-peer-exit-08", "nccl", [*L, "2", "29609", PY, "ddp_train.py", "--case", "exit", "--fail-at", "39",
                                      "--steps", "40"], env={"LAUNCH_PREFIX": "torchrun"})
case("sigterm-crlf-11", "unknown", T("--case", "self_sigterm", "--fail-at", "61", "--crlf", "--epochs", "3"))
case("sys-exit3-color-12", "unknown", T("--case", "exit3", "--fail-at", "45", "--color"))
case("sigalrm-13", "unknown", job(f"{PY} -c " + shlex.quote("import signal, time\nprint('waiting for data server', "
                                                            "flush=True)\nsignal.alarm(2)\ntime.sleep(10)")),
     shell=True)

# ============================================================ nccl (gloo, communication failure only)
case("gloo-peer-killed-01", "nccl", [PY, os.path.join(GEN, "launch.py"), "2", "29610", PY, "ddp_train.py",
                                    "--case", "sigkill", "--fail-at", "13"])
case("gloo-peer-killed-3ranks-02", "nccl", [*L, "3", "29611", PY, "ddp_train.py", "--case", "sigkill",
                                           "--fail-at", "8", "--fail-rank", "2"], env={"LAUNCH_PREFIX": "torchrun"})
case("gloo-peer-killed-plain-06", "nccl", [*L, "4", "29616", PY, "ddp_train.py", "--case", "sigkill",
                                         "--fail-at", "26", "--fail-rank", "3"], env={"LAUNCH_PREFIX": "none"})
case("gloo-recv-timeout-03", "nccl", [PY, os.path.join(GEN, "launch.py"), "2", "29612", PY, "ddp_train.py",
                                     "--case", "hang", "--fail-at", "11", "--timeout", "8"], timeout=120)
case("store-barrier-timeout-04", "nccl", "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29613 " +
     f"{PY} ddp_train.py --timeout 8", shell=True, timeout=120)
case("store-connect-timeout-05", "nccl", "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29614 " +
     f"{PY} ddp_train.py --timeout 8", shell=True, timeout=120)
case("gloo-peer-killed-rank0-07", "nccl", [*L, "2", "29618", PY, "ddp_train.py", "--case", "sigkill",
                                         "--fail-at", "35", "--fail-rank", "0"])

# ============================================================ cuda_setup (CPU-only torch build)
case("cuda-tensor-01", "cuda_setup", T("--case", "cuda_tensor", "--fail-at", "0"))
case("model-to-cuda-02", "cuda_setup", [PY, "-c", "import torch\nprint('GPUs visible:', torch.cuda.device_count(), "
                                        "flush=True)\nm = torch.nn.Linear(8, 8).to('cuda')"])
case("set-device-03", "cuda_setup", [PY, "-c", "import os, torch\nlocal_rank = int(os.environ.get('LOCAL_RANK', 0))\n"
                                     "torch.cuda.set_device(local_rank)"])
case("cuda-ckpt-04", "cuda_setup", T("--resume", "checkpoints/last.pt"), setup=setup_cuda_ckpt)
case("libcudart-missing-05", "cuda_setup", [PY, "-c", "import ctypes, torch\nprint('loading kernels', flush=True)\n"
                                            "ctypes.CDLL('build/libkernels.so')"], setup=build_native)
case("nccl-backend-missing-06", "cuda_setup", [PY, os.path.join(GEN, "launch.py"), "2", "29615", PY, "-c",
                                               "import torch.distributed as d\nd.init_process_group('nccl')"])
case("cuda-device-07", "cuda_setup", [PY, "-c", "import torch\ndev = torch.device('cuda:0')\n"
                                      "x = torch.randn(4, 4, device=dev)"])
case("get-device-name-08", "cuda_setup", [PY, "-c", "import torch\nprint(torch.cuda.get_device_name(0))"])


FAULT_OPTS = {"--case": "FAULT_CASE", "--fail-at": "FAULT_STEP", "--fail-rank": "FAULT_RANK"}


def extract_fault(cmd):
    """Move --case/--fail-at/--fail-rank into the environment (see train.py)."""
    env = {}
    if isinstance(cmd, list):
        out, i = [], 0
        while i < len(cmd):
            if cmd[i] in FAULT_OPTS:
                env[FAULT_OPTS[cmd[i]]] = cmd[i + 1]
                i += 2
            else:
                out.append(cmd[i])
                i += 1
        return out, env
    for opt, var in FAULT_OPTS.items():
        m = re.search(re.escape(opt) + r" (\S+)", cmd)
        if m:
            env[var] = m.group(1)
            cmd = cmd.replace(m.group(0) + " ", "").replace(" " + m.group(0), "")
    return cmd, env


def main():
    sel = sys.argv[1:]
    owns = lambda r: r["origin"].startswith(ORIGIN)  # noqa: E731
    rows = []
    if not sel:
        remove_owned_logs(owns)
    else:  # keep rows of the cases not re-run
        import csv
        from common import LABELS, HEADER
        if os.path.exists(LABELS):
            with open(LABELS) as f:
                r = csv.reader(f, delimiter="\t")
                next(r)
                rows = [dict(zip(HEADER, x)) for x in r if x and x[4].startswith(ORIGIN)
                        and not any(s in x[4] for s in sel)]
    for c in CASES:
        if sel and not any(s in c["name"] for s in sel):
            continue
        wd = make_workdir()
        try:
            if c.get("setup"):
                c["setup"](wd)
            cmd, fenv = extract_fault(c["cmd"])
            fenv.update(c.get("env") or {})
            shell = c.get("shell", False)
            if shell and cmd.startswith("#!/bin/bash"):
                with open(os.path.join(wd, "job.sh"), "w") as f:
                    f.write(cmd)
                cmd, shell = ["bash", "job.sh"], False
            elif shell:
                cmd = ["bash", "-c", cmd]
                shell = False
            try:
                rc, out = run(cmd, wd, env=fenv, timeout=c.get("timeout", 300))
            finally:
                if c.get("post"):
                    c["post"](wd)
            out = redact(out, wd)
            path = write_log(c["cls"], c["name"], out)
            rows = [r for r in rows if r["file"] != path]
            rows.append(dict(file=path, **{"class": c["cls"]}, exit_code=rc, source="reproduced",
                             origin=ORIGIN + c["name"]))
            print(f"{c['cls']:13s} {c['name']:32s} rc={rc:4d} {len(out):8d} bytes", flush=True)
        finally:
            subprocess.run(["chmod", "-R", "u+rwX", wd])
            shutil.rmtree(wd, ignore_errors=True)
    update_labels(rows, owns)


if __name__ == "__main__":
    main()
