/* SPDX-License-Identifier: MIT */
/* The message: recipients, headers, the multipart structure and the
 * attachments; the body is mime_body.c's, the encoders mime_encode.c's. */
#include "mime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mime_private.h"
#include "util.h"

static void subject(struct ga_buf *s, const struct ga_mail *m,
                    const struct ga_mime_root *root)
{
	if (m->subject_prefix && *m->subject_prefix) {
		ga_mime_put_text(s, m->subject_prefix, false);
		ga_buf_putc(s, ' ');
	}
	if (ga_mime_is_array(m)) {
		ga_mime_job_label(s, m);
		ga_buf_puts(s, ": ");
		ga_mime_headline(s, m, root);
	} else {
		ga_mime_headline(s, m, root);
		ga_buf_puts(s, " - ");
		ga_mime_job_label(s, m);
	}
}

/* Attachment file names (RFC 2183 section 2.3): an ASCII fallback in a
 * quoted parameter, [A-Za-z0-9._-] only, and the real name, when it
 * differs, as an RFC 2231 extended parameter (filename*=utf-8''...). */
static bool name_plain(const char *name)
{
	for (const char *c = name; *c; c++)
		if (!ga_char_safe(*c, "._-"))
			return false;
	return *name != '\0';
}

static void put_filename(struct ga_buf *out, const char *name)
{
	char safe[101];

	ga_safe_copy(safe, sizeof(safe), ga_str_or(name, "file"), "._-", '_');
	ga_buf_puts(out, safe);
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
		bool lit = ga_char_safe((char)c, "._-");

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
	struct ga_mime_root root;
	struct attach_plan *plan = NULL;
	struct ga_buf subj, txt, html;
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
	root = ga_mime_find_root(m);

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
			    !strcmp(ga_str_or(plan[j].f->filename, ""),
			            ga_str_or(f->filename, "")))
				dup = true;
		if (dup)
			continue;
		plan[i].f = f;
		if (!f->data) {
			plan[i].reason = f->note ? f->note : "not readable";
		} else if (used + f->len > m->attach_budget) {
			plan[i].reason = ga_mime_over_budget;
		} else {
			plan[i].fits = true;
			used += f->len;
		}
	}

	subject(&subj, m, &root);
	ga_mime_body(m, &root, plan, n_plan, &txt, &html);

	/* Boundaries derived from the Message-ID: deterministic, and
	 * starting with "=_", which neither quoted-printable nor base64
	 * output can contain (RFC 2045 section 6.7 note, RFC 2046 section
	 * 5.1.1: a boundary must not occur in the encapsulated parts). */
	h = ga_fnv1a_str(GA_FNV1A_INIT, m->message_id);
	snprintf(bmix, sizeof(bmix), "=_gpualert_%016" PRIx64 "_mixed", h);
	snprintf(balt, sizeof(balt), "=_gpualert_%016" PRIx64 "_alt", h);

	ga_buf_puts(out, "From: ");
	put_display_name(out, ga_str_or(m->from_name, "gpualert"));
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
	ga_mime_header_text(
	        out,
	        ga_str_or(ga_mime_is_array(m)
	                          ? ga_mime_main_report(m)->array_job_id
	                          : ga_mime_main_report(m)->job_id,
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
	struct ga_mime_root root;

	if (!m->n_reports || !m->reports[0])
		return;
	root = ga_mime_find_root(m);
	subject(out, m, &root);
}

int ga_mime_summary(const struct ga_mail *m, struct ga_mail_summary *s)
{
	const struct ga_report *mr;
	struct ga_mime_root root;
	const char *state;
	int rank;

	memset(s, 0, sizeof(*s));
	if (!m->n_reports || !m->reports[0])
		return -EINVAL;
	mr = ga_mime_main_report(m);
	root = ga_mime_find_root(m);
	rank = ga_mime_job_state(m, &state);
	s->state = state;
	s->failed = rank > ST_COMPLETED;
	s->finding = root.t && root.t->verdict.cls != GA_CLASS_SUCCESS;
	s->job_id = ga_str_or(
	        ga_mime_is_array(m) ? mr->array_job_id : mr->job_id, "?");
	s->job_name = mr->job_name;
	s->user = mr->user;
	s->cls = root.t ? root.t->verdict.cls : GA_CLASS_SUCCESS;
	s->node = root.t ? ga_str_or(root.t->node, root.r->node) : mr->node;
	s->hint = root.t ? root.t->verdict.hint : NULL;
	s->evidence = root.t && root.t->verdict.n_evidence
	                      ? &root.t->verdict.evidence[0]
	                      : NULL;
	s->n_reports = m->n_reports;
	if (ga_mime_is_array(m)) {
		s->failed = false;
		for (size_t i = 0; i < m->n_reports; i++)
			s->failed |= ga_mime_report_state(m->reports[i],
			                                  &state) >
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
