#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-spool-user.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# The sender runs unprivileged, for real: the spool is created with the
# documented admin line, owned by a service user,
#
#   install -d -o USER -g USER -m 0750 SPOOL
#
# a failing --gpualert=email job on a real Slurm lab goes through the
# plugin (root, in slurmstepd), and `gpualert send --once` running as that
# user delivers it to a real SMTP server on loopback.  Relies only on the
# plugin writing its reports into the configured spool_dir.  Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18100}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
SVC=${GPUALERT_SPOOL_USER:-gaspoolsnd}
. "$HERE/lab-test.sh"
lab_test_needs

lab_test_root spool-user
SMTP_PORT=$((BASE + 5))
MAIL=$ROOT/mail
made_user=
lab_test_on_exit() { [ -z "$made_user" ] || userdel "$SVC" 2>/dev/null; }
n=0; fails=0
ok()   { n=$((n+1)); echo "ok $n - $*"; }
nok()  { n=$((n+1)); fails=$((fails+1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

# The service user: a system account with no shell, as a package makes it.
if ! id "$SVC" >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /usr/sbin/nologin "$SVC" ||
		{ echo "1..0 # cannot create user $SVC"; exit 1; }
	made_user=1
fi
# The sender's binaries where that user can run them (gpualert runs
# gpualert-send from its own directory in a build tree).
install -d -m 0755 "$ROOT/bin"
install -m 0755 "$BIN" "$ROOT/bin/gpualert"
install -m 0755 "$(dirname "$BIN")/gpualert-send" "$ROOT/bin/gpualert-send" ||
	{ echo "1..0 # no gpualert-send next to $BIN"; exit 1; }

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
lab_test_start
spool=$L/gaspool
"$LABSH" gpualert "$SO" "$SMTP_PORT" "connect_timeout = 2" "timeout = 10"
# The admin's line (common/spool.h), in place of the lab's root spool.
rm -rf "$spool"
install -d -o "$SVC" -g "$SVC" -m 0750 "$spool"
check "spool created by the admin's install -d line" \
	[ "$(stat -c '%U:%G %a' "$spool")" = "$SVC:$SVC 750" ]

cat >"$GPUALERT_LAB_JOBS/fail.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=spool-user
echo "loading checkpoint"
/usr/bin/python3 -c 'import torch_missing_module'
JOB
chown "$GPUALERT_LAB_USER" "$GPUALERT_LAB_JOBS/fail.sh"
job=$(runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
	sbatch --parsable --gpualert=email -D "$GPUALERT_LAB_JOBS" \
	-o "$GPUALERT_LAB_JOBS/fail.out" "$GPUALERT_LAB_JOBS/fail.sh")
for _ in $(seq 1 240); do
	squeue -h -j "$job" 2>/dev/null | grep -q . || break
	sleep 0.5
done
check "failing job $job with --gpualert=email finished" \
	bash -c "! squeue -h -j '$job' 2>/dev/null | grep -q ."
for _ in $(seq 1 40); do
	ls "$spool/new" 2>/dev/null | grep -q "^$job\." && break
	sleep 0.25
done
check "the plugin (root) spooled the job's report" \
	bash -c "ls '$spool/new' | grep -q '^$job\.'"
foreign=$(find "$spool" ! -user "$SVC" -printf '%u %p\n' 2>/dev/null)
check "everything in the spool belongs to $SVC" [ -z "$foreign" ]
[ -z "$foreign" ] || echo "$foreign" | sed 's/^/#   /'
wide=$(find "$spool" -type f -perm /0027 -printf '%m %p\n')
check "entries are not world-readable or group-writable" [ -z "$wide" ]

lab_test_sink "$MAIL"

runuser -u "$SVC" -- "$ROOT/bin/gpualert" send --once --now \
	--config "$L/gpualert.conf" >"$ROOT/send.log" 2>&1
rc=$?
check "gpualert send --once as $SVC exits 0 (rc $rc)" [ "$rc" = 0 ]
check "as $SVC: delivered" grep -q "1 delivered" "$ROOT/send.log"
check "no permission error" bash -c "! grep -qi 'permission denied' '$ROOT/send.log'"
# The sink stores a message before it answers 250: no wait needed.
check "exactly one email" [ "$(ls "$MAIL" 2>/dev/null | grep -c '\.eml$')" = 1 ]
eml=$MAIL/001.eml
check "addressed to the job owner" grep -q "^To: $GPUALERT_LAB_USER@localhost" "$eml"
check "about job $job, FAILED" grep -q "^Subject: .*FAILED.* job $job (spool-user)" "$eml"
check "spool empty afterwards, nothing dead-lettered" \
	[ -z "$(find "$spool/new" "$spool/out" "$spool/dead" "$spool/att" -mindepth 1 2>/dev/null)" ]
check "sent.log written by $SVC" [ "$(stat -c %U "$spool/sent.log" 2>/dev/null)" = "$SVC" ]
[ "$fails" = 0 ] || { echo "# send log:"; sed 's/^/#   /' "$ROOT/send.log"; }
echo "1..$n"
[ "$fails" = 0 ]
