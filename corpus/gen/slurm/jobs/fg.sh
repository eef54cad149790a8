#!/bin/bash
# python in the foreground of the batch shell
echo "job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $SLURMD_NODENAME, $SLURM_CPUS_ON_NODE cpus, started $(date '+%F %T')"
/usr/bin/python3 "$@"
echo "python exited with $?"
# SPDX-License-Identifier: MIT
