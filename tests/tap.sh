# SPDX-License-Identifier: MIT
# TAP for the shell tests (meson `protocol : 'tap'`), POSIX sh.  Source it:
#   . "$(dirname "$0")/../tap.sh"        (path relative to the test)
#
#   ok DESC...               a passing check
#   nok DESC...              a failing check
#   check DESC CMD [ARG]...  run CMD: ok if it succeeds, else not ok
#   check_status STATUS DESC ok if STATUS (e.g. $?) is 0
#   diag TEXT...             "# " comment lines (a diagnostic)
#   skip_all REASON          the whole test is skipped: plan 1..0, exit 77
#   tap_done                 the plan; returns 1 if a check failed, so a
#                            test ends with `tap_done; exit`
# tap_failed counts the failed checks so far.
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

nok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

check() {
	tap_what=$1
	shift
	if "$@"; then ok "$tap_what"; else nok "$tap_what"; fi
}

check_status() {
	if [ "$1" -eq 0 ]; then ok "$2"; else nok "$2 (status $1)"; fi
}

diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 77
}

tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ]
}
