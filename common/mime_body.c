/* SPDX-License-Identifier: MIT */
/* The mail's body: one model written twice, as text and as HTML, one
 * writer per section. */
#include "mime_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga-config.h"

#define MAX_TABLE_ROWS 50

/* "3-5,7,9" from sorted ids. */
static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Inline CSS only: many mail clients drop <style> blocks.  overflow-wrap
 * is inherited, so the outer block makes every long word break instead of
 * widening the page. */
#define CSS_PRE                                                                \
	"white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;"   \
	"margin:4px 0 10px;padding:8px;background:#f4f4f5;"                    \
	"border-radius:4px;font-family:ui-monospace,Menlo,Consolas,"           \
	"monospace;font-size:12px;line-height:1.35"
#define CSS_H3 "font-size:15px;margin:16px 0 4px"
#define CSS_TH                                                                 \
	"text-align:left;vertical-align:top;padding:3px 8px 3px 0;"            \
	"color:#52525b;font-weight:normal;width:6.5em"
#define CSS_TD "vertical-align:top;padding:3px 0"

struct sink {
	struct ga_buf *txt;
	struct ga_buf *html;
	bool in_facts;
};

static void html_text(struct sink *k, const struct ga_buf *t)
{
	ga_buf_put_markup(k->html, t->data ? t->data : "", t->len);
}

static void facts_end(struct sink *k)
{
	if (k->in_facts)
		ga_buf_puts(k->html, "</table>\n");
	k->in_facts = false;
}

/* A section title. */
static void sec(struct sink *k, const char *title)
{
	facts_end(k);
	ga_buf_printf(k->txt, "\n%s\n", title);
	ga_buf_printf(k->html, "<h3 style=\"" CSS_H3 "\">%s</h3>\n", title);
}

/* T as one line of text and as HTML between OPEN and CLOSE (reset after). */
static void text_block(struct sink *k, struct ga_buf *t, const char *open,
                       const char *close)
{
	ga_buf_append(k->txt, t->data ? t->data : "", t->len);
	ga_buf_putc(k->txt, '\n');
	ga_buf_puts(k->html, open);
	html_text(k, t);
	ga_buf_puts(k->html, close);
	ga_buf_reset(t);
}

/* A paragraph of T (reset after). */
static void par(struct sink *k, struct ga_buf *t)
{
	facts_end(k);
	text_block(k, t, "<p style=\"margin:4px 0\">", "</p>\n");
}

/* A preformatted block of T (lines), indented in text (reset after). */
static void pre(struct sink *k, struct ga_buf *t)
{
	const char *p = t->data ? t->data : "";
	size_t len = t->len;

	facts_end(k);
	while (len && p[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && p[j] != '\n')
			j++;
		ga_buf_puts(k->txt, "  ");
		ga_buf_append(k->txt, p + i, j - i);
		ga_buf_putc(k->txt, '\n');
		i = j + 1;
	}
	ga_buf_puts(k->html, "<pre style=\"" CSS_PRE "\">");
	ga_buf_put_markup(k->html, p, len);
	ga_buf_puts(k->html, "</pre>\n");
	ga_buf_reset(t);
}

/* One row of the facts table: "  Label:  value" (reset after). */
static void fact(struct sink *k, const char *label, struct ga_buf *t)
{
	if (!k->in_facts)
		ga_buf_puts(k->html, "<table role=\"presentation\" "
		                     "style=\"border-collapse:collapse;"
		                     "width:100%;table-layout:fixed\">\n");
	k->in_facts = true;
	ga_buf_printf(k->txt, "  %-10s ", label);
	ga_buf_append(k->txt, t->data ? t->data : "", t->len);
	ga_buf_putc(k->txt, '\n');
	ga_buf_printf(k->html, "<tr><th style=\"" CSS_TH "\">%s</th>", label);
	ga_buf_puts(k->html, "<td style=\"" CSS_TD "\">");
	html_text(k, t);
	ga_buf_puts(k->html, "</td></tr>\n");
	ga_buf_reset(t);
}

const char ga_mime_over_budget[] = "over the attachment budget";

