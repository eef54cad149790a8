/* Capture of a task's stdout/stderr: byte for byte to where they went
 * before, into the durable log, and through the streaming classifier.
 *
 * Slurm-free; the plugin (slurm_spank_task_init) and `gpualert run` share
 * it.  Three parties:
 *
 *  - the task process, before it execs the program: ga_capture_start()
 *    double-forks the helper (never a child of the program), points fd 1
 *    (and 2) at pipes and returns; nothing else of the task changes
 *    (environment, signal dispositions, mask, cwd);
 *  - the helper, running as the task's user: copies the pipes, feeds the
 *    classifier, and at EOF (or when told to drain with SIGUSR1) sends its
 *    classifier state to the collector;
 *  - the collector (slurmstepd as root, or `gpualert run`): owns one end
 *    of a SOCK_SEQPACKET socketpair whose other end the tasks and helpers
 *    inherit; it learns each helper's pid from the kernel (SCM_CREDENTIALS,
 *    never from the message text), tells it to drain when the task has
 *    exited, and receives its state.
 *
 * Everything the collector receives is untrusted: bounded (GA_MSG_MAX),
 * parsed strictly, attributed by kernel-checked credentials.
 */
#ifndef GPUALERT_COMMON_CAPTURE_H
#define GPUALERT_COMMON_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GA_MSG_MAX (256 * 1024)

enum ga_capture_mode {
	GA_CAPTURE_NONE = 0, /* not captured (a tty, or an error) */
	GA_CAPTURE_MERGED,   /* fd 1 and 2 were the same file: one pipe */
	GA_CAPTURE_SPLIT,    /* different files: two pipes */
};

struct ga_capture_opts {
	uint32_t task_id;      /* global rank, carried in messages */
	int log_fd;            /* durable log (O_APPEND), -1 for none;
				 * borrowed: the caller closes its copy */
	bool log_private;      /* no other process appends to log_fd's
				 * file while the task runs (its name is
				 * unique to the job, step and task): the
				 * helper may then write it at its own
				 * offsets, zero-copy (splice(2)) */
	int sock_fd;           /* the collector's task end, -1 for none */
	const char *rules_dir; /* helper loads rules after the fork
				 * (NULL/"": built-ins); */
	bool classify;         /* false: copy only */
	unsigned tail_lines;   /* classifier tail; 0 = default */
	uint64_t max_rss;      /* helper memory budget over its fork image,
				 * 0 = unbounded */
	const char *work_dir;  /* reported to the collector (for %w) */
	const char *log_error; /* why there is no log, reported; or NULL */
};

/* Start capturing in the calling (task) process.  Sets *MODE.  When
 * stdout is a terminal, or anything fails before fds 1 and 2 are touched,
 * the task's fds stay exactly as they were, *MODE is GA_CAPTURE_NONE and
 * *WHY (static string) says why; the collector is told either way.
 * Returns 0 when capturing, 1 when not capturing (by design or after an
 * error: the task must run anyway).  Never exits or aborts. */
int ga_capture_start(const struct ga_capture_opts *o,
                     enum ga_capture_mode *mode, const char **why);

/* ---- collector side -------------------------------------------------- */

/* What the collector knows about one task. */
struct ga_task_capture {
	uint32_t task_id;
	bool started; /* got the start message */
	pid_t helper; /* from SCM_CREDENTIALS; 0 = none */
	enum ga_capture_mode mode;
	char *work_dir; /* as the task reported it (untrusted) */
	char *error;    /* capture/log problem (untrusted text) */
	bool have_state;
	char *state; /* classifier state JSON (untrusted) */
	size_t state_len;
	uint64_t bytes;             /* bytes the helper copied */
	unsigned flags;             /* GA_CAPTURE_F_* */
	uint64_t helper_maxrss_kib; /* the helper's peak RSS (getrusage) */
};

#define GA_CAPTURE_F_OUT_LOST 1u   /* writing the original output failed */
#define GA_CAPTURE_F_LOG_LOST 2u   /* writing the durable log failed */
#define GA_CAPTURE_F_DRAINED 4u    /* stopped on drain, pipe still held */
#define GA_CAPTURE_F_NO_RULES 8u   /* helper could not classify */
#define GA_CAPTURE_F_STATE_BIG 16u /* state over GA_MSG_MAX: dropped */
#define GA_CAPTURE_F_CLS_SKIPPED                                               \
	32u /* output too fast: some bytes were
				      * copied and logged, not classified */

struct ga_collector;

/* Create the socketpair (both ends close-on-exec).  AS_ROOT enlarges the
 * socket buffers with SO_SNDBUFFORCE.  EXPECT_UID: messages from other
 * uids are ignored ((uid_t)-1: accept any).  NULL with errno on failure. */
struct ga_collector *ga_collector_create(bool as_root, uid_t expect_uid);
void ga_collector_destroy(struct ga_collector *c);

/* The end tasks and helpers write to (-1 after close_task_end). */
int ga_collector_task_fd(const struct ga_collector *c);
/* Close the task end in the collector (after the last fork; lets a lone
 * collector see EOF). */
void ga_collector_close_task_end(struct ga_collector *c);

/* Receive whatever messages are queued, waiting up to TIMEOUT_MS for the
 * first.  Returns the number received or -errno. */
int ga_collector_pump(struct ga_collector *c, int timeout_ms);

/* The task ended: tell its helper to drain (SIGUSR1) and wait up to
 * TIMEOUT_MS for its state (less if the helper is gone).  Returns the
 * task's record (owned by C, valid until destroy), or NULL when the task
 * never reported.  *WAITED_MS (may be NULL) gets the time spent. */
struct ga_task_capture *ga_collector_finish_task(struct ga_collector *c,
                                                 uint32_t task_id,
                                                 int timeout_ms,
                                                 double *waited_ms);

/* Record of TASK_ID or NULL. */
struct ga_task_capture *ga_collector_task(struct ga_collector *c,
                                          uint32_t task_id);

const char *ga_capture_mode_name(enum ga_capture_mode m);

/* Whether the log name PATTERN (ga_logfile_expand's syntax) has every
 * conversion in CONVS, e.g. "jst": one file per job, step and task, which
 * makes ga_capture_opts.log_private true.  False for a NULL PATTERN. */
bool ga_capture_pattern_has(const char *pattern, const char *convs);

#endif
