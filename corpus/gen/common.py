# SPDX-License-Identifier: MIT
"""Shared code of the gpualert corpus generators.

Every log is the captured stdout+stderr (merged, as a Slurm job's output
file is) of a real program.  The only edits applied afterwards are
redactions of machine-specific details: the temporary working directory
becomes /home/user/proj, the host name becomes a stable node name and the
root home becomes /home/user.
"""
import csv
import os
import shutil
import socket
import subprocess
import tempfile

CORPUS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(CORPUS, "gen")
LOGS = os.path.join(CORPUS, "logs")
LABELS = os.path.join(CORPUS, "labels.tsv")
HEADER = ["file", "class", "exit_code", "source", "origin"]
PY = "/usr/bin/python3"
PROJ = "/home/user/proj"          # stable path the user project appears at
NODE = "gpu-node07"


def redact(data: bytes, workdir: str) -> bytes:
    """Replace machine-specific strings; nothing else is touched."""
    reps = [(os.path.realpath(workdir), PROJ), (workdir, PROJ),
            ("/root/", "/home/user/")]
    host = socket.gethostname()
    for a, b in reps:
        data = data.replace(a.encode(), b.encode())
    if host:
        for pat in (f"@{host}", f" {host}:", f"[{host}]", f"({host})",
                    f"host {host}", f"{host}.", f"node: {host}"):
            data = data.replace(pat.encode(), pat.replace(host, NODE).encode())
    return data


def make_workdir():
    """A fresh copy of the user project (gen/proj) in a temp dir."""
    d = tempfile.mkdtemp(prefix="gpualert-corpus-")
    os.chmod(d, 0o755)
    shutil.copytree(os.path.join(GEN, "proj"), d, dirs_exist_ok=True)
    return d


def run(cmd, workdir, env=None, timeout=300, shell=False, stdin=None):
    """Run cmd in workdir; return (exit_code, merged output bytes).

    exit_code follows the corpus convention: -N when killed by signal N."""
    e = dict(os.environ)
    e.update({"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
              "PYTHONDONTWRITEBYTECODE": "1", "HOME": workdir,
              "LANG": "C.UTF-8", "TERM": "dumb"})
    for k in ("PYENV_VERSION", "VIRTUAL_ENV", "PYTHONPATH"):
        e.pop(k, None)
    e["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    if env:
        e.update(env)
    p = subprocess.run(cmd, cwd=workdir, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout, shell=shell,
                       stdin=stdin if stdin is not None else subprocess.DEVNULL)
    return p.returncode, p.stdout


def write_log(cls, name, data: bytes):
    d = os.path.join(LOGS, cls)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name + ".log")
    with open(path, "wb") as f:
        f.write(data)
    return os.path.relpath(path, CORPUS)


def update_labels(rows, owns):
    """Replace the rows owned by one generator (owns(row) -> bool) by rows."""
    old = []
    if os.path.exists(LABELS):
        with open(LABELS, newline="") as f:
            r = csv.reader(f, delimiter="\t")
            next(r, None)
            old = [x for x in r if x and not owns(dict(zip(HEADER, x)))]
    for row in old:
        pass
    allrows = old + [[r[h] for h in HEADER] for r in rows]
    for r in allrows:
        assert all("\t" not in str(c) and "\n" not in str(c) for c in r), r
    allrows.sort(key=lambda r: r[0])
    with open(LABELS, "w", newline="") as f:
        f.write("\t".join(HEADER) + "\n")
        for r in allrows:
            f.write("\t".join(str(c) for c in r) + "\n")


def remove_owned_logs(owns):
    """Delete log files listed in labels.tsv rows that a generator owns."""
    if not os.path.exists(LABELS):
        return
    with open(LABELS, newline="") as f:
        r = csv.reader(f, delimiter="\t")
        next(r, None)
        for x in r:
            if x and owns(dict(zip(HEADER, x))):
                p = os.path.join(CORPUS, x[0])
                if os.path.exists(p):
                    os.remove(p)
