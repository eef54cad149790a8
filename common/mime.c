#include "mime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ga-config.h"
#include "json.h"
#include "taxonomy.h"

#define MAX_TABLE_ROWS 50
#define JOB_NAME_MAX 64

static uint64_t fnv1a(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

bool ga_mime_address_ok(const char *addr)
{
	const char *at = NULL;
	size_t n = 0;

	if (!addr)
		return false;
	for (const char *c = addr; *c; c++, n++) {
		unsigned char u = (unsigned char)*c;

		if (n >= 254 || u <= 0x20 || u >= 0x7f)
			return false;
		if (strchr("<>()[]\\,;:\"", u))
			return false;
		if (u == '@') {
			if (at)
				return false;
			at = c;
		}
	}
	/* local@domain with both parts present and a dot-free or dotted
	 * domain that does not start or end with a dot. */
	return n >= 3 && at && at != addr && at[1] && at[1] != '.' &&
	       addr[n - 1] != '.';
}

/* ---- encoders ---- */

static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_chunk(struct ga_buf *out, const unsigned char *p, size_t n)
{
	char q[4];

	q[0] = b64[p[0] >> 2];
	q[1] = b64[((p[0] & 3) << 4) | (n > 1 ? p[1] >> 4 : 0)];
	q[2] = n > 1 ? b64[((p[1] & 15) << 2) | (n > 2 ? p[2] >> 6 : 0)] : '=';
	q[3] = n > 2 ? b64[p[2] & 63] : '=';
	ga_buf_append(out, q, 4);
}

void ga_mime_base64(struct ga_buf *out, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* 57 input bytes make exactly 76 characters: RFC 2045 section 6.8
	 * "no more than 76 characters" per line. */
	for (size_t i = 0; i < len; i += 57) {
		size_t line = len - i < 57 ? len - i : 57;

		for (size_t j = 0; j < line; j += 3)
			b64_chunk(out, p + i + j, line - j < 3 ? line - j : 3);
		ga_buf_puts(out, "\r\n");
	}
}

void ga_mime_qp(struct ga_buf *out, const char *s, size_t len)
{
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char enc[4];
		size_t w;
		bool at_eol = i + 1 == len || s[i + 1] == '\n';

		if (c == '\n') {
			ga_buf_puts(out, "\r\n");
			col = 0;
			continue;
		}
		/* RFC 2045 6.7 rules 2-3: printable ASCII except '=' goes
		 * literally; a space or tab at the end of a line must be
		 * encoded, or transports may strip it.  A leading '.' or
		 * "From " would also be safe here: libcurl dot-stuffs. */
		if ((c >= 33 && c <= 126 && c != '=') ||
		    ((c == ' ' || c == '\t') && !at_eol)) {
			enc[0] = (char)c;
			w = 1;
		} else {
			snprintf(enc, sizeof(enc), "=%02X", c);
			w = 3;
		}
		/* Soft line break (rule 5): at most 76 characters including
		 * the trailing '='. */
		if (col + w > 75) {
			ga_buf_puts(out, "=\r\n");
			col = 0;
		}
		ga_buf_append(out, enc, w);
		col += w;
	}
	if (len && s[len - 1] != '\n')
		ga_buf_puts(out, "\r\n");
}

