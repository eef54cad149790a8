/* SPDX-License-Identifier: MIT */
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
		/* Fold before a space when the line would pass 78 characters
		 * (RFC 5322 section 2.2.3: the space starts the next line). */
		size_t col = start, i = 0;

		while (i < len) {
			size_t w = 1;

			while (i + w < len && clean.data[i + w] != ' ')
				w++;
			if (i && clean.data[i] == ' ' && col + w > 78) {
				ga_buf_puts(out, "\r\n");
				col = 0;
			}
			ga_buf_append(out, clean.data + i, w);
			col += w;
			i += w;
		}
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

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* The job id as the user knows it: JOB, or ARRAY_TASK (%A_%a). */
static void put_job_id(struct ga_buf *out, const struct ga_report *r)
{
	if (r->array_job_id && *r->array_job_id)
		ga_buf_printf(out, "%s_%s", r->array_job_id,
		              str_or(r->array_task_id, "?"));
	else
		ga_buf_puts(out, str_or(r->job_id, "?"));
}

/* Slurm's state for a report, as sacct shows it (SLURM-independent
 * reconstruction): the scheduler's verdict when there was one, then
 * OUT_OF_MEMORY when the cgroup killed a task (slurmstepd sets it even
 * when the batch script survived and exited 0), then FAILED for a
 * non-zero exit or a signal, else COMPLETED.  The rank orders them. */
enum { ST_COMPLETED = 0, ST_FAILED, ST_OOM, ST_SCHED };

