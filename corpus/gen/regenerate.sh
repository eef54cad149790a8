#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate gpualert's corpus logs and their labels.tsv rows.
# Needs root (tmpfs mounts in a private mount namespace, a memory cgroup,
# runuser), Debian's /usr/bin/python3 with python3-torch (CPU) and numpy,
# gcc and g++.  Rows of other generators in labels.tsv are kept.
set -e
cd "$(dirname "$0")/.."
/usr/bin/python3 gen/reproduce.py
/usr/bin/python3 gen/compose.py
/usr/bin/python3 gen/check.py