/* Length of S cut to at most MAX bytes on a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
	size_t i = 0;

	while (i < len) {
		size_t n = ga_utf8_seq_len((const unsigned char *)s + i,
		                           len - i);

		if (n == 0)
			n = 1;
		if (i + n > max)
			break;
		i += n;
	}
	return i;
}

void ga_mime_header_text(struct ga_buf *out, const char *s, size_t max,
                         size_t start)
{
	struct ga_buf clean;
	bool ascii = true;
	size_t len;

	ga_buf_init(&clean);
	/* Control characters (CR and LF above all: a job name carrying
	 * "\r\nBcc: x" must not start a header) become spaces; invalid
	 * UTF-8 becomes U+FFFD so the encoded-words are valid. */
	for (const unsigned char *c = (const unsigned char *)(s ? s : "");
	     *c;) {
		size_t n = ga_utf8_seq_len(c, strlen((const char *)c));

		if (*c < 0x20 || *c == 0x7f) {
			ga_buf_putc(&clean, ' ');
			c++;
		} else if (n == 0) {
			ga_buf_puts(&clean, "\xef\xbf\xbd");
			ascii = false;
			c++;
		} else {
			if (n > 1)
				ascii = false;
			ga_buf_append(&clean, c, n);
			c += n;
		}
	}
	len = clean.data ? utf8_cut(clean.data, clean.len, max) : 0;
	/* "=?" in plain text would read as the start of an encoded-word
	 * (RFC 2047 section 6.1): encode such values too. */
	if (ascii && len && strstr(clean.data, "=?"))
		ascii = false;
	if (ascii) {
		ga_buf_append(out, clean.data ? clean.data : "", len);
	} else {
		/* RFC 2047 section 2: an encoded-word is at most 75
		 * characters; "=?UTF-8?B?" + "?=" is 12, leaving 63 for
		 * base64, i.e. 45 input bytes, cut on character boundaries
		 * (section 5: a word must hold whole characters). */
		size_t i = 0, col = start;

		while (i < len) {
			/* Fill the rest of a 78-character line (RFC 5322
			 * section 2.1.1) without exceeding 75 per word. */
			size_t room = col + 12 + 4 < 78
			                      ? (78 - col - 12) / 4 * 3
			                      : 3;
			size_t n = utf8_cut(clean.data + i, len - i,
			                    room < 45 ? room : 45);
			struct ga_buf w;

			if (n == 0)
				n = ga_utf8_seq_len(
				        (const unsigned char *)clean.data + i,
				        len - i);
			if (n == 0)
				n = 1;
			ga_buf_init(&w);
			for (size_t j = 0; j < n; j += 3)
				b64_chunk(&w,
				          (const unsigned char *)clean.data +
				                  i + j,
				          n - j < 3 ? n - j : 3);
			if (i) {
				ga_buf_puts(out, "\r\n ");
				col = 1;
			}
			ga_buf_puts(out, "=?UTF-8?B?");
			ga_buf_append(out, w.data, w.len);
			ga_buf_puts(out, "?=");
			ga_buf_finish(&w);
			i += n;
			col = 1; /* the next word goes on a folded line */
		}
	}
	ga_buf_finish(&clean);
}

void ga_mime_message_id(const char *job, const char *claim, const char *from,
                        char *out, size_t size)
{
	const char *at = from ? strrchr(from, '@') : NULL;
	char jb[64], dom[128];
	size_t k = 0;

	for (const char *c = job ? job : "0"; *c && k < sizeof(jb) - 1; c++)
		jb[k++] = ((*c >= '0' && *c <= '9') ||
		           (*c >= 'a' && *c <= 'z') ||
		           (*c >= 'A' && *c <= 'Z') || *c == '_')
		                  ? *c
		                  : '-';
	jb[k] = '\0';
	k = 0;
	for (const char *c = at ? at + 1 : "localhost";
	     *c && k < sizeof(dom) - 1; c++)
		if ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= 'A' && *c <= 'Z') || *c == '.' || *c == '-')
			dom[k++] = *c;
	dom[k] = '\0';
	snprintf(out, size, "<gpualert.%s.%016" PRIx64 "@%s>", jb, fnv1a(claim),
	         k ? dom : "localhost");
}

/* ---- the job's story ---- */

struct root {
	const struct ga_report *r;
	const struct ga_task_report *t;
};

static bool task_failed(const struct ga_task_report *t)
{
	return t->verdict.cls != GA_CLASS_SUCCESS ||
	       ga_status_failed(&t->verdict.status);
}

/* Whether task A is a better root cause than B, across the reports of
 * one job: the order ga_report_choose_root applies within one step. */
static bool better_root(const struct ga_task_report *a,
                        const struct ga_task_report *b)
{
	return ga_report_task_precedes(a, b);
}

static struct root find_root(const struct ga_mail *m)
{
	struct root best = {NULL, NULL};

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

static bool is_array(const struct ga_mail *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->array_job_id && *m->reports[i]->array_job_id)
			return true;
	return false;
}

/* The report that speaks for the job: the batch step's, else the first. */
static const struct ga_report *main_report(const struct ga_mail *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->step_id &&
		    !strcmp(m->reports[i]->step_id, "batch"))
			return m->reports[i];
	return m->reports[0];
}

static enum ga_sched_state job_state(const struct ga_mail *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->sched_state != GA_STATE_NONE)
			return m->reports[i]->sched_state;
	return GA_STATE_NONE;
}

