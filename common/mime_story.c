/* SPDX-License-Identifier: MIT */
/* The job's story as a message tells it: the root cause across reports,
 * the state as Slurm shows it, the headline and the text helpers every
 * part of the message uses (mime_private.h). */
#include "mime_private.h"

#include <inttypes.h>
#include <string.h>

#define JOB_NAME_MAX 64

/* Whether task A is a better root cause than B, across the reports of
 * one job: the order ga_report_choose_root applies within one step. */
static bool better_root(const struct ga_task_report *a,
                        const struct ga_task_report *b)
{
	return ga_report_task_precedes(a, b);
}

struct ga_mime_root ga_mime_find_root(const struct ga_mail *m)
{
	struct ga_mime_root best = {NULL, NULL};

	for (size_t i = 0; i < m->n_reports; i++) {
		const struct ga_report *r = m->reports[i];
		const struct ga_task_report *t;

		if (r->root_task < 0 || (size_t)r->root_task >= r->n_tasks)
			continue;
		t = &r->tasks[r->root_task];
		if (!best.t || better_root(t, best.t)) {
			best.r = r;
			best.t = t;
		}
	}
	return best;
}

bool ga_mime_is_array(const struct ga_mail *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->array_job_id && *m->reports[i]->array_job_id)
			return true;
	return false;
}

/* The report that speaks for the job: the batch step's, else the first. */
const struct ga_report *ga_mime_main_report(const struct ga_mail *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->step_id &&
		    !strcmp(m->reports[i]->step_id, "batch"))
			return m->reports[i];
	return m->reports[0];
}

/* The job id as the user knows it: JOB, or ARRAY_TASK (%A_%a). */
void ga_mime_put_job_id(struct ga_buf *out, const struct ga_report *r)
{
	if (r->array_job_id && *r->array_job_id)
		ga_buf_printf(out, "%s_%s", r->array_job_id,
		              ga_str_or(r->array_task_id, "?"));
	else
		ga_buf_puts(out, ga_str_or(r->job_id, "?"));
}

int ga_mime_report_state(const struct ga_report *r, const char **name)
{
	int rank = ST_COMPLETED;

	*name = "COMPLETED";
	if (r->sched_state != GA_STATE_NONE) {
		*name = ga_sched_state_name(r->sched_state);
		return ST_SCHED;
	}
	for (size_t i = 0; i < r->n_tasks; i++) {
		const struct ga_status *st = &r->tasks[i].verdict.status;

		if (st->state != GA_STATE_NONE) {
			*name = ga_sched_state_name(st->state);
			return ST_SCHED;
		}
		if (st->oom_kills > 0 && rank < ST_OOM) {
			rank = ST_OOM;
			*name = ga_sched_state_name(GA_STATE_OUT_OF_MEMORY);
		} else if (st->known && (st->signal || st->exit_code) &&
		           rank < ST_FAILED) {
			rank = ST_FAILED;
			*name = "FAILED";
		}
	}
	return rank;
}

static bool is_batch(const struct ga_report *r)
{
	return r->step_id && !strcmp(r->step_id, "batch");
}

/* The job's state as Slurm reports it.  A batch job's state is its batch
 * step's (a failed srun step inside a script that exits 0 leaves the job
 * COMPLETED), except for what applies to the whole job: a scheduler
 * verdict (TIMEOUT, CANCELLED, ...) or an oom-kill in any step
 * (OUT_OF_MEMORY).  Without a batch step, the worst step. */
int ga_mime_job_state(const struct ga_mail *m, const char **name)
{
	bool batch = false;
	int best = -1;

	for (size_t i = 0; i < m->n_reports; i++)
		batch |= is_batch(m->reports[i]);
	*name = "COMPLETED";
	for (size_t i = 0; i < m->n_reports; i++) {
		const char *n;
		int rank = ga_mime_report_state(m->reports[i], &n);

		if (batch && !is_batch(m->reports[i]) && rank == ST_FAILED)
			continue;
		if (rank > best) {
			best = rank;
			*name = n;
		}
	}
	return best < 0 ? ST_COMPLETED : best;
}

/* User-controlled text for a body: valid UTF-8, no control characters
 * but tab (and newline where ML allows it). */
void ga_mime_put_text(struct ga_buf *out, const char *s, bool ml)
{
	struct ga_buf tmp;

	if (!s)
		return;
	ga_buf_init(&tmp);
	ga_utf8_sanitize(&tmp, s, strlen(s));
	for (size_t i = 0; i < tmp.len; i++)
		if (!ml && tmp.data[i] == '\n')
			tmp.data[i] = ' ';
	ga_buf_append(out, tmp.data ? tmp.data : "", tmp.len);
	ga_buf_finish(&tmp);
}