static int report_state(const struct ga_report *r, const char **name)
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
static int job_state(const struct ga_mail *m, const char **name)
{
	bool batch = false;
	int best = -1;

	for (size_t i = 0; i < m->n_reports; i++)
		batch |= is_batch(m->reports[i]);
	*name = "COMPLETED";
	for (size_t i = 0; i < m->n_reports; i++) {
		const char *n;
		int rank = report_state(m->reports[i], &n);

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
	put_text(&tmp, str_or(name, "-"), false);
	ga_buf_append(out, tmp.data,
	              tmp.data ? utf8_cut(tmp.data, tmp.len, JOB_NAME_MAX) : 0);
	ga_buf_finish(&tmp);
}

/* Evidence text: whole, with an ellipsis when the classifier cut it. */
static void put_evidence(struct ga_buf *out, const char *s)
{
	put_text(out, s, false);
	if (s && strlen(s) >= GA_EVIDENCE_TEXT_MAX)
		ga_buf_puts(out, " \xe2\x80\xa6");
}

static void put_span(struct ga_buf *out, int64_t d)
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

static void put_duration(struct ga_buf *out, int64_t start, int64_t end)
{
	if (!start || !end || end < start) {
		ga_buf_puts(out, "unknown");
		return;
	}
	put_span(out, end - start);
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
	if (st->oom_kills > 0)
		ga_buf_printf(out, ", %d oom-kill%s", st->oom_kills,
		              st->oom_kills == 1 ? "" : "s");
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

/* Memory in the unit people request it in: "16.0 GiB", "512 MiB". */
static void put_mem(struct ga_buf *out, uint64_t n)
{
	if (n >= UINT64_C(1) << 30)
		ga_buf_printf(out, "%.1f GiB", (double)n / (1 << 30));
	else
		ga_buf_printf(out, "%" PRIu64 " MiB", (n + (1 << 19)) >> 20);
}

/* The job's run: earliest start to latest end of its reports. */
static void job_span(const struct ga_mail *m, int64_t *start, int64_t *end)
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
		size_t n = utf8_cut(tmp.data, tmp.len, max);

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
static void headline(struct ga_buf *s, const struct ga_mail *m,
                     const struct root *root)
{
	const char *state;
	int rank;

	if (is_array(m)) {
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
				if (!strcmp(str_or(m->reports[j]->array_task_id,
				                   "?"),
				            str_or(r->array_task_id, "?")))
					seen = true;
			if (seen)
				continue;
			n_tasks++;
			for (size_t j = i; j < m->n_reports; j++) {
				const struct ga_report *q = m->reports[j];
				const char *n;
				int rk;

				if (strcmp(str_or(q->array_task_id, "?"),
				           str_or(r->array_task_id, "?")))
					continue;
				rk = report_state(q, &n);
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
	rank = job_state(m, &state);
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

		job_span(m, &start, &end);
		if (start && end >= start) {
			ga_buf_puts(s, " after ");
			put_span(s, end - start);
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
		put_text(s, str_or(root->t->node, str_or(root->r->node, "?")),
		         false);
	}
}

/* "array 13 (sweep)" or "job 1234 (train)". */
static void job_label(struct ga_buf *s, const struct ga_mail *m)
{
	const struct ga_report *mr = main_report(m);

	if (is_array(m))
		ga_buf_printf(s, "array %s (", str_or(mr->array_job_id, "?"));
	else
		ga_buf_printf(s, "job %s (", str_or(mr->job_id, "?"));
	put_job_name(s, mr->job_name);
	ga_buf_putc(s, ')');
}

static void subject(struct ga_buf *s, const struct ga_mail *m,
                    const struct root *root)
{
	if (m->subject_prefix && *m->subject_prefix) {
		put_text(s, m->subject_prefix, false);
		ga_buf_putc(s, ' ');
	}
	if (is_array(m)) {
		job_label(s, m);
		ga_buf_puts(s, ": ");
		headline(s, m, root);
	} else {
		headline(s, m, root);
		ga_buf_puts(s, " - ");
		job_label(s, m);
	}
}

/* "3-5,7,9" from sorted ids. */
static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* ---- the body: one model, written as text and as HTML ---- */

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

/* A paragraph of T (reset after). */
static void par(struct sink *k, struct ga_buf *t)
{
	facts_end(k);
	ga_buf_append(k->txt, t->data ? t->data : "", t->len);
	ga_buf_putc(k->txt, '\n');
	ga_buf_puts(k->html, "<p style=\"margin:4px 0\">");
	html_text(k, t);
	ga_buf_puts(k->html, "</p>\n");
	ga_buf_reset(t);
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

struct attach_plan {
	const struct ga_mail_file *f;
	bool fits;
	const char *reason;
};

static const char over_budget[] = "over the attachment budget";

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

static void facts(const struct ga_mail *m, const struct root *root,
                  struct sink *k, struct ga_buf *t)
{
	const struct ga_report *mr = main_report(m);
	const struct ga_report *rr = root->r ? root->r : mr;
	int64_t start, end;
	uint64_t peak = 0;

	job_span(m, &start, &end);
	if (!is_array(m))
		put_job_id(t, mr);
	else if (root->r)
		put_job_id(t, root->r); /* the failing task, as %A_%a */
	else
		ga_buf_printf(t, "array %s", str_or(mr->array_job_id, "?"));
	ga_buf_puts(t, " (");
	put_job_name(t, mr->job_name);
	ga_buf_puts(t, "), user ");
	put_text(t, str_or(mr->user, "?"), false);
	fact(k, "Job", t);
	if (root->t || !is_array(m)) {
		const struct ga_task_report *tk =
		        root->t ? root->t
		                : (mr->n_tasks ? &mr->tasks[0] : NULL);

		if (tk) {
			put_status(t, &tk->verdict.status);
			if (mr->n_tasks > 1 || m->n_reports > 1)
				ga_buf_printf(t, " (task %" PRIu32 ")",
				              tk->task_id);
			fact(k, "Exit", t);
		}
	}
	put_duration(t, start, end);
	if (rr->time_limit > 0) {
		ga_buf_puts(t, " of ");
		put_span(t, rr->time_limit);
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
			put_mem(t, peak);
		} else {
			ga_buf_puts(t, "peak unknown");
		}
		if (rr->mem_request) {
			ga_buf_puts(t, " of ");
			put_mem(t, rr->mem_request);
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
		put_text(t, *rr->gres ? rr->gres : "none", false);
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
			put_text(t, m->reports[i]->node, false);
		}
		if (shown)
			fact(k, shown > 1 ? "Nodes" : "Node", t);
	}
	if (rr->script) {
		put_text(t, rr->script, false);
		fact(k, "Script", t);
	}
	/* slurmd runs a batch job from its own copy of the script
	 * (.../job<N>/slurm_script, deleted after the job): it says nothing
	 * the reader can use, the submitted path above does. */
	if (rr->command && !strstr(rr->command, "/slurm_script")) {
		put_text(t, rr->command, false);
		fact(k, "Command", t);
	}
	if (rr->work_dir) {
		put_text(t, rr->work_dir, false);
		fact(k, "Directory", t);
	}
	facts_end(k);
}

/* The numbers behind a resource failure, next to the hint: what was asked
 * for and what was used ("requested 16.0 GiB, peaked at 16.0 GiB"). */
static void resource_note(const struct ga_mail *m, const struct root *root,
                          enum ga_class cls, struct sink *k, struct ga_buf *t)
{
	const struct ga_report *rr = root->r;
	int64_t start, end;
	uint64_t peak = 0;

	job_span(m, &start, &end);
	for (size_t i = 0; i < m->n_reports; i++)
		if (m->reports[i]->mem_peak > peak)
			peak = m->reports[i]->mem_peak;
	if (cls == GA_CLASS_HOST_OOM && rr->mem_request && peak) {
		ga_buf_puts(t, "The job requested ");
		put_mem(t, rr->mem_request);
		ga_buf_puts(t, rr->mem_per_cpu ? " per CPU" : "");
		ga_buf_puts(t, " and its memory peaked at ");
		put_mem(t, peak);
		ga_buf_puts(t, " on this node.");
		par(k, t);
	} else if (cls == GA_CLASS_TIME_LIMIT && rr->time_limit > 0 && start &&
	           end >= start) {
		ga_buf_puts(t, "It ran ");
		put_span(t, end - start);
		ga_buf_puts(t, " of its ");
		put_span(t, rr->time_limit);
		ga_buf_puts(t, " limit.");
		par(k, t);
	}
}

static void body(const struct ga_mail *m, const struct root *root,
                 struct attach_plan *plan, size_t n_plan, struct sink *k)
{
	const struct ga_report *mr = main_report(m);
	struct ga_buf t;
	size_t rows = 0, total_rows = 0;
	const char *state;
	int rank = job_state(m, &state);

	ga_buf_init(&t);

	/* The status bar: the state word in a coloured block, so failure
	 * and success differ at a glance; with CSS off it is plain text. */
	if (is_array(m)) {
		bool bad = false;

		for (size_t i = 0; i < m->n_reports; i++) {
			const char *n;

			bad |= report_state(m->reports[i], &n) > ST_COMPLETED;
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
	              is_array(m) ? "ARRAY " : "", state);
	headline(&t, m, root);
	ga_buf_append(k->txt, t.data ? t.data : "", t.len);
	ga_buf_puts(k->txt, "\n");
	ga_buf_puts(k->html, "<h2 style=\"font-size:18px;margin:10px 0 6px\">");
	html_text(k, &t);
	ga_buf_puts(k->html, "</h2>\n");
	ga_buf_reset(&t);
	job_label(&t, m);
	par(k, &t);

	if (is_array(m)) {
		long *ids = calloc(m->n_reports, sizeof(*ids));
		size_t n_ids = 0;

		for (size_t i = 0; i < m->n_reports; i++) {
			const struct ga_report *r = m->reports[i];
			const char *n;
			bool dup = false;

			if (!ids || !r->array_task_id ||
			    (report_state(r, &n) == ST_COMPLETED &&
			     r->root_task < 0))
				continue;
			for (size_t j = 0; j < n_ids; j++)
				dup |= ids[j] ==
				       strtol(r->array_task_id, NULL, 10);
			if (!dup)
				ids[n_ids++] = strtol(r->array_task_id, NULL,
				                      10);
		}
		if (n_ids) {
			qsort(ids, n_ids, sizeof(*ids), cmp_long);
			for (size_t i = 0; i < n_ids && i < 50; i++)
				ga_buf_printf(&t, "%s%s_%ld", i ? ", " : "",
				              str_or(mr->array_job_id, "?"),
				              ids[i]);
			if (n_ids > 50)
				ga_buf_printf(&t, ", ... (%zu in all)", n_ids);
			sec(k, "Failing array tasks");
			par(k, &t);
		}
		free(ids);
	}

	if (root->t) {
		const struct ga_verdict *v = &root->t->verdict;

		sec(k, "What happened");
		{
			const char *title = ga_class_title(v->cls);

			/* Titles are phrases ("stopped at the time
			 * limit"): a sentence starts with a capital. */
			if (title && *title >= 'a' && *title <= 'z') {
				ga_buf_putc(&t, (char)(*title - 'a' + 'A'));
				title++;
			}
			ga_buf_printf(&t, "%s (%s): task %" PRIu32 " of ",
			              title ? title : "", ga_class_name(v->cls),
			              root->t->task_id);
		}
		if (is_array(m)) {
			put_job_id(&t, root->r);
			ga_buf_putc(&t, ' ');
		}
		ga_buf_printf(&t, "step %s on ", str_or(root->r->step_id, "?"));
		put_text(&t, str_or(root->t->node, str_or(root->r->node, "?")),
		         false);
		ga_buf_puts(&t, ".");
		par(k, &t);
		if (v->hint) {
			sec(k, "What to do");
			put_text(&t, v->hint, false);
			par(k, &t);
		}
		resource_note(m, root, v->cls, k, &t);
		if (v->n_evidence) {
			sec(k, "Evidence");
			for (size_t i = 0; i < v->n_evidence; i++) {
				if (v->evidence[i].line)
					ga_buf_printf(&t, "line %" PRIu64 ": ",
					              v->evidence[i].line);
				put_evidence(&t, v->evidence[i].text);
				ga_buf_putc(&t, '\n');
			}
			pre(k, &t);
		}
		if (v->n_others) {
			sec(k, "Also seen");
			for (size_t i = 0; i < v->n_others; i++) {
				ga_buf_printf(&t, "%s at line %" PRIu64 ": ",
				              ga_class_name(v->others[i].cls),
				              v->others[i].line);
				put_evidence(&t, v->others[i].text);
				ga_buf_putc(&t, '\n');
			}
			pre(k, &t);
		}
		if (v->tail && *v->tail) {
			size_t skipped;
			const char *p = last_lines(v->tail, TAIL_INLINE,
			                           &skipped);
			char title[128];

			snprintf(title, sizeof(title),
			         "Last output of task %" PRIu32 "%s",
			         root->t->task_id,
			         skipped ? " (last 20 lines)" : "");
			sec(k, title);
			put_text(&t, p, true);
			pre(k, &t);
		}
	} else if (rank == ST_COMPLETED) {
		sec(k, "What happened");
		ga_buf_puts(&t, "No task failed, and nothing in the output "
		                "looked wrong.");
		par(k, &t);
	}

	sec(k, "Facts");
	facts(m, root, k, &t);

	/* Per-step, per-task table. */
	for (size_t i = 0; i < m->n_reports; i++)
		total_rows += m->reports[i]->n_tasks;
	if (total_rows > 1 || m->n_reports > 1) {
		sec(k, "Tasks");
		ga_buf_printf(&t, "%-10s %-5s %-10s %-13s %s\n",
		              is_array(m) ? "job" : "step", "task", "node",
		              "class", "exit");
		for (size_t i = 0; i < m->n_reports && rows < MAX_TABLE_ROWS;
		     i++) {
			const struct ga_report *r = m->reports[i];

			for (size_t j = 0;
			     j < r->n_tasks && rows < MAX_TABLE_ROWS;
			     j++, rows++) {
				const struct ga_task_report *tk = &r->tasks[j];
				struct ga_buf cell;

				ga_buf_init(&cell);
				if (is_array(m))
					put_job_id(&cell, r);
				else
					put_text(&cell, str_or(r->step_id, "?"),
					         false);
				ga_buf_printf(&t, "%-10.10s %-5" PRIu32 " ",
				              cell.data ? cell.data : "?",
				              tk->task_id);
				ga_buf_reset(&cell);
				put_text(&cell, str_or(tk->node, r->node),
				         false);
				ga_buf_printf(&t, "%-10.10s %-13s ",
				              cell.data ? cell.data : "?",
				              ga_class_name(tk->verdict.cls));
				ga_buf_reset(&cell);
				put_status(&cell, &tk->verdict.status);
				ga_buf_printf(&t, "%s",
				              cell.data ? cell.data : "?");
				ga_buf_finish(&cell);
				if (&r->tasks[j] == root->t)
					ga_buf_puts(&t, "  <- root cause");
				ga_buf_putc(&t, '\n');
			}
		}
		if (total_rows > rows)
			ga_buf_printf(&t, "... and %zu more tasks\n",
			              total_rows - rows);
		pre(k, &t);
	}

	/* Where the logs live: JOB.STEP.TASK, as the user names them. */
	{
		size_t shown = 0;

		for (size_t i = 0; i < m->n_reports && shown < 10; i++) {
			const struct ga_report *r = m->reports[i];

			for (size_t j = 0; j < r->n_tasks && shown < 10; j++) {
				const struct ga_task_report *tk = &r->tasks[j];

				if (!tk->log_path)
					continue;
				shown++;
				put_job_id(&t, r);
				ga_buf_printf(&t, ".%s task %" PRIu32 ": ",
				              str_or(r->step_id, "?"),
				              tk->task_id);
				put_text(&t, tk->log_path, false);
				ga_buf_putc(&t, '\n');
			}
		}
		if (shown) {
			sec(k, "Full logs");
			pre(k, &t);
		}
	}

	/* Attachments, and everything that is not attached: never dropped
	 * silently. */
	if (n_plan || m->n_skipped) {
		for (size_t pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < n_plan; i++) {
				const struct ga_mail_file *f = plan[i].f;

				if (!f || plan[i].fits != (pass == 0))
					continue;
				if (plan[i].fits) {
					ga_buf_puts(&t, "attached: ");
					put_text(&t, f->filename, false);
					ga_buf_puts(&t, " (");
					put_size(&t, f->len);
					if (f->note) {
						ga_buf_puts(&t, ", ");
						put_text(&t, f->note, false);
						ga_buf_puts(&t, " from ");
						put_size(&t, f->orig_size);
					}
					ga_buf_puts(&t, ")\n");
				} else {
					ga_buf_puts(&t, "NOT attached: ");
					put_text(&t,
					         str_or(f->origin, f->filename),
					         false);
					ga_buf_puts(&t, " (");
					put_size(&t, f->orig_size ? f->orig_size
					                          : f->len);
					ga_buf_puts(&t, "): ");
					put_text(&t, plan[i].reason, false);
					if (plan[i].reason == over_budget)
						ga_buf_printf(&t,
						              " of %" PRIu64
						              " bytes",
						              m->attach_budget);
					ga_buf_putc(&t, '\n');
				}
			}
		}
		for (size_t i = 0; i < m->n_skipped; i++) {
			ga_buf_puts(&t, "NOT attached: ");
			put_text(&t, m->skipped[i].path, false);
			ga_buf_puts(&t, " (");
			put_size(&t, m->skipped[i].size);
			ga_buf_puts(&t, "): ");
			put_text(&t, m->skipped[i].reason, false);
			ga_buf_putc(&t, '\n');
		}
		if (t.len) {
			sec(k, "Attachments");
			pre(k, &t);
		}
	}

	/* Footer: the site's words and help link, then who sent it. */
	ga_buf_puts(k->txt, "\n-- \n");
	ga_buf_puts(k->html, "<hr style=\"border:0;border-top:1px solid "
	                     "#e4e4e7;margin:16px 0 8px\">\n"
	                     "<p style=\"margin:0;color:#71717a;"
	                     "font-size:12px\">");
	if (m->footer && *m->footer) {
		put_text(&t, m->footer, false);
		ga_buf_append(k->txt, t.data, t.len);
		ga_buf_putc(k->txt, '\n');
		html_text(k, &t);
		ga_buf_puts(k->html, "<br>\n");
		ga_buf_reset(&t);
	}
	if (m->help_url && *m->help_url) {
		put_text(&t, m->help_url, false);
		ga_buf_puts(k->txt, "Help: ");
		ga_buf_append(k->txt, t.data, t.len);
		ga_buf_putc(k->txt, '\n');
		ga_buf_puts(k->html, "Help: <a href=\"");
		html_text(k, &t);
		ga_buf_puts(k->html, "\">");
		html_text(k, &t);
		ga_buf_puts(k->html, "</a><br>\n");
		ga_buf_reset(&t);
	}
	ga_buf_printf(k->txt, "gpualert %s\n", GA_VERSION);
	ga_buf_printf(k->html, "gpualert %s</p>\n</div>\n", GA_VERSION);
	ga_buf_finish(&t);
}

/* Attachment file names (RFC 2183 section 2.3): an ASCII fallback in a
 * quoted parameter, [A-Za-z0-9._-] only, and the real name, when it
 * differs, as an RFC 2231 extended parameter (filename*=utf-8''...). */
static bool name_plain(const char *name)
{
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' ||
		      *c == '_'))
			return false;
	return *name != '\0';
}

static void put_filename(struct ga_buf *out, const char *name)
{
	size_t n = 0;

	for (const char *c = str_or(name, "file"); *c && n < 100; c++, n++)
		ga_buf_putc(out, ((*c >= 'a' && *c <= 'z') ||
		                  (*c >= 'A' && *c <= 'Z') ||
		                  (*c >= '0' && *c <= '9') || *c == '.' ||
		                  *c == '-' || *c == '_')
		                         ? *c
		                         : '_');
}

/* ";\r\n filename*=utf-8''%xx..." folded with RFC 2231 continuations
 * (section 3) so no line passes 78 characters. */
static void put_filename_2231(struct ga_buf *out, const char *param,
                              const char *name)
{
	struct ga_buf clean;
	size_t col = 0, part = 0;

	ga_buf_init(&clean);
	ga_utf8_sanitize(&clean, name, strlen(name));
	for (size_t i = 0; i < clean.len && i < 255; i++) {
		unsigned char c = (unsigned char)clean.data[i];
		bool lit = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		           (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		           c == '_';

		if (col == 0 || col > 60) {
			ga_buf_printf(out, ";\r\n %s*%zu*=%s", param, part,
			              part ? "" : "utf-8''");
			col = strlen(param) + 12;
			part++;
		}
		if (lit) {
			ga_buf_putc(out, (char)c);
			col++;
		} else {
			ga_buf_printf(out, "%%%02X", c);
			col += 3;
		}
	}
	ga_buf_finish(&clean);
}

/* The name the user knows: the collected file's own name (ORIGIN's last
 * component) when the spool's sanitised FILENAME was made from it. */
static const char *real_name(const struct ga_mail_file *f)
{
	const char *base;
	struct ga_buf a;
	bool same;

	if (!f->origin || !f->filename)
		return f->filename;
	base = strrchr(f->origin, '/');
	base = base ? base + 1 : f->origin;
	ga_buf_init(&a);
	put_filename(&a, base);
	same = a.data && !strcmp(a.data, f->filename);
	ga_buf_finish(&a);
	return same ? base : f->filename;
}

static void put_attachment(struct ga_buf *out, const char *boundary,
                           const struct ga_mail_file *f)
{
	const char *ct = f->content_type ? f->content_type
	                                 : "application/octet-stream";
	const char *name = real_name(f);

	ga_buf_printf(out, "--%s\r\n", boundary);
	/* CT is ours (a fixed set), never user text. */
	ga_buf_printf(out, "Content-Type: %s;\r\n name=\"", ct);
	put_filename(out, f->filename);
	ga_buf_puts(out, "\"\r\nContent-Transfer-Encoding: base64\r\n"
	                 "Content-Disposition: attachment;\r\n filename=\"");
	put_filename(out, f->filename);
	ga_buf_putc(out, '"');
	if (name && !name_plain(name))
		put_filename_2231(out, "filename", name);
	ga_buf_puts(out, "\r\n\r\n");
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

/* The From: display name (RFC 5322 section 3.4): a quoted-string when it
 * is printable ASCII, else RFC 2047 encoded-words (section 5 (3) allows
 * them in a phrase). */
static void put_display_name(struct ga_buf *out, const char *name)
{
	bool plain = true;

	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			plain = false;
	if (!plain || strstr(name, "=?")) {
		ga_mime_header_text(out, name, 64, 6);
		return;
	}
	ga_buf_putc(out, '"');
	for (const char *c = name; *c && c - name < 64; c++) {
		if (*c == '"' || *c == '\\')
			ga_buf_putc(out, '\\');
		ga_buf_putc(out, *c);
	}
	ga_buf_putc(out, '"');
}

int ga_mime_render(const struct ga_mail *m, struct ga_buf *out)
{
	const char **rcpt = NULL;
	size_t n_rcpt = 0, n_plan = m->n_files;
	struct root root;
	struct attach_plan *plan = NULL;
	struct ga_buf subj, txt, html;
	struct sink k = {&txt, &html, false};
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
	root = find_root(m);

	/* Budget: the files in the order given (full logs first).  The
	 * root task's last lines are in the body, so the tail is no longer
	 * attached: it would repeat the body and the full log.  A file that
	 * repeats an earlier one (same name and size) is not attached
	 * twice. */
	if (n_plan) {
		plan = calloc(n_plan, sizeof(*plan));
		if (!plan) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n_plan; i++) {
		const struct ga_mail_file *f = &m->files[i];
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			if (plan[j].f && plan[j].f->len == f->len &&
			    !strcmp(str_or(plan[j].f->filename, ""),
			            str_or(f->filename, "")))
				dup = true;
		if (dup)
			continue;
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
	body(m, &root, plan, n_plan, &k);

	/* Boundaries derived from the Message-ID: deterministic, and
	 * starting with "=_", which neither quoted-printable nor base64
	 * output can contain (RFC 2045 section 6.7 note, RFC 2046 section
	 * 5.1.1: a boundary must not occur in the encapsulated parts). */
	h = fnv1a(m->message_id);
	snprintf(bmix, sizeof(bmix), "=_gpualert_%016" PRIx64 "_mixed", h);
	snprintf(balt, sizeof(balt), "=_gpualert_%016" PRIx64 "_alt", h);

	ga_buf_puts(out, "From: ");
	put_display_name(out, str_or(m->from_name, "gpualert"));
	ga_buf_puts(out, " <");
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
	                    str_or(is_array(m) ? main_report(m)->array_job_id
	                                       : main_report(m)->job_id,
	                           "?"),
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
		/* Inline CSS only, no images.  The viewport makes phones
		 * lay it out at their own width; the outer block carries
		 * overflow-wrap (inherited) so no word widens the page. */
		ga_buf_puts(&doc,
		            "<!DOCTYPE html>\n<html><head>"
		            "<meta charset=\"utf-8\">\n"
		            "<meta name=\"viewport\" "
		            "content=\"width=device-width, initial-scale=1\">\n"
		            "<title>");
		ga_buf_put_markup(&doc, subj.data ? subj.data : "", subj.len);
		ga_buf_puts(
		        &doc,
		        "</title></head>\n"
		        "<body style=\"margin:0;padding:0;"
		        "background:#ffffff\">\n"
		        "<div style=\"max-width:720px;margin:0 auto;"
		        "font-family:-apple-system,'Segoe UI',Roboto,"
		        "Helvetica,Arial,sans-serif;font-size:15px;"
		        "line-height:1.45;color:#18181b;"
		        "overflow-wrap:anywhere;word-break:break-word\">\n");
		ga_buf_append(&doc, html.data ? html.data : "", html.len);
		ga_buf_puts(&doc, "</div>\n</body></html>\n");
		ga_mime_qp(out, doc.data, doc.len);
		ga_buf_finish(&doc);
	}
	ga_buf_printf(out, "--%s--\r\n\r\n", balt);
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
	return rc;
}

void ga_mime_subject(const struct ga_mail *m, struct ga_buf *out)
{
	struct root root;

	if (!m->n_reports || !m->reports[0])
		return;
	root = find_root(m);
	subject(out, m, &root);
}

int ga_mime_summary(const struct ga_mail *m, struct ga_mail_summary *s)
{
	const struct ga_report *mr;
	struct root root;
	const char *state;
	int rank;

	memset(s, 0, sizeof(*s));
	if (!m->n_reports || !m->reports[0])
		return -EINVAL;
	mr = main_report(m);
	root = find_root(m);
	rank = job_state(m, &state);
	s->state = state;
	s->failed = rank > ST_COMPLETED;
	s->finding = root.t && root.t->verdict.cls != GA_CLASS_SUCCESS;
	s->job_id = str_or(is_array(m) ? mr->array_job_id : mr->job_id, "?");
	s->job_name = mr->job_name;
	s->user = mr->user;
	s->cls = root.t ? root.t->verdict.cls : GA_CLASS_SUCCESS;
	s->node = root.t ? str_or(root.t->node, root.r->node) : mr->node;
	s->hint = root.t ? root.t->verdict.hint : NULL;
	s->evidence = root.t && root.t->verdict.n_evidence
	                      ? &root.t->verdict.evidence[0]
	                      : NULL;
	s->n_reports = m->n_reports;
	if (is_array(m)) {
		s->failed = false;
		for (size_t i = 0; i < m->n_reports; i++)
			s->failed |= report_state(m->reports[i], &state) >
			             ST_COMPLETED;
	}
	return 0;
}

bool ga_mime_wanted(const struct ga_mail *m)
{
	bool fail_only = m->n_reports > 0;
	struct ga_mail_summary s;

	/* Every step must have asked for failures only: one step asking for
	 * always is enough to send. */
	for (size_t i = 0; i < m->n_reports; i++)
		if (!m->reports[i]->notify ||
		    strcmp(m->reports[i]->notify, "fail"))
			fail_only = false;
	if (!fail_only || ga_mime_summary(m, &s) < 0)
		return true;
	return s.failed || s.finding;
}