static bool report_failed(const struct ga_report *r)
{
	if (r->root_task >= 0 || r->sched_state != GA_STATE_NONE)
		return true;
	for (size_t i = 0; i < r->n_tasks; i++)
		if (task_failed(&r->tasks[i]))
			return true;
	return false;
}

/* User-controlled text for a body: valid UTF-8, no control characters
 * but tab (and newline where ML allows it). */
static void put_text(struct ga_buf *out, const char *s, bool ml)
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

static void put_job_name(struct ga_buf *out, const char *name)
{
	struct ga_buf tmp;

	ga_buf_init(&tmp);
	put_text(&tmp, name && *name ? name : "-", false);
	ga_buf_append(out, tmp.data,
	              tmp.data ? utf8_cut(tmp.data, tmp.len, JOB_NAME_MAX) : 0);
	ga_buf_finish(&tmp);
}

static void put_duration(struct ga_buf *out, int64_t start, int64_t end)
{
	int64_t d;

	if (!start || !end || end < start) {
		ga_buf_puts(out, "unknown");
		return;
	}
	d = end - start;
	if (d >= 3600)
		ga_buf_printf(out, "%" PRId64 "h%02" PRId64 "m%02" PRId64 "s",
		              d / 3600, d / 60 % 60, d % 60);
	else if (d >= 60)
		ga_buf_printf(out, "%" PRId64 "m%02" PRId64 "s", d / 60,
		              d % 60);
	else
		ga_buf_printf(out, "%" PRId64 "s", d);
}

static void put_status(struct ga_buf *out, const struct ga_status *st)
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
}

static void put_size(struct ga_buf *out, uint64_t n)
{
	if (n >= 10 * 1024 * 1024)
		ga_buf_printf(out, "%" PRIu64 " MiB", n >> 20);
	else if (n >= 10 * 1024)
		ga_buf_printf(out, "%" PRIu64 " KiB", n >> 10);
	else
		ga_buf_printf(out, "%" PRIu64 " bytes", n);
}

static void subject(struct ga_buf *s, const struct ga_mail *m,
                    const struct root *root)
{
	const struct ga_report *mr = main_report(m);
	enum ga_sched_state state = job_state(m);
	const char *verb = state != GA_STATE_NONE ? ga_sched_state_name(state)
	                                          : "FAILED";

	if (is_array(m)) {
		size_t failed = 0;

		for (size_t i = 0; i < m->n_reports; i++)
			failed += report_failed(m->reports[i]);
		ga_buf_printf(s, "[gpualert] array job %s (", mr->array_job_id);
		put_job_name(s, mr->job_name);
		ga_buf_printf(s, "): %zu of %zu tasks FAILED", failed,
		              m->n_reports);
		if (root->t)
			ga_buf_printf(s, ", first: %s",
			              ga_class_name(root->t->verdict.cls));
		return;
	}
	ga_buf_printf(s, "[gpualert] job %s (", mr->job_id);
	put_job_name(s, mr->job_name);
	if (!root->t) {
		ga_buf_printf(s, ") %s",
		              state != GA_STATE_NONE ? verb : "COMPLETED");
		return;
	}
	ga_buf_printf(s, ") %s: %s on ", verb,
	              ga_class_name(root->t->verdict.cls));
	put_text(s, root->t->node ? root->t->node : root->r->node, false);
}

/* "3-5,7,9" from sorted ids. */
static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void put_ranges(struct ga_buf *out, long *ids, size_t n)
{
	qsort(ids, n, sizeof(*ids), cmp_long);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && ids[j + 1] <= ids[j] + 1)
			j++;
		ga_buf_printf(out, "%s%ld", i ? "," : "", ids[i]);
		if (ids[j] != ids[i])
			ga_buf_printf(out, "-%ld", ids[j]);
		i = j + 1;
	}
}

/* Everything the body says, built once and written as text and HTML. */
struct line_sink {
	struct ga_buf *txt;
	struct ga_buf *html;
};

/* Write a paragraph: TEXT goes verbatim to text/plain, escaped into HTML
 * wrapped in TAG ("p", "h2", "pre", "li"). */
