# SPDX-License-Identifier: MIT
# tests/slurm/lab-test.sh: sourced by the real-lab tests for the steps
# they all take.  Needs HERE (the test's directory), LABSH, ROOT and
# SMTP_PORT where the functions use them.
#
#   lab_test_needs      skip (exit 77) unless root, with Slurm and aiosmtpd
#   lab_test_start      start the lab in $GPUALERT_LAB (set by the caller)
#                       and take its environment; on failure print its log
#   lab_test_sink DIR   a real SMTP server on $SMTP_PORT storing each mail
#                       in DIR, ready when this returns; its pid in $sink

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
	for _ in $(seq 1 40); do grep -q listening "$ROOT/sink.log" && return 0; sleep 0.25; done
	return 1
}