#define TAIL_INLINE 20

/* The last N lines of TAIL. */
static const char *last_lines(const char *tail, size_t n, size_t *skipped)
{
	const char *end = tail + strlen(tail), *p = end;
	size_t lines = 0, total = 0;

	while (end > tail && end[-1] == '\n')
		end--;
	for (const char *c = tail; c < end; c++)
		total += *c == '\n';
	total++;
	for (p = end; p > tail; p--)
		if (p[-1] == '\n' && ++lines == n)
			break;
	*skipped = total > n ? total - n : 0;
	return p;
}

static const char *state_colour(int rank, bool finding_found)
{
	if (rank == ST_COMPLETED)
		return finding_found ? "#b54708" : "#067647";
	return "#b42318";
}

static void facts(const struct ga_mail *m, const struct ga_mime_root *root,
                  struct sink *k, struct ga_buf *t)
{
	const struct ga_report *mr = ga_mime_main_report(m);
	const struct ga_report *rr = root->r ? root->r : mr;
	int64_t start, end;
	uint64_t peak = 0;

	ga_mime_job_span(m, &start, &end);
	if (!ga_mime_is_array(m))
		ga_mime_put_job_id(t, mr);
	else if (root->r)
		ga_mime_put_job_id(t, root->r); /* the failing task, as %A_%a */
	else
		ga_buf_printf(t, "array %s", ga_str_or(mr->array_job_id, "?"));
	ga_buf_puts(t, " (");
	ga_mime_put_job_name(t, mr->job_name);
	ga_buf_puts(t, "), user ");
	ga_mime_put_text(t, ga_str_or(mr->user, "?"), false);
	fact(k, "Job", t);
	if (root->t || !ga_mime_is_array(m)) {
		const struct ga_task_report *tk =
		        root->t ? root->t
		                : (mr->n_tasks ? &mr->tasks[0] : NULL);

		if (tk) {
			ga_mime_put_status(t, &tk->verdict.status);
			if (mr->n_tasks > 1 || m->n_reports > 1)
				ga_buf_printf(t, " (task %" PRIu32 ")",
				              tk->task_id);
			fact(k, "Exit", t);
		}
	}
	ga_mime_put_duration(t, start, end);
	if (rr->time_limit > 0) {
		ga_buf_puts(t, " of ");
		ga_mime_put_span(t, rr->time_limit);
		ga_buf_puts(t, " limit");
		if (start && end >= start)
			ga_buf_printf(t, " (%" PRId64 "%s)",
			              (end - start) * 100 / rr->time_limit,
			              "%");
	}
	fact(k, "Elapsed", t);
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->mem_peak > peak)
			peak = m->reports[i]->mem_peak;
	if (peak || rr->mem_request) {
		if (peak) {
			ga_buf_puts(t, "peak ");
			ga_mime_put_mem(t, peak);
		} else {
			ga_buf_puts(t, "peak unknown");
		}
		if (rr->mem_request) {
			ga_buf_puts(t, " of ");
			ga_mime_put_mem(t, rr->mem_request);
			ga_buf_puts(t, rr->mem_per_cpu ? " requested per CPU"
			                               : " requested");
			if (peak && !rr->mem_per_cpu)
				ga_buf_printf(t, " (%" PRIu64 "%s)",
				              peak * 100 / rr->mem_request,
				              "%");
		}
		fact(k, "Memory", t);
	}
	if (rr->gres) {
		ga_mime_put_text(t, *rr->gres ? rr->gres : "none", false);
		fact(k, "GPUs", t);
	}
	{
		/* Distinct nodes in report order. */
		size_t shown = 0;

		for (size_t i = 0; i < m->n_reports && shown < 20; i++) {
			bool dup = false;

			for (size_t j = 0; j < i; j++)
				if (m->reports[j]->node &&
				    m->reports[i]->node &&
				    !strcmp(m->reports[j]->node,
				            m->reports[i]->node))
					dup = true;
			if (dup || !m->reports[i]->node)
				continue;
			if (shown++)
				ga_buf_puts(t, ", ");
			ga_mime_put_text(t, m->reports[i]->node, false);
		}
		if (shown)
			fact(k, shown > 1 ? "Nodes" : "Node", t);
	}
	if (rr->script) {
		ga_mime_put_text(t, rr->script, false);
		fact(k, "Script", t);
	}
	/* slurmd runs a batch job from its own copy of the script
	 * (.../job<N>/slurm_script, deleted after the job): it says nothing
	 * the reader can use, the submitted path above does. */
	if (rr->command && !strstr(rr->command, "/slurm_script")) {
		ga_mime_put_text(t, rr->command, false);
		fact(k, "Command", t);
	}
	if (rr->work_dir) {
		ga_mime_put_text(t, rr->work_dir, false);
		fact(k, "Directory", t);
	}
	facts_end(k);
}