static void para(struct line_sink *k, const char *tag, struct ga_buf *text)
{
	const char *t = text->data ? text->data : "";

	ga_buf_append(k->txt, t, text->len);
	ga_buf_putc(k->txt, '\n');
	if (!strcmp(tag, "h2"))
		ga_buf_putc(k->txt, '\n'); /* the headline stands alone */
	ga_buf_printf(k->html, "<%s>", tag);
	ga_buf_put_markup(k->html, t, text->len);
	ga_buf_printf(k->html, "</%s>\n", tag);
	ga_buf_reset(text);
}

struct attach_plan {
	const struct ga_mail_file *f;
	bool fits;
	const char *reason;
};

static const char over_budget[] = "over the attachment budget";

static void body(const struct ga_mail *m, const struct root *root,
                 const struct ga_mail_file *tail, bool tail_fits,
                 struct attach_plan *plan, size_t n_plan, struct line_sink *k)
{
	const struct ga_report *mr = main_report(m);
	struct ga_buf t;
	int64_t start = 0, end = 0;
	size_t rows = 0, total_rows = 0;

	ga_buf_init(&t);
	for (size_t i = 0; i < m->n_reports; i++) {
		const struct ga_report *r = m->reports[i];

		if (r->start_time && (!start || r->start_time < start))
			start = r->start_time;
		if (r->end_time > end)
			end = r->end_time;
	}

	/* Headline. */
	subject(&t, m, root);
	memmove(t.data, t.data + 11, t.len - 10); /* drop "[gpualert] " */
	t.len -= 11;
	para(k, "h2", &t);

	if (is_array(m)) {
		size_t counts[GA_CLASS_COUNT] = {0};
		long *ids = calloc(m->n_reports, sizeof(*ids));
		size_t n_ids = 0;

		for (size_t i = 0; i < m->n_reports; i++) {
			const struct ga_report *r = m->reports[i];
			enum ga_class c =
			        r->root_task >= 0 && (size_t)r->root_task <
			                                     r->n_tasks
			                ? r->tasks[r->root_task].verdict.cls
			                : (report_failed(r) ? GA_CLASS_UNKNOWN
			                                    : GA_CLASS_SUCCESS);

			if ((unsigned)c < GA_CLASS_COUNT)
				counts[c]++;
			if (ids && c != GA_CLASS_SUCCESS && r->array_task_id)
				ids[n_ids++] = strtol(r->array_task_id, NULL,
				                      10);
		}
		ga_buf_puts(&t, "Classes of the reported tasks:");
		para(k, "p", &t);
		for (int c = 0; c < GA_CLASS_COUNT; c++) {
			if (!counts[c])
				continue;
			ga_buf_printf(&t, "  %-14s %zu", ga_class_name(c),
			              counts[c]);
			para(k, "pre", &t);
		}
		if (n_ids) {
			ga_buf_puts(&t, "Failing array task ids: ");
			put_ranges(&t, ids, n_ids);
			para(k, "p", &t);
		}
		free(ids);
		if (root->t) {
			ga_buf_printf(&t,
			              "First failure: array task %s, shown "
			              "below.",
			              root->r->array_task_id
			                      ? root->r->array_task_id
			                      : "?");
			para(k, "p", &t);
		}
	}

