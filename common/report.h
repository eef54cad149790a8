/* SPDX-License-Identifier: MIT */
/* The structured report: what gpualert knows about one step (Slurm) or
 * one wrapped command (gpualert run), in a versioned JSON schema that the
 * spool carries to `gpualert send` (README.md, "Report schema").
 *
 * Schema version 1, one JSON object:
 *   schema (1), gpualert (version), origin ("slurm"|"run"),
 *   job_id, step_id, array_job_id?, array_task_id?, job_name, user, uid,
 *   gid, node, work_dir, command, mode ("log"|"email"|"webhook"),
 *   recipients [..], start_time, end_time (unix seconds, 0 = unknown),
 *   scheduler_state?, root_task (index into tasks, -1 if none failed),
 *   class, rule, hint (the root cause: the root task's verdict, or the
 *   step's when no task failed),
 *   tasks: [ { task_id, node, log_path, start_time, end_time,
 *              end_time_ns? (unix nanoseconds, CLOCK_REALTIME at the
 *              task's exit; absent when unknown; readers without it use
 *              end_time),
 *              capture_error?, verdict: <classify --json object>,
 *              tail? (root task and the first failing tasks only) } ]
 *
 * Optional keys added within schema 1 (readers ignore keys they do not
 * know, so reports with and without them are read by every sender of
 * schema 1; a missing key reads as "unknown"):
 *   time_limit (seconds; Slurm gives minutes), mem_request (bytes, per
 *   node, or per CPU when mem_per_cpu is true), mem_per_cpu, mem_peak
 *   (bytes, the job cgroup's high-water mark on this node), gres (GPUs and
 *   other generic resources allocated per node, Slurm's spelling),
 *   script (the path the user submitted, not slurmd's copy),
 *   notify ("always" | "fail": send nothing when the job succeeded),
 *   webhook_url, webhook_format ("slack" | "teams" | "ntfy": a personal
 *   destination, already checked against [webhook] allowed_hosts).
 *
 *   Kernel evidence (optional keys, absent when empty; readers of an
 *   older gpualert ignore them):
 *   partition?, gpus? (the step's GPU bus ids), kernel?: [ { source
 *   ("kernel_log": the node's kernel log), time (microseconds since boot),
 *   text, xid, sxid (bool), pid (-1 unknown), bus_id, match ("pid",
 *   "device" or "fabric"), kind ("hardware", "application" or "other"),
 *   action (suggested admin action) } ]
 */
#ifndef GPUALERT_COMMON_REPORT_H
#define GPUALERT_COMMON_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "classifier.h"
#include "status.h"
#include "util.h"

#define GA_REPORT_SCHEMA 1
#define GA_REPORT_MAX_TASKS 100000
#define GA_REPORT_MAX_RECIPIENTS 100

/* Where the task's output is kept and what of it was read: the task's
 * own output file (its .out), or gpualert's durable log. */
struct ga_task_record {
	bool present;
	bool is_log; /* gpualert's log (else the task's own file) */
	uint64_t dev, ino;
	uint64_t start;   /* offset of the task's first byte */
	uint64_t end;     /* the file's size when it was read */
	uint64_t read;    /* bytes classified (the newest ones) */
	uint64_t skipped; /* bytes not read: over classify_max */
	uint64_t cut;     /* bytes the log dropped to stay in log_max */
};

struct ga_task_report {
	uint32_t task_id; /* global rank */
	char *node;
	char *log_path; /* the record's path (output file or log); or NULL */
	struct ga_task_record record;
	int64_t start_time, end_time;
	int64_t end_time_ns;       /* 0 = unknown: end_time (seconds) decides */
	char *capture_error;       /* why capture degraded; NULL if OK */
	struct ga_verdict verdict; /* includes the exit status */
};

/* A line of the node's kernel log attributed to the step. */
struct ga_report_kernel {
	int64_t time; /* kernel log clock, microseconds since boot */
	char *text;
	unsigned xid;
	bool sxid;
	long pid; /* -1: not named */
	char *bus_id;
	char *match;  /* "pid", "device", "fabric" */
	char *kind;   /* "hardware", "application", "other" */
	char *action; /* suggested admin action; NULL if none */
};

#define GA_REPORT_MAX_KERNEL 16

