#!/bin/sh
# bench-spool: what one report write costs with nothing waiting in the
# spool and with WAITING entries waiting (a relay outage on a busy
# cluster), measured in one run on the same file system.
#
#   tests/bench/bench-spool.sh [BUILD_DIR] [WAITING] [WRITES]
#
# Defaults: build, 100000 entries, 101 timed writes per state.  A write
# is ga_spool_put_report as the plugin calls it: reservation in the usage
# counters (flock), name lock, temp file, fsync, rename, fsync of new/.
# The baseline, printed next to it, is the walk over the whole spool that
# each write used to make to enforce total_max (ga_spool_usage).  The spool
# lives under $BENCH_DIR (default $TMPDIR or /tmp): put it on the file
# system to measure (local disk, NFS).
set -eu
BUILD=${1:-build}
WAITING=${2:-100000}
WRITES=${3:-101}
BENCH=$BUILD/tests/notify/spool-bench
[ -x "$BENCH" ] || { echo "bench-spool: build first ($BENCH missing)" >&2; exit 1; }
dir=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/gpualert-bench-spool.XXXXXX")
trap 'rm -rf "$dir"' EXIT
out=$("$BENCH" "$dir/spool" "$WAITING" "$WRITES")
echo "$out" | awk -v writes="$WRITES" '
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] }
}
END {
	printf "spool write cost, median of %d writes (p90), same run, same disk:\n", writes
	printf "  %-10s %-22s %s\n", "waiting", "write now", "baseline: walk per write (old accounting)"
	for (r = 1; r <= NR; r++)
		printf "  %-10s %7.2f ms (p90 %6.2f)   %8.1f ms\n", v[r, "waiting"],
		       v[r, "write_median_ms"], v[r, "write_p90_ms"], v[r, "scan_ms"]
	printf "  ratio with/without entries waiting: write %.2f, walk %.0f\n",
	       v[2, "write_median_ms"] / v[1, "write_median_ms"],
	       v[2, "scan_ms"] / (v[1, "scan_ms"] > 0 ? v[1, "scan_ms"] : 0.1)
}'