	if (root->t) {
		const struct ga_verdict *v = &root->t->verdict;

		ga_buf_printf(&t,
		              "Root cause: %s (%s), task %" PRIu32
		              " of step %s on ",
		              ga_class_name(v->cls), ga_class_title(v->cls),
		              root->t->task_id,
		              root->r->step_id ? root->r->step_id : "?");
		put_text(&t, root->t->node ? root->t->node : root->r->node,
		         false);
		para(k, "p", &t);
		if (v->hint) {
			ga_buf_puts(&t, "Hint: ");
			put_text(&t, v->hint, false);
			para(k, "p", &t);
		}
		if (v->n_evidence) {
			ga_buf_puts(&t, "Evidence:");
			para(k, "p", &t);
			for (size_t i = 0; i < v->n_evidence; i++) {
				if (v->evidence[i].line)
					ga_buf_printf(&t,
					              "  line %" PRIu64 ": ",
					              v->evidence[i].line);
				else
					ga_buf_puts(&t, "  ");
				put_text(&t, v->evidence[i].text, false);
				para(k, "pre", &t);
			}
		}
		if (v->n_others) {
			ga_buf_puts(&t, "Also seen:");
			para(k, "p", &t);
			for (size_t i = 0; i < v->n_others; i++) {
				ga_buf_printf(&t, "  %s at line %" PRIu64 ": ",
				              ga_class_name(v->others[i].cls),
				              v->others[i].line);
				put_text(&t, v->others[i].text, false);
				para(k, "pre", &t);
			}
		}
		ga_buf_puts(&t, "Exit: ");
		put_status(&t, &v->status);
		para(k, "p", &t);
	} else if (job_state(m) == GA_STATE_NONE) {
		ga_buf_puts(&t, "No task failed.");
		para(k, "p", &t);
	}
	if (job_state(m) != GA_STATE_NONE) {
		ga_buf_printf(&t, "Scheduler state: %s",
		              ga_sched_state_name(job_state(m)));
		para(k, "p", &t);
	}
	ga_buf_puts(&t, "Runtime: ");
	put_duration(&t, start, end);
	para(k, "p", &t);
	ga_buf_puts(&t, "Nodes: ");
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
				ga_buf_puts(&t, ", ");
			put_text(&t, m->reports[i]->node, false);
		}
	}
	para(k, "p", &t);
	ga_buf_puts(&t, "User: ");
	put_text(&t, mr->user, false);
	ga_buf_puts(&t, ", working directory: ");
	put_text(&t, mr->work_dir, false);
	para(k, "p", &t);
	if (mr->command) {
		ga_buf_puts(&t, "Command: ");
		put_text(&t, mr->command, false);
		para(k, "p", &t);
	}

	/* Per-step, per-task table. */
	for (size_t i = 0; i < m->n_reports; i++)
		total_rows += m->reports[i]->n_tasks;
	if (total_rows > 1 || m->n_reports > 1) {
		ga_buf_puts(&t, "Tasks:");
		para(k, "p", &t);
		ga_buf_printf(&t, "  %-8s %-6s %-12s %-14s %-22s %s",
		              is_array(m) ? "array" : "step", "task", "node",
		              "class", "exit", "runtime");
		para(k, "pre", &t);
		for (size_t i = 0; i < m->n_reports && rows < MAX_TABLE_ROWS;
		     i++) {
			const struct ga_report *r = m->reports[i];

			for (size_t j = 0;
			     j < r->n_tasks && rows < MAX_TABLE_ROWS;
			     j++, rows++) {
				const struct ga_task_report *tk = &r->tasks[j];
				struct ga_buf cell;

				ga_buf_init(&cell);
				put_text(&cell,
				         is_array(m) ? r->array_task_id
				                     : r->step_id,
				         false);
				ga_buf_printf(&t, "  %-8.8s %-6" PRIu32 " ",
				              cell.data ? cell.data : "?",
				              tk->task_id);
				ga_buf_reset(&cell);
				put_text(&cell, tk->node ? tk->node : r->node,
				         false);
				ga_buf_printf(&t, "%-12.12s %-14s ",
				              cell.data ? cell.data : "?",
				              ga_class_name(tk->verdict.cls));
				ga_buf_reset(&cell);
				put_status(&cell, &tk->verdict.status);
				ga_buf_printf(&t, "%-22s ", cell.data);
				ga_buf_finish(&cell);
				put_duration(&t, tk->start_time, tk->end_time);
				if (&r->tasks[j] == root->t)
					ga_buf_puts(&t, "  <- root cause");
				para(k, "pre", &t);
			}
		}
		if (total_rows > rows) {
			ga_buf_printf(&t,
			              "  ... and %zu more tasks (see the "
			              "reports in the logs)",
			              total_rows - rows);
			para(k, "pre", &t);
		}
	}

	/* Where the logs live. */
	{
		size_t shown = 0;

		for (size_t i = 0; i < m->n_reports && shown < 10; i++) {
			const struct ga_report *r = m->reports[i];

			for (size_t j = 0; j < r->n_tasks && shown < 10; j++) {
				const struct ga_task_report *tk = &r->tasks[j];

				if (!tk->log_path)
					continue;
				if (!shown++) {
					ga_buf_puts(&t, "Full logs:");
					para(k, "p", &t);
				}
				ga_buf_printf(&t, "  task %" PRIu32 ": ",
				              tk->task_id);
				put_text(&t, tk->log_path, false);
				para(k, "pre", &t);
			}
		}
	}

	/* Attachments, and everything that is not attached: never dropped
	 * silently. */
	if (tail || n_plan || m->n_skipped) {
		ga_buf_puts(&t, "Attachments:");
		para(k, "p", &t);
	}
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n_plan + (tail ? 1 : 0); i++) {
			const struct ga_mail_file *f = i < n_plan ? plan[i].f
			                                          : tail;
			bool fits = i < n_plan ? plan[i].fits : tail_fits;
			const char *why = i < n_plan ? plan[i].reason
			                             : over_budget;

			if (fits != (pass == 0))
				continue;
			if (fits) {
				ga_buf_puts(&t, "  attached: ");
				put_text(&t, f->filename, false);
				ga_buf_puts(&t, " (");
				put_size(&t, f->len);
				if (f->note) {
					ga_buf_puts(&t, ", ");
					put_text(&t, f->note, false);
					ga_buf_puts(&t, " from ");
					put_size(&t, f->orig_size);
				}
				ga_buf_puts(&t, ")");
			} else {
				ga_buf_puts(&t, "  NOT attached: ");
				put_text(&t,
				         f->origin ? f->origin : f->filename,
				         false);
				ga_buf_puts(&t, " (");
				put_size(&t,
				         f->orig_size ? f->orig_size : f->len);
				ga_buf_puts(&t, "): ");
				put_text(&t, why, false);
				if (why == over_budget)
					ga_buf_printf(&t,
					              " of %" PRIu64 " bytes",
					              m->attach_budget);
			}
			para(k, "pre", &t);
		}
	}
	for (size_t i = 0; i < m->n_skipped; i++) {
		ga_buf_puts(&t, "  NOT attached: ");
		put_text(&t, m->skipped[i].path, false);
		ga_buf_puts(&t, " (");
		put_size(&t, m->skipped[i].size);
		ga_buf_puts(&t, "): ");
		put_text(&t, m->skipped[i].reason, false);
		para(k, "pre", &t);
	}

	ga_buf_printf(&t, "-- \ngpualert %s", GA_VERSION);
	para(k, "p", &t);
	ga_buf_finish(&t);
}

