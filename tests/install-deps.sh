#!/bin/bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages gpualert needs to build and to run its
# whole test suite (a real Slurm, munge, an SMTP server, clang for the
# fuzzers).  Idempotent; needs root.
set -euo pipefail

packages=(
	build-essential meson ninja-build pkg-config
	libpcre2-dev libcurl4-openssl-dev zlib1g-dev scdoc
	slurmctld slurmd slurm-client libslurm-dev munge
	python3 python3-aiosmtpd python3-torch
	clang clang-format openssl time procps util-linux
	chromium fonts-dejavu-core
	debhelper lintian systemd
)

if [ "$(id -u)" != 0 ]; then
	echo "gpualert: install-deps: run as root (apt-get needs it)" >&2
	exit 1
fi
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "gpualert: installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# Debian's postinst would try to start slurmd/munge; the tests start
	# their own daemons, so keep the package scripts from doing it.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get install -y -q "${missing[@]}"
fi
