/* SPDX-License-Identifier: MIT */
/* The collector: the privileged end of a task's capture (capture.h).
 *
 * The collector (slurmstepd as root, or `gpualert run`) owns one end of a
 * SOCK_SEQPACKET socketpair whose other end the tasks and helpers
 * inherit.  Every message is attributed by kernel-checked credentials
 * (SCM_CREDENTIALS); descriptors arrive with SCM_RIGHTS.  The helper
 * sends a pidfd of itself, which the collector accepts only for a
 * process of the job's uid, and signals only through it
 * (pidfd_send_signal(2)): a recycled pid can never be hit.  Everything
 * received is untrusted: bounded (GA_MSG_MAX), parsed strictly.
 */
#ifndef GPUALERT_COMMON_COLLECTOR_H
#define GPUALERT_COMMON_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h"

/* One durable record of a task's output: a descriptor of the file (the
 * task's own output file, or the durable log), where the task's bytes
 * start in it, and its identity. */
struct ga_record {
	int fd;         /* read-only, owned by the collector; -1 = none */
	uint64_t start; /* offset of the task's first byte */
	uint64_t dev, ino;
	bool is_log; /* gpualert's durable log (else the task's own file) */
	char *path;  /* as the task saw it (untrusted text, display only) */
};

/* What the collector knows about one task. */
struct ga_task_capture {
	uint32_t task_id;
	bool started; /* got the start message */
	enum ga_capture_mode mode;
	enum ga_fd_kind kind[GA_CAPTURE_STREAMS];
	struct ga_record rec[GA_CAPTURE_STREAMS]; /* one per distinct file */
	size_t n_rec;
	int helper_pidfd; /* verified pidfd of the helper, or -1 */
	bool helper;      /* the task said a helper was started */
	char *work_dir;   /* as the task reported it (untrusted) */
	char *error;      /* capture/log problem (untrusted text) */
	bool have_end;    /* got the helper's final counts */
	uint64_t bytes;   /* bytes the helper copied */
	uint64_t log_cut; /* bytes the log dropped to stay in log_max */
	unsigned flags;   /* GA_CAPTURE_F_* */
	uint64_t helper_maxrss_kib; /* the helper's peak RSS (getrusage) */
	uint64_t helper_cpu_ms;     /* the helper's user + system CPU time */
};

struct ga_collector;

/* Create the socketpair (both ends close-on-exec).  EXPECT_UID: messages
 * and helpers of other uids are ignored ((uid_t)-1: accept any).  NULL
 * with errno on failure. */
struct ga_collector *ga_collector_create(uid_t expect_uid);
void ga_collector_destroy(struct ga_collector *c);

/* The end tasks and helpers write to (-1 after close_task_end). */
int ga_collector_task_fd(const struct ga_collector *c);
/* Close the task end in the collector (after the last fork; lets a lone
 * collector see EOF). */
void ga_collector_close_task_end(struct ga_collector *c);

/* Receive whatever messages are queued, waiting up to TIMEOUT_MS for the
 * first.  Returns the number received or -errno. */
int ga_collector_pump(struct ga_collector *c, int timeout_ms);

/* The task ended: tell its helper (if any) to drain, through its pidfd,
 * and wait up to TIMEOUT_MS for its final counts (less if the helper is
 * gone).  Returns the task's record (owned by C, valid until destroy), or
 * NULL when the task never reported.  *WAITED_MS (may be NULL) gets the
 * time spent. */
struct ga_task_capture *ga_collector_finish_task(struct ga_collector *c,
                                                 uint32_t task_id,
                                                 int timeout_ms,
                                                 double *waited_ms);

/* Record of TASK_ID or NULL. */
struct ga_task_capture *ga_collector_task(struct ga_collector *c,
                                          uint32_t task_id);

#endif
