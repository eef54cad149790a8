/* SPDX-License-Identifier: MIT */
/* How a job or task ended: exit code or signal, and what the scheduler
 * knows that the job's own output cannot show. */
#ifndef GPUALERT_COMMON_STATUS_H
#define GPUALERT_COMMON_STATUS_H

#include <stdbool.h>

/* Scheduler verdicts that rules can test ("state = TIMEOUT"). */
enum ga_sched_state {
	GA_STATE_NONE = 0, /* unknown, or nothing special */
	GA_STATE_TIMEOUT,
	GA_STATE_CANCELLED,
	GA_STATE_PREEMPTED,
	GA_STATE_NODE_FAIL,
	GA_STATE_OUT_OF_MEMORY,
	GA_STATE_DEADLINE,
	GA_STATE_COUNT,
};

struct ga_status {
	bool known;    /* false: nothing below is known */
	int exit_code; /* valid when signal == 0 */
	int signal;    /* terminating signal, 0 if it exited */
	enum ga_sched_state state;
	int oom_kills;      /* cgroup oom_kill events seen for the task */
	bool failed_in_log; /* the log proves a failure despite exit 0 */
};

/* An unknown status. */
void ga_status_init(struct ga_status *st);

/* Fill ST from a raw wait(2) status (Slurm's S_TASK_EXIT_STATUS). */
void ga_status_from_wait(struct ga_status *st, int wstatus);

/* Fill ST from a manifest-style integer: >= 0 an exit code, < 0 killed by
 * signal -N (the convention of corpus/labels.tsv). */
void ga_status_from_int(struct ga_status *st, int code);

/* True when the status says the job failed: a non-zero exit, a signal, a
 * scheduler verdict, an oom-kill, or a failure the log proves (a batch
 * script that survived its child's crash exits 0).  False when unknown or
 * a clean exit 0. */
bool ga_status_failed(const struct ga_status *st);

/* The shell's view of the status: the exit code, or 128+signal. */
int ga_status_shell_code(const struct ga_status *st);

/* "SIGSEGV" for 11; NULL for an unknown number.  Static strings. */
const char *ga_signal_name(int sig);

/* Parse "SEGV", "SIGSEGV", "segv" or "11".  Returns the number or -1. */
int ga_signal_from_name(const char *name);

/* "TIMEOUT", ... ; static strings. */
const char *ga_sched_state_name(enum ga_sched_state s);

/* Parse a state name (case-insensitive).  Returns the state or -1. */
int ga_sched_state_from_name(const char *name);

#endif