void ga_mime_put_job_name(struct ga_buf *out, const char *name)
{
	struct ga_buf tmp;

	ga_buf_init(&tmp);
	ga_mime_put_text(&tmp, ga_str_or(name, "-"), false);
	ga_buf_append(
	        out, tmp.data,
	        tmp.data ? ga_mime_utf8_cut(tmp.data, tmp.len, JOB_NAME_MAX)
	                 : 0);
	ga_buf_finish(&tmp);
}

/* Evidence text: whole, with an ellipsis when the classifier cut it. */
void ga_mime_put_evidence(struct ga_buf *out, const char *s)
{
	ga_mime_put_text(out, s, false);
	if (s && strlen(s) >= GA_EVIDENCE_TEXT_MAX)
		ga_buf_puts(out, " \xe2\x80\xa6");
}

void ga_mime_put_span(struct ga_buf *out, int64_t d)
{
	if (d >= 86400)
		ga_buf_printf(out, "%" PRId64 "d%02" PRId64 "h%02" PRId64 "m",
		              d / 86400, d / 3600 % 24, d / 60 % 60);
	else if (d >= 3600)
		ga_buf_printf(out, "%" PRId64 "h%02" PRId64 "m", d / 3600,
		              d / 60 % 60);
	else if (d >= 60)
		ga_buf_printf(out, "%" PRId64 "m%02" PRId64 "s", d / 60,
		              d % 60);
	else
		ga_buf_printf(out, "%" PRId64 "s", d);
}

void ga_mime_put_duration(struct ga_buf *out, int64_t start, int64_t end)
{
	if (!start || !end || end < start) {
		ga_buf_puts(out, "unknown");
		return;
	}
	ga_mime_put_span(out, end - start);
}

void ga_mime_put_status(struct ga_buf *out, const struct ga_status *st)
{
	if (!st->known) {
		ga_buf_puts(out, "unknown");
	} else if (st->signal) {
		const char *n = ga_signal_name(st->signal);

		if (n)
			ga_buf_printf(out, "killed by %s", n);
		else
			ga_buf_printf(out, "killed by signal %d", st->signal);
	} else {
		ga_buf_printf(out, "exit code %d", st->exit_code);
	}
	if (st->state != GA_STATE_NONE)
		ga_buf_printf(out, " (%s)", ga_sched_state_name(st->state));
	if (st->oom_kills > 0)
		ga_buf_printf(out, ", %d oom-kill%s", st->oom_kills,
		              st->oom_kills == 1 ? "" : "s");
}

void ga_mime_put_size(struct ga_buf *out, uint64_t n)
{
	if (n >= 10 * 1024 * 1024)
		ga_buf_printf(out, "%" PRIu64 " MiB", n >> 20);
	else if (n >= 10 * 1024)
		ga_buf_printf(out, "%" PRIu64 " KiB", n >> 10);
	else
		ga_buf_printf(out, "%" PRIu64 " bytes", n);
}

/* Memory in the unit people request it in: "16.0 GiB", "512 MiB". */
void ga_mime_put_mem(struct ga_buf *out, uint64_t n)
{
	if (n >= UINT64_C(1) << 30)
		ga_buf_printf(out, "%.1f GiB", (double)n / (1 << 30));
	else
		ga_buf_printf(out, "%" PRIu64 " MiB", (n + (1 << 19)) >> 20);
}

/* The job's run: earliest start to latest end of its reports. */
void ga_mime_job_span(const struct ga_mail *m, int64_t *start, int64_t *end)
{
	*start = *end = 0;
	for (size_t i = 0; i < m->n_reports; i++) {
		const struct ga_report *r = m->reports[i];

		if (r->start_time && (!*start || r->start_time < *start))
			*start = r->start_time;
		if (r->end_time > *end)
			*end = r->end_time;
	}
}

