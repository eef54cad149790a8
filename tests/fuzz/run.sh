#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets with clang (address and undefined-behaviour
# sanitizers) into their own build directory and run each for SECONDS.
#
# usage: tests/fuzz/run.sh [SECONDS]   (default 60 per target)
# Environment: CC (default clang), FUZZ_BUILD (default build-fuzz),
# FUZZ_JOBS (parallel fuzzing processes per target, default 1).
# New inputs go to $FUZZ_BUILD/corpus-*; crashes to $FUZZ_BUILD/crash-*.
# The committed seeds in tests/fuzz/corpus/ are read, never written.
set -eu

seconds=${1:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$src/build-fuzz}
cc=${CC:-clang}
jobs=${FUZZ_JOBS:-1}

# meson builds the targets (tests/fuzz/meson.build): the core once more
# with coverage instrumentation, everything under ASan and UBSan, and an
# undefined-behaviour report is a crash.  -O1 keeps stacks readable.
if [ ! -f "$out/build.ninja" ]; then
	CC=$cc meson setup "$out" "$src" -Dfuzz=enabled -Dplugin=disabled \
		-Dnotify=disabled -Dintegration_tests=disabled \
		-Doptimization=1 -Db_sanitize=address,undefined \
		-Db_lundef=false \
		-Dc_args="-fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		>/dev/null
fi
ninja -C "$out" tests/fuzz/fuzz-rules tests/fuzz/fuzz-classify >/dev/null

status=0
for target in rules classify; do
	mkdir -p "$out/corpus-$target"
	echo "fuzz-$target: ${seconds}s"
	par=
	[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
	# shellcheck disable=SC2086
	(cd "$out" && tests/fuzz/fuzz-$target -max_total_time="$seconds" \
		-max_len=65536 -timeout=10 -rss_limit_mb=2048 $par \
		-print_final_stats=1 \
		"$out/corpus-$target" "$src/tests/fuzz/corpus/$target") ||
		status=1
done
exit $status
