/* SPDX-License-Identifier: MIT */
/* MIME rendering: header injection, RFC 2047 words, base64 and
 * quoted-printable line lengths, addresses, the budget listing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "chat.h"
#include "mime.h"
#include "report.h"
#include "tap.h"

static size_t max_line(const char *s)
{
	size_t max = 0, cur = 0;

	for (; *s; s++) {
		if (*s == '\r' && s[1] == '\n') {
			if (cur > max)
				max = cur;
			cur = 0;
			s++;
		} else {
			cur++;
		}
	}
	return cur > max ? cur : max;
}

static bool bare_cr_or_lf(const char *s)
{
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\r' && s[i + 1] != '\n')
			return true;
		if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
			return true;
	}
	return false;
}

static void add_task(struct ga_report *r, const char *tail)
{
	struct ga_task_report *t = ga_report_add_task(r);

	t->task_id = 0;
	ga_report_put(&t->node, "node01");
	t->verdict.cls = GA_CLASS_CUDA_OOM;
	t->verdict.status.known = true;
	t->verdict.status.exit_code = 1;
	ga_report_put(&t->verdict.hint, "Reduce the batch size.");
	ga_report_put(&t->verdict.tail, tail);
	r->root_task = 0;
}

int main(void)
{
	struct ga_buf b;
	struct ga_report r;
	const struct ga_report *rp = &r;
	struct ga_mail m;
	char mid[200], *big;
	struct ga_mail_file big_log = {
	        "big.log", "/w/big.log", NULL, "0123456789", 10, 10, NULL};
	size_t n;

	/* Unstructured header values. */
	ga_buf_init(&b);
	ga_mime_header_text(&b, "x\r\nBcc: evil@x", 200, 9);
	ok(!strchr(b.data, '\r') && !strchr(b.data, '\n') &&
	           !strcmp(b.data, "x  Bcc: evil@x"),
	   "CR/LF become spaces: '%s'", b.data);
	ga_buf_reset(&b);
	ga_mime_header_text(
	        &b, "тренировка модели ñandú тренировка модели ñandú", 400, 9);
	ok(!strncmp(b.data, "=?UTF-8?B?", 10), "non-ASCII: RFC 2047 encoded");
	{
		/* Every word at most 75 characters, lines folded with CRLF SP. */
		char *save = NULL, *copy = strdup(b.data);
		bool short_words = true;
		int words = 0;

		for (char *w = strtok_r(copy, " \r\n", &save); w;
		     w = strtok_r(NULL, " \r\n", &save), words++)
			if (strlen(w) > 75 || strncmp(w, "=?UTF-8?B?", 10))
				short_words = false;
		ok(short_words && words >= 2, "%d encoded-words, each <= 75",
		   words);
		ok(!bare_cr_or_lf(b.data) && max_line(b.data) <= 78,
		   "folded lines <= 78");
		free(copy);
	}
	ga_buf_reset(&b);
	ga_mime_header_text(&b, "bad \xff utf8", 100, 9);
	ok(!strncmp(b.data, "=?UTF-8?B?", 10),
	   "invalid UTF-8 replaced and encoded");
	ga_buf_reset(&b);
	ga_mime_header_text(&b, "looks =?like?B?an?= encoded word", 100, 9);
	ok(!strncmp(b.data, "=?UTF-8?B?", 10),
	   "'=?' in plain text gets encoded");
	ga_buf_reset(&b);
	ga_mime_header_text(&b, "ééééééééééééééééééééééééééééééééééééééé", 21,
	                    9);
	ok(strlen(b.data) < 60, "cut on a character boundary at the limit");

	/* base64 */
	big = malloc(10000);
	for (int i = 0; i < 10000; i++)
		big[i] = (char)(i * 7);
	ga_buf_reset(&b);
	ga_mime_base64(&b, big, 10000);
	ok(max_line(b.data) == 76 && !bare_cr_or_lf(b.data),
	   "base64 lines of 76, CRLF");
	ok(b.len == (10000 + 2) / 3 * 4 + 2 * ((10000 + 56) / 57),
	   "base64 length");
	ga_buf_reset(&b);
	ga_mime_base64(&b, "ab", 2);
	ok(!strcmp(b.data, "YWI=\r\n"), "padding");

	/* quoted-printable */
	ga_buf_reset(&b);
	memset(big, 'x', 500);
	big[500] = '\0';
	ga_mime_qp(&b, big, 500);
	ok(max_line(b.data) <= 76, "QP soft breaks at 76");
	ga_buf_reset(&b);
	ga_mime_qp(&b, "trailing \nend=\xc3\xa9\n", 16);
	ok(!strcmp(b.data, "trailing=20\r\nend=3D=C3=A9\r\n"),
	   "QP: trailing space, '=', UTF-8");
	free(big);

	/* addresses */
	ok(ga_mime_address_ok("alice@example.org"), "plain address");
	ok(!ga_mime_address_ok("a b@x"), "space");
	ok(!ga_mime_address_ok("<a@x>"), "angle brackets");
	ok(!ga_mime_address_ok("a@x\r\nRCPT TO:<b@y>"), "CRLF");
	ok(!ga_mime_address_ok("a@x,b@y"), "comma");
	ok(!ga_mime_address_ok("nodomain"), "no @");
	ok(!ga_mime_address_ok("a@@x") && !ga_mime_address_ok("@x") &&
	           !ga_mime_address_ok("a@"),
	   "malformed");

	ga_mime_message_id("1234", "1234.00ff", "gpualert@hpc.example.org", mid,
	                   sizeof(mid));
	ok(!strncmp(mid, "<gpualert.1234.", 15) &&
	           strstr(mid, "@hpc.example.org>"),
	   "Message-ID %s", mid);
	{
		char mid2[200];

		ga_mime_message_id("1234", "1234.00ff",
		                   "gpualert@hpc.example.org", mid2,
		                   sizeof(mid2));
		ok(!strcmp(mid, mid2), "Message-ID stable");
		ga_mime_message_id("1234", "1234.00fe", "x@hpc.example.org",
		                   mid2, sizeof(mid2));
		ok(strcmp(mid, mid2), "differs with the claim");
	}

	/* Whole message: injection in the job name, bad recipients dropped,
	 * budget listing. */
	ga_report_init(&r);
	ga_report_put(&r.job_id, "42");
	ga_report_put(&r.step_id, "batch");
	ga_report_put(&r.job_name, "x\r\nBcc: evil@x");
	ga_report_put(&r.node, "node01");
	ok(ga_report_add_recipient(&r, "bob@example.org") == 0,
	   "recipient added");
	ok(ga_report_add_recipient(&r, "eve@x\r\nBcc: y@z") == 0,
	   "recipient added");
	add_task(&r, "last line\n");
	memset(&m, 0, sizeof(m));
	m.reports = &rp;
	m.n_reports = 1;
	m.from = "gpualert@example.org";
	m.message_id = mid;
	m.date = 0;
	m.attach_budget = 4; /* the log (10 bytes) does not fit */
	m.files = &big_log;
	m.n_files = 1;
	ga_buf_reset(&b);
	ok(ga_mime_render(&m, &b) == 0, "render");
	{
		char *end = strstr(b.data, "\r\n\r\n");

		*end = '\0';
		ok(!strstr(b.data, "\r\nBcc:") && !bare_cr_or_lf(b.data),
		   "no injected header");
		ok(strstr(b.data, "To: bob@example.org\r\n") != NULL,
		   "only the valid recipient");
		*end = '\r';
	}
	ok(strstr(b.data, "NOT attached") && strstr(b.data, "budget"),
	   "the log that does not fit is listed");
	ok(strstr(b.data, "last line") != NULL, "the tail is in the body");
	ok(!strstr(b.data, "tail-42"), "the tail is not attached");
	ok(!bare_cr_or_lf(b.data), "CRLF throughout");
	{
		const char **rc = ga_mime_recipients(&m, &n);

		ok(n == 1, "one envelope recipient");
		free(rc);
	}
	ga_report_finish(&r);
	ga_report_init(&r);
	ga_report_put(&r.job_id, "43");
	add_task(&r, "x\n");
	ga_buf_reset(&b);
	ok(ga_mime_render(&m, &b) == -22, "no valid recipient: -EINVAL");
	ga_report_finish(&r);

	/* The subject leads with Slurm's state: a NaN after exit 0 is
	 * COMPLETED, never FAILED. */
	ga_report_init(&r);
	ga_report_put(&r.job_id, "44");
	ga_report_put(&r.step_id, "batch");
	ok(ga_report_add_recipient(&r, "bob@example.org") == 0,
	   "recipient added");
	add_task(&r, "loss nan\n");
	r.tasks[0].verdict.cls = GA_CLASS_NAN;
	r.tasks[0].verdict.status.exit_code = 0;
	m.files = NULL;
	m.n_files = 0;
	m.subject_prefix = "[hpc]";
	ga_buf_reset(&b);
	ga_mime_subject(&m, &b);
	ok(b.data && !strcmp(b.data, "[hpc] COMPLETED, but training "
	                             "diverged (nan) - job 44 (-)"),
	   "NaN after exit 0: %s", b.data);
	ok(ga_mime_wanted(&m), "notify unset: wanted");
	ga_report_put(&r.notify, "fail");
	ok(ga_mime_wanted(&m), "fail-only, but a finding: wanted");
	r.tasks[0].verdict.cls = GA_CLASS_SUCCESS;
	r.root_task = -1;
	ok(!ga_mime_wanted(&m), "fail-only and a clean success: not wanted");
	r.tasks[0].verdict.status.exit_code = 3;
	ok(ga_mime_wanted(&m), "fail-only and exit 3: wanted");
	ga_buf_reset(&b);
	ga_mime_subject(&m, &b);
	ok(b.data && !strncmp(b.data, "[hpc] FAILED - job 44", 21),
	   "exit 3, no class: %s", b.data);

	/* A failed srun step inside a batch script that exits 0: Slurm
	 * says COMPLETED for the job, so does the subject. */
	{
		struct ga_report step;
		const struct ga_report *two[2] = {&step, &r};

		ga_report_init(&step);
		ga_report_put(&step.job_id, "44");
		ga_report_put(&step.step_id, "0");
		add_task(&step, "oom\n");
		r.tasks[0].verdict.status.exit_code = 0;
		m.reports = two;
		m.n_reports = 2;
		ga_buf_reset(&b);
		ga_mime_subject(&m, &b);
		ok(b.data && !strncmp(b.data, "[hpc] COMPLETED, but GPU memory",
		                      31),
		   "failed step, batch exit 0: %s", b.data);
		step.tasks[0].verdict.status.oom_kills = 1;
		ga_buf_reset(&b);
		ga_mime_subject(&m, &b);
		ok(b.data && !strncmp(b.data, "[hpc] OUT_OF_MEMORY", 19),
		   "an oom-kill in any step: %s", b.data);
		m.reports = &rp;
		m.n_reports = 1;
		r.tasks[0].verdict.status.exit_code = 3;
		ga_report_finish(&step);
	}

	/* Chat payloads: a job name cannot ping a channel or hide a link. */
	{
		char title[100];

		ga_report_put(&r.job_name, "<!channel> & <https://x|y> @here");
		ga_buf_reset(&b);
		ok(ga_chat_payload(&m, GA_CHAT_SLACK, &b, title,
		                   sizeof(title)) == 0,
		   "Slack payload");
		{
			/* Only "text" is displayed; "gpualert" is data. */
			char *data = strstr(b.data, ",\"gpualert\":");

			if (data)
				*data = '\0';
		}
		ok(strstr(b.data, "&lt;!channel&gt; &amp; "
		                  "&lt;https://x|y&gt; @\xe2\x81\xa0here") &&
		           !strstr(b.data, "<!channel>") &&
		           !strstr(b.data, "<https"),
		   "Slack: &, <, > escaped, @here broken");
		ga_buf_reset(&b);
		ok(ga_chat_payload(&m, GA_CHAT_TEAMS, &b, title,
		                   sizeof(title)) == 0 &&
		           strstr(b.data, "AdaptiveCard") &&
		           strstr(b.data, "\\\\[hpc\\\\]"),
		   "Teams: Adaptive Card, Markdown escaped");
		ga_buf_reset(&b);
		ok(ga_chat_payload(&m, GA_CHAT_NTFY, &b, title,
		                   sizeof(title)) == 0 &&
		           !strncmp(title, "[hpc] FAILED", 12) &&
		           !strchr(title, '\n'),
		   "ntfy: one-line ASCII title: %s", title);
		ga_report_put(&r.job_name, NULL);
	}

	/* An array report with no array task id never prints "(null)". */
	ga_report_put(&r.array_job_id, "45");
	ga_buf_reset(&b);
	ok(ga_mime_render(&m, &b) == 0 && !strstr(b.data, "(null)"),
	   "no (null) in an array message");
	ga_report_finish(&r);

	/* RFC 2231 for a file name outside [A-Za-z0-9._-]. */
	ga_report_init(&r);
	ga_report_put(&r.job_id, "46");
	ok(ga_report_add_recipient(&r, "bob@example.org") == 0,
	   "recipient added");
	add_task(&r, "x\n");
	{
		struct ga_mail_file f = {"r\xc3\xa9sultats 1.csv",
		                         "/w/x",
		                         "text/csv",
		                         "a,b\n",
		                         4,
		                         4,
		                         NULL};

		m.files = &f;
		m.n_files = 1;
		m.attach_budget = 100;
		ga_buf_reset(&b);
		ok(ga_mime_render(&m, &b) == 0 &&
		           strstr(b.data, "filename=\"r__sultats_1.csv\"") &&
		           strstr(b.data,
		                  "filename*0*=utf-8''r%C3%A9sultats%201.csv"),
		   "RFC 2231 file name with an ASCII fallback");
		m.files = NULL;
		m.n_files = 0;
	}
	ga_report_finish(&r);
	ga_buf_finish(&b);
	return tap_done();
}