/* The last non-empty line of TAIL, cut to MAX bytes. */
static void put_last_line(struct ga_buf *out, const char *tail, size_t max)
{
	const char *end, *b;
	struct ga_buf tmp;

	if (!tail)
		return;
	end = tail + strlen(tail);
	while (end > tail && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (b = end; b > tail && b[-1] != '\n'; b--)
		;
	while (b < end && (*b == ' ' || *b == '\t'))
		b++;
	if (b == end)
		return;
	ga_buf_init(&tmp);
	ga_utf8_sanitize(&tmp, b, (size_t)(end - b));
	if (tmp.data) {
		size_t n = ga_mime_utf8_cut(tmp.data, tmp.len, max);

		ga_buf_append(out, tmp.data, n);
		if (n < tmp.len)
			ga_buf_puts(out, "\xe2\x80\xa6");
	}
	ga_buf_finish(&tmp);
}

static const char *finding(enum ga_class c)
{
	/* What a clean exit hid, in the words a researcher uses. */
	return c == GA_CLASS_NAN ? "training diverged" : ga_class_title(c);
}

/* "STATE..." without prefix or job: the headline. */
void ga_mime_headline(struct ga_buf *s, const struct ga_mail *m,
                      const struct ga_mime_root *root)
{
	const char *state;
	int rank;

	if (ga_mime_is_array(m)) {
		/* One line per distinct array task: its worst state. */
		size_t n_tasks = 0, n_done = 0, n_found = 0;
		const char *names[16];
		size_t counts[16] = {0}, n_names = 0;

		for (size_t i = 0; i < m->n_reports; i++) {
			const struct ga_report *r = m->reports[i];
			const char *st = "COMPLETED";
			int worst = -1;
			bool seen = false, found = false;

			for (size_t j = 0; j < i; j++)
				if (!strcmp(ga_str_or(m->reports[j]
				                              ->array_task_id,
				                      "?"),
				            ga_str_or(r->array_task_id, "?")))
					seen = true;
			if (seen)
				continue;
			n_tasks++;
			for (size_t j = i; j < m->n_reports; j++) {
				const struct ga_report *q = m->reports[j];
				const char *n;
				int rk;

				if (strcmp(ga_str_or(q->array_task_id, "?"),
				           ga_str_or(r->array_task_id, "?")))
					continue;
				rk = ga_mime_report_state(q, &n);
				if (rk > worst) {
					worst = rk;
					st = n;
				}
				if (q->root_task >= 0)
					found = true;
			}
			if (worst <= ST_COMPLETED) {
				n_done++;
				n_found += found;
				continue;
			}
			for (size_t k = 0; k <= n_names && k < 16; k++) {
				if (k == n_names) {
					names[n_names++] = st;
					counts[k] = 1;
					break;
				}
				if (!strcmp(names[k], st)) {
					counts[k]++;
					break;
				}
			}
		}
		for (size_t k = 0; k < n_names; k++)
			ga_buf_printf(s, "%s%zu/%zu %s", k ? ", " : "",
			              counts[k], n_tasks, names[k]);
		if (!n_names) {
			ga_buf_printf(s, "%zu/%zu COMPLETED", n_done, n_tasks);
			if (n_found && root->t)
				ga_buf_printf(
				        s, ", but %zu with %s", n_found,
				        ga_class_name(root->t->verdict.cls));
		} else if (root->t) {
			ga_buf_printf(s, "; first: %s",
			              ga_class_name(root->t->verdict.cls));
		}
		return;
	}
	rank = ga_mime_job_state(m, &state);
	ga_buf_puts(s, state);
	if (rank == ST_COMPLETED) {
		if (root->t && root->t->verdict.cls != GA_CLASS_SUCCESS)
			ga_buf_printf(s, ", but %s (%s)",
			              finding(root->t->verdict.cls),
			              ga_class_name(root->t->verdict.cls));
		return;
	}
	if (rank == ST_SCHED) {
		int64_t start, end;

		ga_mime_job_span(m, &start, &end);
		if (start && end >= start) {
			ga_buf_puts(s, " after ");
			ga_mime_put_span(s, end - start);
		}
		if (root->t && root->t->verdict.tail &&
		    (root->t->verdict.cls == GA_CLASS_TIME_LIMIT ||
		     root->t->verdict.cls == GA_CLASS_CANCELLED)) {
			ga_buf_puts(s, ": last output \"");
			put_last_line(s, root->t->verdict.tail, 40);
			ga_buf_puts(s, "\"");
		} else if (root->t) {
			ga_buf_printf(s, ": %s",
			              ga_class_name(root->t->verdict.cls));
		}
		return;
	}
	if (root->t) {
		ga_buf_printf(s, ": %s on ",
		              ga_class_name(root->t->verdict.cls));
		ga_mime_put_text(
		        s,
		        ga_str_or(root->t->node, ga_str_or(root->r->node, "?")),
		        false);
	}
}

/* "array 13 (sweep)" or "job 1234 (train)". */
void ga_mime_job_label(struct ga_buf *s, const struct ga_mail *m)
{
	const struct ga_report *mr = ga_mime_main_report(m);

	if (ga_mime_is_array(m))
		ga_buf_printf(s, "array %s (",
		              ga_str_or(mr->array_job_id, "?"));
	else
		ga_buf_printf(s, "job %s (", ga_str_or(mr->job_id, "?"));
	ga_mime_put_job_name(s, mr->job_name);
	ga_buf_putc(s, ')');
}
