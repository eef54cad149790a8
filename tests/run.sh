#!/bin/bash
# SPDX-License-Identifier: MIT
# Build gpualert and run its whole test suite: unit and golden tests,
# integration tests against a real Slurm (munge + slurmctld + slurmd) and
# a real SMTP server on loopback, and a bounded fuzzing run.
#
#   sudo ./tests/run.sh            # from the repository root
#
# Environment: BUILD_DIR (default build-test), SANITIZE=1 to build with
# address+undefined sanitizers, FUZZ_SECONDS (default 60, 0 to skip).
set -euo pipefail

cd "$(dirname "$0")/.."
./tests/install-deps.sh

build=${BUILD_DIR:-build-test}
opts=(-Dwerror=true -Dplugin=enabled -Dintegration_tests=enabled)
if [ "${SANITIZE:-0}" = 1 ]; then
	opts+=(-Db_sanitize=address,undefined -Db_lundef=false)
fi
if [ -d "$build" ]; then
	meson setup --reconfigure "$build" "${opts[@]}" >/dev/null
else
	meson setup "$build" "${opts[@]}"
fi
ninja -C "$build"
status=0
meson test -C "$build" --print-errorlogs --num-processes 2 || status=$?

# Bounded fuzzing of the parsers (clang's libFuzzer): a smoke run from the
# committed seeds that keeps the whole CI pass under 10 minutes; longer
# campaigns: tests/fuzz/run.sh SECONDS.
fuzz=${FUZZ_SECONDS:-40}
if [ "$fuzz" != 0 ] && [ -x tests/fuzz/run.sh ]; then
	tests/fuzz/run.sh "$fuzz" || status=1
fi

python3 tests/summary.py --no-skip integration "$build" || status=1
exit "$status"
