#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job: gpualert on a throwaway local Slurm cluster with a mail
# sink.  Builds gpualert, starts munge + slurmctld + slurmd and an SMTP
# server on loopback, loads gpualert.so through plugstack.conf, submits a
# few ordinary job scripts with --gpualert=email as an unprivileged user,
# runs `gpualert send`, and prints the emails the failures produced.
# Everything it started is stopped at the end.
#
#   sudo ./tests/demo.sh           (Debian 12, from the repository root)
set -euo pipefail

cd "$(dirname "$0")/.."
src=$PWD
./tests/install-deps.sh

build=${BUILD_DIR:-build-demo}
if [ -d "$build" ]; then
	meson setup --reconfigure "$build" -Dplugin=enabled >/dev/null
else
	meson setup "$build" -Dplugin=enabled >/dev/null
fi
ninja -C "$build" >/dev/null
gpualert=$src/$build/cli/gpualert

export GPUALERT_LAB=${GPUALERT_LAB:-/tmp/gpualert-demo}
export GPUALERT_LAB_PORT=${GPUALERT_LAB_PORT:-19817}
smtp_port=$((GPUALERT_LAB_PORT + 100))
mail=$GPUALERT_LAB-mail
lab=tests/slurm/lab.sh

sink_pid=
cleanup() {
	"$lab" stop >/dev/null 2>&1 || true
	[ -z "$sink_pid" ] || kill "$sink_pid" 2>/dev/null || true
}
trap cleanup EXIT

echo "== starting a local Slurm cluster ($GPUALERT_LAB) and a mail sink (127.0.0.1:$smtp_port)"
"$lab" start >/dev/null
eval "$("$lab" env)"
rm -rf "$mail"
/usr/bin/python3 tests/demo/mailsink.py "$smtp_port" "$mail" &
sink_pid=$!

# The admin's part: the plugin, its settings (a spool in the lab, mail
# through the sink) and one plugstack line.
"$lab" gpualert "$build/plugin/gpualert.so" "$smtp_port"

# The user's part: ordinary job scripts, one option.
. tests/demo/jobs.sh
echo "== submitting as $GPUALERT_LAB_USER with --gpualert=email: $DEMO_JOBS"
ids=
for name in $DEMO_JOBS; do
	"job_$name" >"$GPUALERT_LAB_JOBS/$name.sh"
	chown "$GPUALERT_LAB_USER" "$GPUALERT_LAB_JOBS/$name.sh"
	id=$(runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable --gpualert=email -D "$GPUALERT_LAB_JOBS" \
		-o "$GPUALERT_LAB_JOBS/$name-%j.out" "$GPUALERT_LAB_JOBS/$name.sh")
	ids="$ids $id"
	printf '   %-10s job %s\n' "$name" "$id"
done

echo "== waiting for the jobs"
for _ in $(seq 1 240); do
	[ -z "$(squeue -h -j "$(echo $ids | tr ' ' ,)" 2>/dev/null)" ] && break
	sleep 0.5
done
# Each step's report is written by a process of gpualert's own
# (gpualert-report) that the step's end does not wait for.
for _ in $(seq 1 120); do
	pgrep -x gpualert-report >/dev/null || break
	sleep 0.25
done
for id in $ids; do
	scontrol show job "$id" | grep -o 'JobId=[0-9]* JobName=[^ ]*\|JobState=[A-Z_]*\|ExitCode=[0-9:]*' |
		tr '\n' ' '
	echo
done

echo "== gpualert send --once (the unprivileged delivery service, run once)"
"$gpualert" send --once --now --config "$GPUALERT_LAB/gpualert.conf"

echo "== the emails"
for _ in $(seq 1 20); do
	[ "$(ls "$mail" 2>/dev/null | grep -c '\.eml$')" -gt 0 ] && break
	sleep 0.25
done
/usr/bin/python3 - "$mail" <<'PY'
import email, email.policy, os, sys
d = sys.argv[1]
for name in sorted(f for f in os.listdir(d) if f.endswith('.eml')):
    with open(os.path.join(d, name), 'rb') as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    print('-' * 72)
    print('To:      ', msg['To'])
    print('Subject: ', msg['Subject'])
    body = msg.get_body(preferencelist=('plain',))
    text = body.get_content() if body else ''
    lines = text.splitlines()
    print('\n'.join(lines[:28]))
    if len(lines) > 28:
        print('   [... %d more lines]' % (len(lines) - 28))
    att = [p.get_filename() for p in msg.iter_attachments()]
    print('Attachments:', ', '.join(a for a in att if a) or 'none')
print('-' * 72)
PY
echo "== done: the job outputs are unchanged in $GPUALERT_LAB_JOBS, and nothing was added next to them (each .out is its job's record)"
