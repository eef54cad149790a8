/* SPDX-License-Identifier: MIT */
/* Reading a task's durable record once the task has ended.
 *
 * The record is the task's own output file, or gpualert's durable log for
 * output that went through a pipe (capture.h).  It is read after the
 * task's end, by a child of the collector, so the task's death (Slurm's
 * SIGKILL at the time limit, an OOM kill, scancel) loses nothing: the
 * bytes are in the file.  When the collector runs as root (slurmstepd),
 * the child first takes the job user's identity: untrusted bytes are
 * never parsed as root.  It reads at most max_bytes of each record, from
 * its end back (failures show at the end), and skips a punched-out middle.
 */
#ifndef GPUALERT_COMMON_RECORD_H
#define GPUALERT_COMMON_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "collector.h"
#include "rules.h"
#include "status.h"

struct ga_record_opts {
	bool drop; /* become UID/GID first (the caller is root) */
	uid_t uid;
	gid_t gid;
	/* The rules, compiled by the caller: the child inherits them with
	 * its memory, so a step compiles its rules once, not once per task
	 * (borrowed; NULL: the child loads RULES_DIR itself). */
	const struct ga_ruleset *rules;
	const char *rules_dir; /* NULL/"": built-ins */
	unsigned tail_lines;   /* 0: default */
	uint64_t max_bytes;    /* per record, from its end; 0: all */
	uint64_t max_rss;      /* child's memory budget, 0: unbounded */
	/* keep = failed: remove the durable logs (never the task's own
	 * files) when STATUS and the log show a success */
	bool remove_logs_on_success;
	struct ga_status status;
};

/* What the child read. */
struct ga_record_stats {
	uint64_t read;    /* bytes classified */
	uint64_t skipped; /* bytes of the records not read (over max_bytes) */
	uint64_t end;     /* the first record's size when read */
	bool removed;     /* the logs were removed (keep = failed) */
	double cpu_ms;    /* the child's user + system CPU time */
};

/* A classification in progress. */
struct ga_record_job {
	pid_t pid;
	int fd; /* the child's answer */
};

/* Start classifying RECS[0..N-1] in a child.  Returns 0 and fills *J, or
 * -errno (nothing started). */
int ga_record_classify_start(const struct ga_record *recs, size_t n,
                             const struct ga_record_opts *o,
                             struct ga_record_job *j);

/* Wait until DEADLINE_MS (CLOCK_MONOTONIC, milliseconds) for the child's
 * answer; past it the child is killed.  On 0, STATE holds the classifier
 * state (ga_classifier_read_state's input; untrusted) and *ST the
 * figures.  Returns 0, -ETIMEDOUT, -EPROTO (no or malformed answer) or
 * another -errno.  Always reaps the child. */
int ga_record_classify_finish(struct ga_record_job *j, double deadline_ms,
                              struct ga_buf *state, struct ga_record_stats *st);

/* CLOCK_MONOTONIC in milliseconds. */
double ga_record_now_ms(void);

#endif
