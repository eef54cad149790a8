/* SPDX-License-Identifier: MIT */
/* Capture of a task's output, out of the task's data path wherever
 * possible.
 *
 * Slurm-free; the plugin (slurm_spank_task_init) and `gpualert run` share
 * it through task.h.  For each of the task's fds 1 and 2 the task side
 * (ga_capture_start, in the task process before it execs the program)
 * decides by what the fd already is:
 *
 *  - a regular file (sbatch's .out/.err, `srun -o FILE`): left alone.  The
 *    file itself is the durable record: the task opens it read-only (as
 *    the user, through /proc/self/fd) and hands that descriptor and the
 *    file's offset at task start to the collector.  Every semantic the job
 *    can see (/dev/stdout reopened with O_TRUNC, O_NONBLOCK, ENOSPC,
 *    appending to the file by name) is the same as without gpualert,
 *    because nothing of gpualert stands between the task and its file;
 *  - a pipe or a socket (srun steps, `gpualert run`): interposed.  A
 *    detached helper (a program of its own, or a fork) copies the bytes
 *    to where they went before and into a durable log bounded by log_max
 *    (head kept, the middle punched out); the log's descriptor is the
 *    record;
 *  - a terminal, /dev/null, anything else: left alone, not recorded.
 *
 * Nothing here classifies: the records are read after the task has ended
 * (record.h), by a process that the task's death cannot take down.
 *
 * The collector's side (collector.h) receives what the task and the
 * helper send.
 */
#ifndef GPUALERT_COMMON_CAPTURE_H
#define GPUALERT_COMMON_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A start message holds up to two paths and the working directory, each
 * at most PATH_MAX: it must fit, or the task's record is lost. */
#define GA_MSG_MAX (4 * 4096)
/* fds 1 and 2 */
#define GA_CAPTURE_STREAMS 2

enum ga_capture_mode {
	GA_CAPTURE_NONE = 0, /* nothing interposed */
	GA_CAPTURE_MERGED,   /* fd 1 and 2 were the same pipe: one pipe */
	GA_CAPTURE_SPLIT,    /* two different pipes */
	GA_CAPTURE_STDERR,   /* only fd 2 (fd 1 is a terminal: srun -u) */
	GA_CAPTURE_STDOUT,   /* only fd 1 (fd 2 is a file or a terminal) */
};

/* What one of the task's output fds was at task start. */
enum ga_fd_kind {
	GA_FD_OTHER = 0, /* closed, a terminal, a device: not recorded */
	GA_FD_FILE,      /* a regular file: followed, untouched */
	GA_FD_PIPE,      /* a pipe or socket: interposed */
};

/* Kinds of the calling process's fds 1 and 2 (KIND[0] for fd 1). */
void ga_capture_probe(enum ga_fd_kind kind[GA_CAPTURE_STREAMS]);

/* Whether any of the kinds needs interposition (and so a durable log). */
bool ga_capture_needs_log(const enum ga_fd_kind kind[GA_CAPTURE_STREAMS]);

struct ga_capture_opts {
	uint32_t task_id;      /* global rank, carried in messages */
	int sock_fd;           /* the collector's task end, -1 for none */
	int log_fd;            /* durable log for interposed streams, -1 for
				 * none (then nothing is interposed);
				 * borrowed: the caller closes its copy */
	bool log_private;      /* no other process appends to log_fd's file
				 * (its name is unique to the task): the
				 * helper may write it at its own offsets,
				 * zero-copy (splice(2)) */
	uint64_t log_max;      /* bytes of output the log keeps (head and
				 * newest tail), 0 = unbounded */
	uint64_t max_rss;      /* helper memory budget over its fork image,
				 * 0 = unbounded */
	bool task_execs;       /* the caller execs (or exits) next: the
				 * helper is started sharing its memory,
				 * as a child of the caller's parent, which
				 * must reap it (ga_collector_finish_task
				 * does) */
	const char *work_dir;  /* reported to the collector (for %w) */
	const char *log_error; /* why there is no log, reported; or NULL */
};

/* Start in the calling (task) process: record regular-file outputs,
 * interpose pipes (when O->log_fd is open), and tell the collector.
 * Sets *MODE to what was interposed and *WHY (static string, or NULL)
 * to a note for the admin.  When anything fails before fds 1 and 2 are
 * touched, they stay exactly as they were.  Returns 0 when something is
 * recorded, 1 when nothing is (the task must run anyway).  Never exits
 * or aborts. */
int ga_capture_start(const struct ga_capture_opts *o,
                     enum ga_capture_mode *mode, const char **why);

/* Flags of the helper's final report (ga_task_capture.flags). */
#define GA_CAPTURE_F_OUT_LOST 1u /* writing the original output failed */
#define GA_CAPTURE_F_LOG_LOST 2u /* writing the durable log failed */
#define GA_CAPTURE_F_DRAINED 4u  /* stopped on drain, pipe still held */
#define GA_CAPTURE_F_LOG_CUT 8u  /* the log's middle was dropped */
#define GA_CAPTURE_F_LOG_STOP                                                  \
	16u /* log_max reached where holes cannot
				   * be punched: the log kept its head */

const char *ga_capture_mode_name(enum ga_capture_mode m);

/* Whether the log name PATTERN (ga_logfile_expand's syntax) has every
 * conversion in CONVS, e.g. "jst": one file per job, step and task, which
 * makes ga_capture_opts.log_private true.  False for a NULL PATTERN. */
bool ga_capture_pattern_has(const char *pattern, const char *convs);

#endif
