#!/bin/bash
# one srun step; with -n/-N from sbatch this is a multi-task step, labelled with -l
echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST: ${SLURM_NTASKS:-1} task(s)"
if [ "${SLURM_NTASKS:-1}" -gt 1 ]; then
    srun -l /usr/bin/python3 -u "$@"
else
    srun /usr/bin/python3 -u "$@"
fi
rc=$?
echo "srun exited with $rc"
exit $rc
# SPDX-License-Identifier: MIT