/* Attachment file names go into a quoted parameter (RFC 2045 section
 * 5.1): keep [A-Za-z0-9._-] only, so no quoting or RFC 2231 is needed. */
static void put_filename(struct ga_buf *out, const char *name)
{
	size_t n = 0;

	for (const char *c = name && *name ? name : "file"; *c && n < 100;
	     c++, n++)
		ga_buf_putc(out, ((*c >= 'a' && *c <= 'z') ||
		                  (*c >= 'A' && *c <= 'Z') ||
		                  (*c >= '0' && *c <= '9') || *c == '.' ||
		                  *c == '-' || *c == '_')
		                         ? *c
		                         : '_');
}

static void put_attachment(struct ga_buf *out, const char *boundary,
                           const struct ga_mail_file *f)
{
	const char *ct = f->content_type ? f->content_type
	                                 : "application/octet-stream";

	ga_buf_printf(out, "--%s\r\n", boundary);
	/* CT is ours (a fixed set), never user text. */
	ga_buf_printf(out, "Content-Type: %s; name=\"", ct);
	put_filename(out, f->filename);
	ga_buf_puts(out, "\"\r\nContent-Transfer-Encoding: base64\r\n"
	                 "Content-Disposition: attachment; filename=\"");
	put_filename(out, f->filename);
	ga_buf_puts(out, "\"\r\n\r\n");
	ga_mime_base64(out, f->data, f->len);
}

const char **ga_mime_recipients(const struct ga_mail *m, size_t *n)
{
	const char **v = NULL;
	size_t count = 0, cap = 0;

	*n = 0;
	for (size_t i = 0; i < m->n_reports; i++) {
		const struct ga_report *r = m->reports[i];

		for (size_t j = 0;
		     j < r->n_recipients && j < GA_REPORT_MAX_RECIPIENTS; j++) {
			const char *a = r->recipients[j];
			bool dup = false;

			if (!ga_mime_address_ok(a))
				continue;
			for (size_t k = 0; k < count; k++)
				if (!strcasecmp(v[k], a))
					dup = true;
			if (dup)
				continue;
			if (count == cap) {
				size_t nc = cap ? cap * 2 : 8;
				const char **tmp = realloc(v, nc * sizeof(*v));

				if (!tmp) {
					free(v);
					return NULL;
				}
				v = tmp;
				cap = nc;
			}
			v[count++] = a;
		}
	}
	*n = count;
	return v;
}

