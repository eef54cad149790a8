/* SPDX-License-Identifier: MIT */
/* Shared state of the SPANK plugin.  Only gpualert.c sees Slurm's hook
 * names; local.c and remote.c implement one context each.  Nothing here is
 * exported (plugin/gpualert.lds). */
#ifndef GPUALERT_PLUGIN_PLUGIN_H
#define GPUALERT_PLUGIN_PLUGIN_H

#include <slurm/spank.h>
#include <stdbool.h>

#include "config.h"
#include "report.h"

struct ga_plugin {
	struct ga_config cfg;
	bool cfg_ready;
	char *opt_value; /* last --gpualert value seen by the callback */
	bool opt_seen;
};

extern struct ga_plugin ga_plugin_state;

/* Read the config file and plugstack arguments (config=PATH, key=value)
 * once per process.  Problems go to the log sink as they are found. */
int ga_plugin_configure(int ac, char **av);

/* The option callback (every context). */
int ga_plugin_option_cb(int val, const char *arg, int remote);

/* Local/allocator context (srun, sbatch, salloc). */
int ga_local_option(const char *arg);

/* Remote context (slurmstepd). */
void ga_remote_init(spank_t sp);
int ga_remote_user_init(spank_t sp);
int ga_remote_task_init(spank_t sp);
int ga_remote_task_post_fork(spank_t sp);
int ga_remote_task_exit(spank_t sp);
int ga_remote_exit(spank_t sp);

/* Fill R's resource context for the mail (plugin/resources.c): time limit,
 * requested memory (per node or per CPU), GPUs from gres, the submitted
 * script, the working directory and array ids when R has none, from one
 * slurm_load_job(JOB_ID); the memory peak from the job's cgroup v1
 * memory.max_usage_in_bytes on R->node.  Only for reports whose mode is
 * email or webhook.  Root context (the report process forked by
 * slurm_spank_exit), before the report is
 * written; failures leave the fields unknown and are logged. */
void ga_plugin_fill_resources(spank_t sp, uint32_t job_id, struct ga_report *r);

/* Sample the job's memory peak on NODE (cgroup v1, hierarchical: every
 * step so far) while its cgroup still exists: call from task_exit (root).
 * ga_plugin_fill_resources reports the highest sample. */
void ga_plugin_sample_memory(const char *node, uint32_t uid, uint32_t job_id);

/* Kernel evidence (kernel.c).  Call ga_plugin_kernel_task_exit from
 * slurm_spank_task_exit (root; records the task's pid and what is left in
 * the step's cgroup), and ga_plugin_kernel_evidence from slurm_spank_exit
 * once R is complete (tasks, verdicts, root task chosen, start_time) and
 * before it is spooled: with [general] kernel_log, when a task failed and
 * the NVIDIA driver is present, it adds the step's kernel log lines to R
 * and revises its verdict (ga_report_apply_kernel).  Bounded by
 * kernel_log_max_ms; never fails the step. */
void ga_plugin_kernel_task_exit(spank_t sp);
void ga_plugin_kernel_evidence(spank_t sp, struct ga_report *r);

#endif