/* The numbers behind a resource failure, next to the hint: what was asked
 * for and what was used ("requested 16.0 GiB, peaked at 16.0 GiB"). */
static void resource_note(const struct ga_mail *m,
                          const struct ga_mime_root *root, enum ga_class cls,
                          struct sink *k, struct ga_buf *t)
{
	const struct ga_report *rr = root->r;
	int64_t start, end;
	uint64_t peak = 0;

	ga_mime_job_span(m, &start, &end);
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->mem_peak > peak)
			peak = m->reports[i]->mem_peak;
	if (cls == GA_CLASS_HOST_OOM && rr->mem_request && peak) {
		ga_buf_puts(t, "The job requested ");
		ga_mime_put_mem(t, rr->mem_request);
		ga_buf_puts(t, rr->mem_per_cpu ? " per CPU" : "");
		ga_buf_puts(t, " and its memory peaked at ");
		ga_mime_put_mem(t, peak);
		ga_buf_puts(t, " on this node.");
		par(k, t);
	} else if (cls == GA_CLASS_TIME_LIMIT && rr->time_limit > 0 && start &&
	           end >= start) {
		ga_buf_puts(t, "It ran ");
		ga_mime_put_span(t, end - start);
		ga_buf_puts(t, " of its ");
		ga_mime_put_span(t, rr->time_limit);
		ga_buf_puts(t, " limit.");
		par(k, t);
	}
}

/* The status bar (the state word in a coloured block, so failure and
 * success differ at a glance; with CSS off it is plain text), the
 * headline and the job.  Returns the rank shown: for an array, FAILED when
 * any task failed. */
static int status_bar(const struct ga_mail *m, const struct ga_mime_root *root,
                      struct sink *k, struct ga_buf *t)
{
	const char *state;
	int rank = ga_mime_job_state(m, &state);

	if (ga_mime_is_array(m)) {
		bool bad = false;

		for (size_t i = 0; i < m->n_reports; i++) {
			const char *n;

			bad |= ga_mime_report_state(m->reports[i], &n) >
			       ST_COMPLETED;
		}
		rank = bad ? ST_FAILED : ST_COMPLETED;
		state = bad ? "FAILED" : "COMPLETED";
	}
	ga_buf_printf(k->html,
	              "<div style=\"background:%s;color:#ffffff;"
	              "padding:8px 14px;font-weight:bold;font-size:13px;"
	              "letter-spacing:.04em\">%s%s</div>\n"
	              "<div style=\"padding:4px 14px 14px\">\n",
	              state_colour(rank, root->t != NULL),
	              ga_mime_is_array(m) ? "ARRAY " : "", state);
	ga_mime_headline(t, m, root);
	text_block(k, t, "<h2 style=\"font-size:18px;margin:10px 0 6px\">",
	           "</h2>\n");
	ga_mime_job_label(t, m);
	par(k, t);
	return rank;
}

/* An array's failing tasks as ARRAY_INDEX, at most 50. */
static void failing_tasks(const struct ga_mail *m, struct sink *k,
                          struct ga_buf *t)
{
	const struct ga_report *mr = ga_mime_main_report(m);
	long *ids = calloc(m->n_reports, sizeof(*ids));
	size_t n_ids = 0;

