#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Minimal multi-process launcher used by the corpus generators.

Starts N ranks of a command with RANK/WORLD_SIZE/MASTER_* set and prefixes
each output line with the task number: "3: " like `srun -l` (default),
"[rank3]:" like recent torchrun (LAUNCH_PREFIX=torchrun), or not at all
(LAUNCH_PREFIX=none, ranks share one stream as with plain srun).
Exits with the status of the first rank that failed (-N for a signal)."""
import os
import subprocess
import sys
import threading


STYLE = os.environ.get("LAUNCH_PREFIX", "srun")


def prefix(rank):
    if STYLE == "none":
        return b""
    if STYLE == "torchrun":
        return f"[rank{rank}]:".encode()
    return f"{rank}: ".encode()


def pump(rank, stream, out, lock):
    buf = b""
    while True:
        chunk = stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            with lock:
                out.write(prefix(rank) + line + b"\n")
                out.flush()
    if buf:
        with lock:
            out.write(prefix(rank) + buf + b"\n")
            out.flush()


def main():
    n = int(sys.argv[1])
    port = sys.argv[2]
    cmd = sys.argv[3:]
    lock = threading.Lock()
    procs, threads = [], []
    for r in range(n):
        env = dict(os.environ)
        env.pop("LAUNCH_PREFIX", None)
        env.update(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        t = threading.Thread(target=pump, args=(r, p.stdout, sys.stdout.buffer, lock))
        t.start()
        procs.append(p)
        threads.append(t)
    codes = [p.wait() for p in procs]
    for t in threads:
        t.join()
    bad = [c for c in codes if c != 0]
    rc = bad[0] if bad else 0
    sys.exit(128 - rc if rc < 0 else rc)


if __name__ == "__main__":
    main()
