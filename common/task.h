/* SPDX-License-Identifier: MIT */
/* One task's life under gpualert: the same code for a Slurm task (the
 * plugin) and for `gpualert run`.
 *
 *   ga_task_begin      in the task process, as its user, before exec:
 *                      record the output files, or create the durable log
 *                      and interpose where the output is a pipe, and tell
 *                      the collector (capture.h);
 *   ga_collector_finish_task   when the task has exited (collector.h);
 *   ga_task_conclude   once the tasks have ended: read each task's record
 *                      as its user (record.h), decide each verdict and
 *                      fill the report's tasks.
 */
#ifndef GPUALERT_COMMON_TASK_H
#define GPUALERT_COMMON_TASK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "collector.h"
#include "config.h"
#include "report.h"
#include "rules.h"
#include "status.h"

/* What names the task (for the log's name and header).  Strings are
 * borrowed; NULL reads as "". */
struct ga_task_ids {
	const char *job_id;
	const char *step_id;
	uint32_t task_id; /* global rank */
	const char *user;
	const char *job_name;
	const char *node;
	const char *work_dir; /* absolute */
	int argc;
	char *const *argv;
	time_t start;
	/* The log's name is unique to this task (the job id is Slurm's, or
	 * of gpualert run's own making): zero-copy logging is safe. */
	bool unique;
};

/* In the task process, as the user, before exec.  LOG_PATH (NULL: the
 * config's log_pattern) is where a durable log goes if one is needed.
 * Never fails the task: what goes wrong is logged (ga_log) and reported
 * to the collector, and fds 1 and 2 are then as they were. */
void ga_task_begin(const struct ga_config *cfg, const struct ga_task_ids *ids,
                   int sock_fd, const char *log_path);

/* How one task ended, as the collector knows it. */
struct ga_task_end {
	uint32_t task_id;
	int wstatus;               /* raw wait(2) status */
	double start, end;         /* CLOCK_REALTIME seconds */
	int oom_kills;             /* cgroup oom_kill events */
	enum ga_sched_state sched; /* applied to a signal death */
	const char *node;          /* borrowed */
};

/* The whole step has ended: classify every task's records in children
 * (as UID/GID when DROP, in parallel, under one deadline of the config's
 * classify_timeout_ms), decide the verdicts and append one task report
 * per END to R.  RULES (borrowed, may be NULL: loaded here) are the
 * compiled rules; the children inherit them.  Tasks that never reported
 * get a capture_error saying so.  Never fails: what could not be done is
 * in the reports. */
void ga_task_conclude(const struct ga_config *cfg, struct ga_collector *coll,
                      const struct ga_ruleset *rules,
                      const struct ga_task_end *ends, size_t n, uid_t uid,
                      gid_t gid, bool drop, struct ga_report *r);

/* The capture problem of TC in words, or NULL when none (static). */
const char *ga_task_capture_error(const struct ga_task_capture *tc);

#endif