	for (size_t i = 0; i < m->n_reports; i++) {
		const struct ga_report *r = m->reports[i];
		const char *n;
		bool dup = false;

		if (!ids || !r->array_task_id ||
		    (ga_mime_report_state(r, &n) == ST_COMPLETED &&
		     r->root_task < 0))
			continue;
		for (size_t j = 0; j < n_ids; j++)
			dup |= ids[j] == strtol(r->array_task_id, NULL, 10);
		if (!dup)
			ids[n_ids++] = strtol(r->array_task_id, NULL, 10);
	}
	if (n_ids) {
		qsort(ids, n_ids, sizeof(*ids), cmp_long);
		for (size_t i = 0; i < n_ids && i < 50; i++)
			ga_buf_printf(t, "%s%s_%ld", i ? ", " : "",
			              ga_str_or(mr->array_job_id, "?"), ids[i]);
		if (n_ids > 50)
			ga_buf_printf(t, ", ... (%zu in all)", n_ids);
		sec(k, "Failing array tasks");
		par(k, t);
	}
	free(ids);
}

/* The root cause in one sentence, what to do, and the numbers behind a
 * resource failure. */
static void what_happened(const struct ga_mail *m,
                          const struct ga_mime_root *root, struct sink *k,
                          struct ga_buf *t)
{
	const struct ga_verdict *v = &root->t->verdict;
	const char *title = ga_class_title(v->cls);

	sec(k, "What happened");
	/* Titles are phrases ("stopped at the time limit"): a sentence
	 * starts with a capital. */
	if (title && *title >= 'a' && *title <= 'z') {
		ga_buf_putc(t, (char)(*title - 'a' + 'A'));
		title++;
	}
	ga_buf_printf(t, "%s (%s): task %" PRIu32 " of ", title ? title : "",
	              ga_class_name(v->cls), root->t->task_id);
	if (ga_mime_is_array(m)) {
		ga_mime_put_job_id(t, root->r);
		ga_buf_putc(t, ' ');
	}
	ga_buf_printf(t, "step %s on ", ga_str_or(root->r->step_id, "?"));
	ga_mime_put_text(
	        t, ga_str_or(root->t->node, ga_str_or(root->r->node, "?")),
	        false);
	ga_buf_puts(t, ".");
	par(k, t);
	if (v->hint) {
		sec(k, "What to do");
		ga_mime_put_text(t, v->hint, false);
		par(k, t);
	}
	resource_note(m, root, v->cls, k, t);
}

/* The lines that decided the verdict, then the other classes seen. */
static void evidence(const struct ga_verdict *v, struct sink *k,
                     struct ga_buf *t)
{
	if (v->n_evidence) {
		sec(k, "Evidence");
		for (size_t i = 0; i < v->n_evidence; i++) {
			if (v->evidence[i].line)
				ga_buf_printf(t, "line %" PRIu64 ": ",
				              v->evidence[i].line);
			ga_mime_put_evidence(t, v->evidence[i].text);
			ga_buf_putc(t, '\n');
		}
		pre(k, t);
	}
	if (v->n_others) {
		sec(k, "Also seen");
		for (size_t i = 0; i < v->n_others; i++) {
			ga_buf_printf(t, "%s at line %" PRIu64 ": ",
			              ga_class_name(v->others[i].cls),
			              v->others[i].line);
			ga_mime_put_evidence(t, v->others[i].text);
			ga_buf_putc(t, '\n');
		}
		pre(k, t);
	}
}

/* The root task's last TAIL_INLINE lines. */
static void last_output(const struct ga_task_report *tk, struct sink *k,
                        struct ga_buf *t)
{
	size_t skipped;
	const char *p;
	char title[128];

	if (!tk->verdict.tail || !*tk->verdict.tail)
		return;
	p = last_lines(tk->verdict.tail, TAIL_INLINE, &skipped);
	snprintf(title, sizeof(title), "Last output of task %" PRIu32 "%s",
	         tk->task_id, skipped ? " (last 20 lines)" : "");
	sec(k, title);
	ga_mime_put_text(t, p, true);
	pre(k, t);
}

/* One row of the task table: step (or array task), task, node, class and
 * exit, the root cause marked. */