static void put_date(struct ga_buf *out, int64_t when)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
	                                   "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
	                                     "May", "Jun", "Jul", "Aug",
	                                     "Sep", "Oct", "Nov", "Dec"};
	time_t t = (time_t)when;
	struct tm tm;

	/* RFC 5322 section 3.3, in UTC so rendering does not depend on
	 * the sender's time zone or locale. */
	gmtime_r(&t, &tm);
	ga_buf_printf(out, "%s, %02d %s %04d %02d:%02d:%02d +0000",
	              days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
	              tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int ga_mime_render(const struct ga_mail *m, struct ga_buf *out)
{
	const char **rcpt = NULL;
	size_t n_rcpt = 0, n_plan = m->n_files;
	struct root root;
	struct ga_mail_file tail = {0};
	bool have_tail = false;
	struct attach_plan *plan = NULL;
	struct ga_buf subj, txt, html, tailname;
	struct line_sink k = {&txt, &html};
	char bmix[64], balt[64];
	uint64_t used = 0, h;
	int rc = 0;

	if (!m->n_reports || !m->reports[0])
		return -EINVAL;
	rcpt = ga_mime_recipients(m, &n_rcpt);
	if (!n_rcpt) {
		free(rcpt);
		return -EINVAL;
	}
	ga_buf_init(&subj);
	ga_buf_init(&txt);
	ga_buf_init(&html);
	ga_buf_init(&tailname);
	root = find_root(m);

	/* Budget: the root's log tail first (it is what the user reads),
	 * then the files in the order given. */
	if (root.t && root.t->verdict.tail && *root.t->verdict.tail) {
		ga_buf_printf(&tailname, "tail-%s.%s.%" PRIu32 ".txt",
		              root.r->job_id ? root.r->job_id : "job",
		              root.r->step_id ? root.r->step_id : "0",
		              root.t->task_id);
		tail.filename = tailname.data;
		tail.origin = root.t->log_path;
		tail.content_type = "text/plain; charset=utf-8";
		tail.data = root.t->verdict.tail;
		tail.len = strlen(root.t->verdict.tail);
		tail.orig_size = tail.len;
		if (tail.len <= m->attach_budget) {
			have_tail = true;
			used += tail.len;
		}
	}
	if (n_plan) {
		plan = calloc(n_plan, sizeof(*plan));
		if (!plan) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n_plan; i++) {
		const struct ga_mail_file *f = &m->files[i];

		plan[i].f = f;
		if (!f->data) {
			plan[i].reason = f->note ? f->note : "not readable";
		} else if (used + f->len > m->attach_budget) {
			plan[i].reason = over_budget;
		} else {
			plan[i].fits = true;
			used += f->len;
		}
	}

	subject(&subj, m, &root);
	body(m, &root, tail.data ? &tail : NULL, have_tail, plan, n_plan, &k);

	/* Boundaries derived from the Message-ID: deterministic, and
	 * starting with "=_", which neither quoted-printable nor base64
	 * output can contain (RFC 2045 section 6.7 note, RFC 2046 section
	 * 5.1.1: a boundary must not occur in the encapsulated parts). */
	h = fnv1a(m->message_id);
	snprintf(bmix, sizeof(bmix), "=_gpualert_%016" PRIx64 "_mixed", h);
	snprintf(balt, sizeof(balt), "=_gpualert_%016" PRIx64 "_alt", h);

	ga_buf_puts(out, "From: gpualert <");
	ga_buf_puts(out, m->from); /* validated by the caller's config */
	ga_buf_puts(out, ">\r\nTo: ");
	for (size_t i = 0; i < n_rcpt; i++)
		ga_buf_printf(out, "%s%s", i ? ",\r\n " : "", rcpt[i]);
	ga_buf_puts(out, "\r\nSubject: ");
	ga_mime_header_text(out, subj.data, 400, 9);
	ga_buf_puts(out, "\r\nDate: ");
	put_date(out, m->date);
	ga_buf_printf(out, "\r\nMessage-ID: %s\r\n", m->message_id);
	/* RFC 3834: tell vacation responders not to answer. */
	ga_buf_puts(out, "Auto-Submitted: auto-generated\r\n");
	ga_buf_puts(out, "X-Gpualert-Job: ");
	ga_mime_header_text(out,
	                    is_array(m) ? main_report(m)->array_job_id
	                                : main_report(m)->job_id,
	                    64, 16);
	ga_buf_puts(out, "\r\nMIME-Version: 1.0\r\n");
	ga_buf_printf(out,
	              "Content-Type: multipart/mixed;\r\n boundary=\"%s\"\r\n"
	              "\r\nThis is a MIME message.\r\n\r\n",
	              bmix);
	ga_buf_printf(out,
	              "--%s\r\nContent-Type: multipart/alternative;\r\n"
	              " boundary=\"%s\"\r\n\r\n",
	              bmix, balt);
	ga_buf_printf(out,
	              "--%s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	              "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
	              balt);
	ga_mime_qp(out, txt.data ? txt.data : "", txt.len);
	ga_buf_printf(out,
	              "--%s\r\nContent-Type: text/html; charset=utf-8\r\n"
	              "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
	              balt);
	{
		struct ga_buf doc;

		ga_buf_init(&doc);
		/* A viewport and a readable font size: it is read on
		 * phones.  <pre> blocks wrap instead of scrolling. */
		ga_buf_puts(
		        &doc,
		        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
		        "<meta name=\"viewport\" content=\"width=device-width\">\n"
		        "<style>body{font-family:sans-serif;font-size:15px}"
		        "pre{white-space:pre-wrap;margin:0;font-size:13px}"
		        "</style></head><body>\n");
		ga_buf_append(&doc, html.data ? html.data : "", html.len);
		ga_buf_puts(&doc, "</body></html>\n");
		ga_mime_qp(out, doc.data, doc.len);
		ga_buf_finish(&doc);
	}
	ga_buf_printf(out, "--%s--\r\n\r\n", balt);
	if (have_tail)
		put_attachment(out, bmix, &tail);
	for (size_t i = 0; i < n_plan; i++)
		if (plan[i].fits)
			put_attachment(out, bmix, plan[i].f);
	ga_buf_printf(out, "--%s--\r\n", bmix);
	if (out->failed || subj.failed || txt.failed || html.failed)
		rc = -ENOMEM;
out:
	free(plan);
	free(rcpt);
	ga_buf_finish(&subj);
	ga_buf_finish(&txt);
	ga_buf_finish(&html);
	ga_buf_finish(&tailname);
	return rc;
}

int ga_mime_webhook_json(const struct ga_mail *m, struct ga_buf *out)
{
	const struct ga_report *mr;
	struct ga_buf text;
	struct root root;
	int first = 1;

	if (!m->n_reports || !m->reports[0])
		return -EINVAL;
	mr = main_report(m);
	root = find_root(m);
	ga_buf_init(&text);
	subject(&text, m, &root);
	if (root.t && root.t->verdict.hint) {
		ga_buf_puts(&text, "\nHint: ");
		put_text(&text, root.t->verdict.hint, false);
	}
	if (root.t && root.t->verdict.n_evidence) {
		const struct ga_evidence *e = &root.t->verdict.evidence[0];

		ga_buf_printf(&text, "\nline %" PRIu64 ": ", e->line);
		put_text(&text, e->text, false);
	}
	ga_buf_putc(out, '{');
	ga_json_key(out, &first, "text");
	ga_json_string(out, text.data ? text.data : "", text.len);
	ga_json_key(out, &first, "gpualert");
	{
		int f2 = 1;

		ga_buf_putc(out, '{');
		ga_json_key(out, &f2, "job_id");
		ga_json_str(out, is_array(m) ? mr->array_job_id : mr->job_id);
		ga_json_key(out, &f2, "job_name");
		ga_json_str(out, mr->job_name);
		ga_json_key(out, &f2, "user");
		ga_json_str(out, mr->user);
		ga_json_key(out, &f2, "class");
		ga_json_str(out, root.t ? ga_class_name(root.t->verdict.cls)
		                        : "success");
		ga_json_key(out, &f2, "node");
		ga_json_str(out, root.t ? (root.t->node ? root.t->node
		                                        : root.r->node)
		                        : mr->node);
		ga_json_key(out, &f2, "scheduler_state");
		ga_json_str(out, job_state(m) != GA_STATE_NONE
		                         ? ga_sched_state_name(job_state(m))
		                         : NULL);
		ga_json_key(out, &f2, "reports");
		ga_buf_printf(out, "%zu", m->n_reports);
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, '}');
	ga_buf_finish(&text);
	return out->failed ? -ENOMEM : 0;
}
