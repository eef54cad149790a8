#!/bin/bash
# forwards SIGTERM to the training process and waits for it
echo "job $SLURM_JOB_ID on $SLURMD_NODENAME, started $(date '+%F %T')"
/usr/bin/python3 -u "$@" &
pid=$!
trap 'echo "$(date "+%F %T") batch script got SIGTERM, forwarding to training pid $pid"; kill -TERM $pid' TERM
wait $pid
rc=$?
echo "$(date '+%F %T') wait returned $rc"
wait $pid
echo "$(date '+%F %T') training exited with $?"
# SPDX-License-Identifier: MIT