static void task_row(const struct ga_mail *m, const struct ga_report *r,
                     const struct ga_task_report *tk,
                     const struct ga_mime_root *root, struct ga_buf *t)
{
	struct ga_buf cell;

	ga_buf_init(&cell);
	if (ga_mime_is_array(m))
		ga_mime_put_job_id(&cell, r);
	else
		ga_mime_put_text(&cell, ga_str_or(r->step_id, "?"), false);
	ga_buf_printf(t, "%-10.10s %-5" PRIu32 " ", cell.data ? cell.data : "?",
	              tk->task_id);
	ga_buf_reset(&cell);
	ga_mime_put_text(&cell, ga_str_or(tk->node, r->node), false);
	ga_buf_printf(t, "%-10.10s %-13s ", cell.data ? cell.data : "?",
	              ga_class_name(tk->verdict.cls));
	ga_buf_reset(&cell);
	ga_mime_put_status(&cell, &tk->verdict.status);
	ga_buf_printf(t, "%s", cell.data ? cell.data : "?");
	ga_buf_finish(&cell);
	if (tk == root->t)
		ga_buf_puts(t, "  <- root cause");
	ga_buf_putc(t, '\n');
}

/* Per-step, per-task table, when there is more than one task. */
static void task_table(const struct ga_mail *m, const struct ga_mime_root *root,
                       struct sink *k, struct ga_buf *t)
{
	size_t rows = 0, total_rows = 0;

	for (size_t i = 0; i < m->n_reports; i++)
		total_rows += m->reports[i]->n_tasks;
	if (total_rows <= 1 && m->n_reports <= 1)
		return;
	sec(k, "Tasks");
	ga_buf_printf(t, "%-10s %-5s %-10s %-13s %s\n",
	              ga_mime_is_array(m) ? "job" : "step", "task", "node",
	              "class", "exit");
	for (size_t i = 0; i < m->n_reports && rows < MAX_TABLE_ROWS; i++) {
		const struct ga_report *r = m->reports[i];

		for (size_t j = 0; j < r->n_tasks && rows < MAX_TABLE_ROWS;
		     j++, rows++)
			task_row(m, r, &r->tasks[j], root, t);
	}
	if (total_rows > rows)
		ga_buf_printf(t, "... and %zu more tasks\n", total_rows - rows);
	pre(k, t);
}

/* Where the logs live: JOB.STEP.TASK, as the user names them. */
static void full_logs(const struct ga_mail *m, struct sink *k, struct ga_buf *t)
{
	size_t shown = 0;

	for (size_t i = 0; i < m->n_reports && shown < 10; i++) {
		const struct ga_report *r = m->reports[i];

		for (size_t j = 0; j < r->n_tasks && shown < 10; j++) {
			const struct ga_task_report *tk = &r->tasks[j];

			if (!tk->log_path)
				continue;
			shown++;
			ga_mime_put_job_id(t, r);
			ga_buf_printf(t, ".%s task %" PRIu32 ": ",
			              ga_str_or(r->step_id, "?"), tk->task_id);
			ga_mime_put_text(t, tk->log_path, false);
			ga_buf_putc(t, '\n');
		}
	}
	if (shown) {
		sec(k, "Full logs");
		pre(k, t);
	}
}

/* "attached: NAME (SIZE[, NOTE from SIZE])" or "NOT attached: ORIGIN
 * (SIZE): REASON". */
static void plan_line(const struct ga_mail *m, const struct attach_plan *p,
                      struct ga_buf *t)
{
	const struct ga_mail_file *f = p->f;

	if (p->fits) {
		ga_buf_puts(t, "attached: ");
		ga_mime_put_text(t, f->filename, false);
		ga_buf_puts(t, " (");
		ga_mime_put_size(t, f->len);
		if (f->note) {
			ga_buf_puts(t, ", ");
			ga_mime_put_text(t, f->note, false);
			ga_buf_puts(t, " from ");
			ga_mime_put_size(t, f->orig_size);
		}
		ga_buf_puts(t, ")\n");
		return;
	}
	ga_buf_puts(t, "NOT attached: ");
	ga_mime_put_text(t, ga_str_or(f->origin, f->filename), false);
	ga_buf_puts(t, " (");
	ga_mime_put_size(t, f->orig_size ? f->orig_size : f->len);
	ga_buf_puts(t, "): ");
	ga_mime_put_text(t, p->reason, false);
	if (p->reason == ga_mime_over_budget)
		ga_buf_printf(t, " of %" PRIu64 " bytes", m->attach_budget);
	ga_buf_putc(t, '\n');
}

