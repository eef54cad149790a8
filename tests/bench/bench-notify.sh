#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-notify: time from "report spooled" (ga_spool_put_report returned)
# to "message accepted by the SMTP server", with `gpualert send` running
# as a service (inotify) against a local aiosmtpd on loopback.
#
#   tests/bench/bench-notify.sh [N] [BUILD_DIR]
#
# Prints per-report latency (sequential: spool one, wait for it) and the
# time to drain a burst of N reports spooled at once.  Target: <= 1 s per
# report on an idle machine.
set -eu
N=${1:-20}
BUILD=${2:-build}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
exec /usr/bin/python3 - "$N" "$SRC" "$(cd "$BUILD" && pwd)" <<'PY'
import json, os, shutil, socket, statistics, subprocess, sys, tempfile, time
from aiosmtpd.controller import Controller

n, src, build = int(sys.argv[1]), sys.argv[2], sys.argv[3]
gpualert = os.path.join(build, "cli", "gpualert")
spool_put = os.path.join(build, "tests", "notify", "spool-put")
accepted = {}

class H:
    async def handle_DATA(self, server, session, env):
        for line in env.content.split(b"\r\n"):
            if line.startswith(b"X-Gpualert-Job: "):
                accepted[line[16:].decode()] = time.time()
                break
        return "250 OK"

s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
ctl = Controller(H(), hostname="127.0.0.1", port=port); ctl.start()
root = tempfile.mkdtemp(prefix="ga-bench-")
spool = os.path.join(root, "spool")
base = json.load(open(os.path.join(src, "tests", "golden", "mail", "single.json")))
base["step_id"] = "batch"          # the batch step completes a job at once

def report(job):
    r = dict(base, job_id=str(job))
    p = os.path.join(root, "r%d.json" % job)
    json.dump(r, open(p, "w"))
    return p

conf = os.path.join(root, "gpualert.conf")
open(conf, "w").write("[recipients]\nowner_domain = example.org\n[mail]\nsmtp_url = smtp://127.0.0.1:%d\nrate_per_user_hour = 100000\n"
                      "rate_global_hour = 1000000\n[spool]\nquiet_period = 0\n" % port)
subprocess.run([spool_put, spool, report(1)], capture_output=True)   # creates the spool
proc = subprocess.Popen([gpualert, "send", "--config", conf, "--spool", spool],
                        stderr=subprocess.DEVNULL)
def wait_for(keys, limit=60):
    t_end = time.time() + limit
    while time.time() < t_end and not all(k in accepted for k in keys):
        time.sleep(0.002)

wait_for(["1"])
lat = []
for i in range(n):
    job = 1000 + i
    p = report(job)
    t0 = time.time()
    subprocess.run([spool_put, spool, p], capture_output=True, check=True)
    t1 = time.time()
    wait_for([str(job)], 10)
    if str(job) in accepted:
        lat.append(accepted[str(job)] - t1)
lat.sort()
print("sequential: %d reports, spooled -> accepted: median %.1f ms, p95 %.1f ms, max %.1f ms"
      % (len(lat), 1000 * statistics.median(lat), 1000 * lat[int(0.95 * (len(lat) - 1))],
         1000 * lat[-1]))
paths = [report(5000 + i) for i in range(n)]
t0 = time.time()
for p in paths:
    subprocess.run([spool_put, spool, p], capture_output=True, check=True)
t1 = time.time()
keys = [str(5000 + i) for i in range(n)]
wait_for(keys, 120)
done = [accepted[k] for k in keys if k in accepted]
print("burst: %d reports spooled in %.0f ms, all accepted %.0f ms after the last was spooled "
      "(%d/%d, %.0f messages/s)" % (n, 1000 * (t1 - t0), 1000 * (max(done) - t1), len(done), n,
                                    len(done) / max(max(done) - t0, 1e-6)))
proc.terminate(); proc.wait(); ctl.stop(); shutil.rmtree(root)
PY
