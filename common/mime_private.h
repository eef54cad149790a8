/* SPDX-License-Identifier: MIT */
/* What the parts of the message renderer share (mime.c, mime_body.c,
 * mime_encode.c, mime_story.c); not for other modules. */
#ifndef GPUALERT_COMMON_MIME_PRIVATE_H
#define GPUALERT_COMMON_MIME_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "json.h"
#include "mime.h"
#include "report.h"
#include "taxonomy.h"

/* S, or DFLT when S is NULL or "". */
static inline const char *ga_str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* Length of S (LEN bytes) cut to at most MAX bytes on a UTF-8 character
 * boundary. */
size_t ga_mime_utf8_cut(const char *s, size_t len, size_t max);

/* ---- the job's story (mime_story.c) ---- */

/* The root cause of a job: the report and its task (both NULL: none). */
struct ga_mime_root {
	const struct ga_report *r;
	const struct ga_task_report *t;
};

/* The best root cause across M's reports, in the order
 * ga_report_choose_root applies within one step. */
struct ga_mime_root ga_mime_find_root(const struct ga_mail *m);

/* Whether M's reports are tasks of an array job. */
bool ga_mime_is_array(const struct ga_mail *m);

/* The report that speaks for the job: the batch step's, else the first. */
const struct ga_report *ga_mime_main_report(const struct ga_mail *m);

/* Slurm's state for a report, as sacct shows it (reconstructed without
 * Slurm): the scheduler's verdict when there was one, then OUT_OF_MEMORY
 * when the cgroup killed a task (slurmstepd sets it even when the batch
 * script survived and exited 0), then FAILED for a non-zero exit or a
 * signal, else COMPLETED.  The rank orders them. */
enum { ST_COMPLETED = 0, ST_FAILED, ST_OOM, ST_SCHED };

/* R's state: returns its rank and sets *NAME (static string). */
int ga_mime_report_state(const struct ga_report *r, const char **name);

/* The job's state as Slurm reports it.  A batch job's state is its batch
 * step's (a failed srun step inside a script that exits 0 leaves the job
 * COMPLETED), except for what applies to the whole job: a scheduler
 * verdict (TIMEOUT, CANCELLED, ...) or an oom-kill in any step
 * (OUT_OF_MEMORY).  Without a batch step, the worst step.  Returns the
 * rank and sets *NAME. */
int ga_mime_job_state(const struct ga_mail *m, const char **name);

/* The job's run: earliest start to latest end of its reports (0: unknown). */
void ga_mime_job_span(const struct ga_mail *m, int64_t *start, int64_t *end);

/* "STATE..." without prefix or job: the headline. */
void ga_mime_headline(struct ga_buf *s, const struct ga_mail *m,
                      const struct ga_mime_root *root);

/* "array 13 (sweep)" or "job 1234 (train)". */
void ga_mime_job_label(struct ga_buf *s, const struct ga_mail *m);

/* Text writers.  User-controlled text goes through ga_mime_put_text:
 * valid UTF-8, no control characters but tab (and newline where ML allows
 * it). */
void ga_mime_put_text(struct ga_buf *out, const char *s, bool ml);
/* The job name (or "-"), cut to 64 bytes. */
void ga_mime_put_job_name(struct ga_buf *out, const char *name);
/* The job id as the user knows it: JOB, or ARRAY_TASK (%A_%a). */
void ga_mime_put_job_id(struct ga_buf *out, const struct ga_report *r);
/* Evidence text: whole, with an ellipsis when the classifier cut it. */
void ga_mime_put_evidence(struct ga_buf *out, const char *s);
/* A duration: "1d02h03m", "2h03m", "3m04s", "5s". */
void ga_mime_put_span(struct ga_buf *out, int64_t d);
/* END - START as ga_mime_put_span, or "unknown". */
void ga_mime_put_duration(struct ga_buf *out, int64_t start, int64_t end);
/* "exit code N", "killed by SIGNAL", with the state and oom-kills. */
void ga_mime_put_status(struct ga_buf *out, const struct ga_status *st);
/* A file size in bytes, KiB or MiB. */
void ga_mime_put_size(struct ga_buf *out, uint64_t n);
/* Memory in the unit people request it in: "16.0 GiB", "512 MiB". */
void ga_mime_put_mem(struct ga_buf *out, uint64_t n);

/* ---- the body (mime_body.c) ---- */

/* What happens to each offered file: attached (FITS) or listed with
 * REASON; F NULL for a repeat of an earlier file. */
struct attach_plan {
	const struct ga_mail_file *f;
	bool fits;
	const char *reason;
};

/* The REASON of a file over the budget (compared by address: the body
 * then names the budget). */
extern const char ga_mime_over_budget[];

/* Write the body of M as text into TXT and as HTML into HTML: status bar
 * and headline, failing array tasks, what happened, evidence, last
 * output, facts, tasks, full logs, attachments and footer. */
void ga_mime_body(const struct ga_mail *m, const struct ga_mime_root *root,
                  const struct attach_plan *plan, size_t n_plan,
                  struct ga_buf *txt, struct ga_buf *html);

#endif
