#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-spool: what one report write costs with nothing waiting in the
# spool and with WAITING entries waiting (a relay outage on a busy
# cluster), measured in one run on the same file system: two spools, the
# timed writes alternating between them, so the disk's load weighs on both
# figures alike.
#
#   tests/bench/bench-spool.sh [BUILD_DIR] [WAITING] [WRITES]
#
# Defaults: build, 100000 entries, 101 timed writes per state.  A write
# is ga_spool_put_report as the plugin calls it: reservation in the usage
# counters (flock), name lock, temp file, fsync, rename, fsync of new/.
# Printed next to it: the file system's floor (a bare durable write of the
# same bytes into the same new/, no accounting) and the baseline, the walk
# over the whole spool that each write used to make to enforce total_max
# (ga_spool_usage).  The spool
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
	printf "spool write cost, median of %d writes each, alternating, same disk:\n", writes
	printf "  %-9s %-24s %-22s %s\n", "waiting", "report write (p90)",
	       "fs floor: bare write", "baseline: old walk per write"
	for (r = 1; r <= NR; r++)
		printf "  %-9s %7.2f ms (%7.2f)      %7.2f ms            %8.1f ms\n",
		       v[r, "waiting"], v[r, "write_median_ms"], v[r, "write_p90_ms"],
		       v[r, "raw_median_ms"], v[r, "scan_ms"]
	printf "  report write above the floor: %.2f ms empty, %.2f ms with %s waiting\n",
	       v[1, "write_median_ms"] - v[1, "raw_median_ms"],
	       v[2, "write_median_ms"] - v[2, "raw_median_ms"], v[2, "waiting"]
}'
