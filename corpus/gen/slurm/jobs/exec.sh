#!/bin/bash
# the batch shell becomes python, so python gets Slurm's SIGTERM itself
echo "job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $SLURMD_NODENAME, started $(date '+%F %T')"
exec /usr/bin/python3 -u "$@"
# SPDX-License-Identifier: MIT
