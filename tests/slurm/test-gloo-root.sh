#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-gloo-root.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# Root cause across nodes with a real torch.distributed run: a 2-node
# srun step of 2 gloo ranks (Debian's python3-torch).  After three
# all-reduces rank 1 raises a KeyError; rank 0 then fails in the next
# collective with gloo's "Connection closed by peer", an echo of rank 1's
# exit.  Both end within the same second or so.  The per-node reports
# must say code_error (rank 1) and nccl (rank 0), and the one mail for
# the job must name rank 1's KeyError, with its innermost frame, as the
# root cause.  Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18200}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
PY=/usr/bin/python3
. "$HERE/lab-test.sh"
lab_test_needs
$PY -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	{ echo "1..0 # SKIP python3-torch (with gloo) not installed"; exit 77; }
$PY -c 'import aiosmtpd' 2>/dev/null ||
	{ echo "1..0 # SKIP python3-aiosmtpd not installed"; exit 77; }

lab_test_root gloo
SMTP_PORT=$((BASE + 20))
MASTER_PORT=$((BASE + 25))
MAIL=$ROOT/mail
. "$HERE/../tap.sh"
count() { local c=0 f; for f in "$1"/*"$2"; do [ -e "$f" ] && c=$((c+1)); done; echo $c; }

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE GPUALERT_LAB_NODES=2
lab_test_start
spool=$L/gaspool
"$LABSH" gpualert "$SO" "$SMTP_PORT" "connect_timeout = 2" "timeout = 10" \
	"retry_base = 1"

# Rank and world from srun; both "nodes" of the lab are this machine.
cat >"$GPUALERT_LAB_JOBS/ddp.py" <<'PY'
import datetime
import os

import torch
import torch.distributed as dist

rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
dist.init_process_group(
    "gloo", init_method="tcp://127.0.0.1:" + os.environ["DDP_PORT"],
    rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
    print(f"rank {rank} step {step} sum {t.sum().item():.0f}", flush=True)


def schedule(config):
    return config["warmup_steps"]


if rank == 1:
    schedule({"lr": 0.1})
dist.all_reduce(t)
print(f"rank {rank} finished", flush=True)
PY
chown "$GPUALERT_LAB_USER" "$GPUALERT_LAB_JOBS/ddp.py"

( cd "$GPUALERT_LAB_JOBS" &&
  runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
	DDP_PORT=$MASTER_PORT GLOO_SOCKET_IFNAME=lo \
	srun -J gloo-ddp -N2 -n2 --ntasks-per-node=1 --gpualert=email \
	$PY ddp.py >"$ROOT/srun.out" 2>"$ROOT/srun.err" </dev/null
  echo $? >"$ROOT/srun.rc" )
sed 's/^/# out: /' "$ROOT/srun.out"
sed 's/^/# err: /' "$ROOT/srun.err" | head -40
check "srun step failed" [ "$(cat "$ROOT/srun.rc")" != 0 ]
check "rank 1 raised the KeyError" grep -q "KeyError: 'warmup_steps'" "$ROOT/srun.err"
check "rank 0 failed in the next collective (gloo: Connection closed by peer)" \
	grep -q "Connection closed by peer" "$ROOT/srun.err"

for _ in $(seq 1 40); do
	[ "$(count "$spool/new" .json)" -ge 2 ] && break
	sleep 0.25
done
check "one report per node" [ "$(count "$spool/new" .json)" = 2 ]
# class of each node's report, by the task it holds
$PY - "$spool"/new/*.json >"$ROOT/classes" <<'PYC'
import json, sys
for f in sys.argv[1:]:
    r = json.load(open(f))
    for t in r["tasks"]:
        print(t["task_id"], t["verdict"]["class"] if "verdict" in t else t.get("class"))
PYC
sed 's/^/# task class: /' "$ROOT/classes"
check "rank 1's report: code_error" grep -qx "1 code_error" "$ROOT/classes"
check "rank 0's report: nccl (the echo)" grep -qx "0 nccl" "$ROOT/classes"

lab_test_sink "$MAIL"
"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send.log" 2>&1
check "delivered" grep -q "1 delivered" "$ROOT/send.log"
# The sink stores a message before it answers 250: no wait needed.
check "exactly one email" [ "$(count "$MAIL" .eml)" = 1 ]
eml=$(find "$MAIL" -name '*.eml' | head -1)
$PY -c 'import email, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
print("Subject:", m["Subject"])
for p in m.walk():
    if p.get_content_type() == "text/plain":
        print(p.get_payload(decode=True).decode().rstrip("\n"))
        break' "$eml" >"$ROOT/mail.txt"
sed 's/^/# mail: /' "$ROOT/mail.txt" | head -40
check "subject names code_error" grep -q "^Subject: .*FAILED: code_error" "$ROOT/mail.txt"
check "root cause is rank 1's code_error" grep -q "code_error.*task 1 of step 0" "$ROOT/mail.txt"
check "the evidence holds the KeyError" grep -q "KeyError: 'warmup_steps'" "$ROOT/mail.txt"
check "the evidence holds the innermost frame" \
	grep -q "File \".*ddp.py\", line [0-9]*, in schedule" "$ROOT/mail.txt"
[ "$tap_failed" = 0 ] || { echo "# send log:"; sed 's/^/#   /' "$ROOT/send.log"; }
tap_done