struct ga_report {
	int schema;
	char *origin;
	char *job_id;
	char *step_id;
	char *array_job_id; /* NULL when not an array job */
	char *array_task_id;
	char *job_name;
	char *user;
	uint32_t uid, gid;
	char *node;
	char *work_dir;
	char *command;
	char *mode;
	char **recipients;
	size_t n_recipients;
	int64_t start_time, end_time;
	enum ga_sched_state sched_state;
	struct ga_task_report *tasks;
	size_t n_tasks;
	long root_task; /* -1: no task failed */

	/* Resource context (0 / NULL: unknown). */
	int64_t time_limit;   /* seconds */
	uint64_t mem_request; /* bytes per node, or per CPU */
	bool mem_per_cpu;
	uint64_t mem_peak; /* bytes */
	char *gres;
	char *script;

	/* Delivery choice. */
	char *notify; /* "always" (NULL reads so) or "fail" */
	char *webhook_url;
	char *webhook_format;

	/* Kernel evidence (ga_report_apply_kernel, kernlog.h). */
	char *partition;
	char *gpus; /* comma-separated bus ids; NULL: none or unknown */
	struct ga_report_kernel *kernel;
	size_t n_kernel;
};

/* Append a zeroed kernel line (pid -1) and return it, or NULL on ENOMEM
 * or past GA_REPORT_MAX_KERNEL. */
GA_MUST_CHECK struct ga_report_kernel *ga_report_add_kernel(
        struct ga_report *r);

/* Caller storage; every string field is heap-owned by the report. */
void ga_report_init(struct ga_report *r);
void ga_report_finish(struct ga_report *r);

/* Append a zeroed task (verdict initialised) and return it, or NULL on
 * ENOMEM or past GA_REPORT_MAX_TASKS.  Earlier task pointers may move. */
GA_MUST_CHECK struct ga_task_report *ga_report_add_task(struct ga_report *r);

/* Set a string field: *FIELD = strdup(VALUE) (NULL allowed), freeing the
 * old value.  Returns 0 or -ENOMEM (the field is then left as it was). */
GA_MUST_CHECK int ga_report_set(char **field, const char *value);

/* ga_report_set for a field the report can go out without: on ENOMEM the
 * field is emptied and the log says so, so a report is never held back,
 * nor silently different, for want of one string. */
void ga_report_put(char **field, const char *value);

/* Add a recipient (copied).  Returns 0, -ENOMEM or -E2BIG. */
GA_MUST_CHECK int ga_report_add_recipient(struct ga_report *r,
                                          const char *addr);

/* Two task ends less than this apart are a near-tie: cross-node clock
 * skew under NTP is a few milliseconds, and a rank that raised can take
 * seconds to exit (interpreter, CUDA and communicator teardown) while
 * its peers already fail on the closed connection. */
#define GA_REPORT_NEAR_TIE_NS (5 * 1000000000LL)

/* Whether failing task A is a better root cause than failing task B.
 * Ends are compared in nanoseconds (end_time_ns, else end_time); an
 * unknown end sorts last.  On a near-tie (GA_REPORT_NEAR_TIE_NS, or both
 * unknown) an echo (a communication failure, a cancel the scheduler did
 * not report for this job, no recognisable cause) never outranks a task
 * with a cause of its own; otherwise the earlier end wins.  Exact ties:
 * class priority, then the lower rank.  Used within a step and across
 * the reports of one job. */
bool ga_report_task_precedes(const struct ga_task_report *a,
                             const struct ga_task_report *b);

/* Choose the root cause: the failing task that ga_report_task_precedes
 * puts first (the one whose crash the others echo).  Sets r->root_task
 * (-1 when no task failed). */
void ga_report_choose_root(struct ga_report *r);

/* The report's overall class: the root task's, else success. */
enum ga_class ga_report_class(const struct ga_report *r);

/* Append the report as one JSON object (no newline). */
void ga_report_write_json(const struct ga_report *r, struct ga_buf *out);

/* Parse a report written by ga_report_write_json (or by an older/newer
 * gpualert with the same schema number).  TEXT is untrusted: sizes and
 * types are checked, unknown keys ignored.  Fills R (initialised by the
 * caller).  Returns 0, -EINVAL (malformed; *ERR names the problem, static
 * string) or -ENOMEM. */
GA_MUST_CHECK int ga_report_parse_json(const char *text, size_t len,
                                       struct ga_report *r, const char **err);

#endif
