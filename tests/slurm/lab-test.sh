# SPDX-License-Identifier: MIT
# tests/slurm/lab-test.sh: sourced by the real-lab tests for the steps
# they all take.  Needs HERE (the test's directory), LABSH, ROOT and
# SMTP_PORT where the functions use them.
#
#   lab_test_root NAME  a fresh $ROOT (/tmp/ga-NAME.XXXXXX, readable by the
#                       lab user) with the lab's directory in $L; when the
#                       test exits, the pids in $lab_test_pids are killed,
#                       the lab is stopped, lab_test_on_exit runs if the test
#                       defined it, and $ROOT is removed (kept with KEEP=1)
#   lab_test_needs      skip (exit 77) unless root, with Slurm and aiosmtpd
#   lab_test_start      start the lab in $GPUALERT_LAB (set by the caller)
#                       and take its environment; on failure print its log
#   lab_test_sink DIR   a real SMTP server on $SMTP_PORT storing each mail
#                       in DIR, ready when this returns; its pid in $sink
#                       (and in $lab_test_pids)

lab_test_pids=

lab_test_root() {
	ROOT=$(mktemp -d "/tmp/ga-$1.XXXXXX")
	chmod 755 "$ROOT"
	L=$ROOT/lab
	trap lab_test_cleanup EXIT
}

lab_test_cleanup() {
	local pid
	for pid in $lab_test_pids; do kill "$pid" 2>/dev/null; done
	GPUALERT_LAB=$L "$LABSH" stop >/dev/null 2>&1
	if command -v lab_test_on_exit >/dev/null; then lab_test_on_exit; fi
	[ -n "${KEEP:-}" ] || rm -rf "$ROOT"
}

lab_test_needs() {
	[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 77; }
	command -v slurmctld >/dev/null ||
		{ echo "1..0 # SKIP slurm not installed"; exit 77; }
	/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null ||
		{ echo "1..0 # SKIP python3-aiosmtpd not installed"; exit 77; }
}

lab_test_start() {
	"$LABSH" start >"$ROOT/start.log" 2>&1 ||
		{ sed 's/^/# /' "$ROOT/start.log"; echo "1..0 # lab did not start"; exit 1; }
	eval "$("$LABSH" env)"
}

lab_test_sink() {
	/usr/bin/python3 "$HERE/../demo/mailsink.py" "$SMTP_PORT" "$1" \
		>"$ROOT/sink.log" 2>&1 &
	sink=$!
	lab_test_pids="$lab_test_pids $sink"
	for _ in $(seq 1 40); do grep -q listening "$ROOT/sink.log" && return 0; sleep 0.25; done
	return 1
}