/* Attachments, and everything that is not attached: never dropped
 * silently.  The attached files first. */
static void attachment_list(const struct ga_mail *m,
                            const struct attach_plan *plan, size_t n_plan,
                            struct sink *k, struct ga_buf *t)
{
	if (!n_plan && !m->n_skipped)
		return;
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n_plan; i++)
			if (plan[i].f && plan[i].fits == (pass == 0))
				plan_line(m, &plan[i], t);
	for (size_t i = 0; i < m->n_skipped; i++) {
		ga_buf_puts(t, "NOT attached: ");
		ga_mime_put_text(t, m->skipped[i].path, false);
		ga_buf_puts(t, " (");
		ga_mime_put_size(t, m->skipped[i].size);
		ga_buf_puts(t, "): ");
		ga_mime_put_text(t, m->skipped[i].reason, false);
		ga_buf_putc(t, '\n');
	}
	if (t->len) {
		sec(k, "Attachments");
		pre(k, t);
	}
}

/* The site's words and help link, then who sent it. */
static void footer(const struct ga_mail *m, struct sink *k, struct ga_buf *t)
{
	ga_buf_puts(k->txt, "\n-- \n");
	ga_buf_puts(k->html, "<hr style=\"border:0;border-top:1px solid "
	                     "#e4e4e7;margin:16px 0 8px\">\n"
	                     "<p style=\"margin:0;color:#71717a;"
	                     "font-size:12px\">");
	if (m->footer && *m->footer) {
		ga_mime_put_text(t, m->footer, false);
		ga_buf_append(k->txt, t->data, t->len);
		ga_buf_putc(k->txt, '\n');
		html_text(k, t);
		ga_buf_puts(k->html, "<br>\n");
		ga_buf_reset(t);
	}
	if (m->help_url && *m->help_url) {
		ga_mime_put_text(t, m->help_url, false);
		ga_buf_puts(k->txt, "Help: ");
		ga_buf_append(k->txt, t->data, t->len);
		ga_buf_putc(k->txt, '\n');
		ga_buf_puts(k->html, "Help: <a href=\"");
		html_text(k, t);
		ga_buf_puts(k->html, "\">");
		html_text(k, t);
		ga_buf_puts(k->html, "</a><br>\n");
		ga_buf_reset(t);
	}
	ga_buf_printf(k->txt, "gpualert %s\n", GA_VERSION);
	ga_buf_printf(k->html, "gpualert %s</p>\n</div>\n", GA_VERSION);
}

void ga_mime_body(const struct ga_mail *m, const struct ga_mime_root *root,
                  const struct attach_plan *plan, size_t n_plan,
                  struct ga_buf *txt, struct ga_buf *html)
{
	struct sink k = {txt, html, false};
	struct ga_buf t;
	int rank;

	ga_buf_init(&t);
	rank = status_bar(m, root, &k, &t);
	if (ga_mime_is_array(m))
		failing_tasks(m, &k, &t);
	if (root->t) {
		what_happened(m, root, &k, &t);
		evidence(&root->t->verdict, &k, &t);
		last_output(root->t, &k, &t);
	} else if (rank == ST_COMPLETED) {
		sec(&k, "What happened");
		ga_buf_puts(&t, "No task failed, and nothing in the output "
		                "looked wrong.");
		par(&k, &t);
	}
	sec(&k, "Facts");
	facts(m, root, &k, &t);
	task_table(m, root, &k, &t);
	full_logs(m, &k, &t);
	attachment_list(m, plan, n_plan, &k, &t);
	footer(m, &k, &t);
	ga_buf_finish(&t);
}
