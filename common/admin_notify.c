/* SPDX-License-Identifier: MIT */
#include "admin_notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "smtp.h"
#include "stats.h"
#include "webhook.h"
#include "xid.h"

#define MAX_ENTRIES 1024
#define MAX_JOBS 20
#define TEXT_MAX 512

struct entry {
	char node[GA_STATS_FIELD_MAX];
	char bus[GA_BUS_ID_LEN + 2];
	int64_t last_sent;
	char fault[32]; /* "xid48", "sxid24007" */
	char jobs[MAX_JOBS * 24];
	unsigned n_jobs, more_jobs;
	char text[TEXT_MAX];
};

struct state {
	struct entry *e;
	size_t n;
};

/* Only characters that are safe in a header, a path and a log line. */
static void safe(char *out, size_t size, const char *v, bool text)
{
	size_t n = 0;

	for (; v && *v && n + 1 < size; v++) {
		unsigned char c = (unsigned char)*v;

		if (text)
			out[n++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
		else
			out[n++] = (c >= 'a' && c <= 'z') ||
			                           (c >= 'A' && c <= 'Z') ||
			                           (c >= '0' && c <= '9') ||
			                           strchr("._:-", c)
			                   ? (char)c
			                   : '_';
	}
	out[n] = '\0';
	if (!n && !text)
		snprintf(out, size, "-");
}

static void state_path(const char *spool, char *out, size_t size,
                       const char *suffix)
{
	snprintf(out, size, "%s/admin.state%s", spool, suffix);
}

static void state_load(const char *spool, struct state *st)
{
	char path[4096], line[2048];
	FILE *f;

	memset(st, 0, sizeof(*st));
	st->e = calloc(MAX_ENTRIES, sizeof(*st->e));
	if (!st->e)
		return;
	state_path(spool, path, sizeof(path), "");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && st->n < MAX_ENTRIES) {
		struct entry *e = &st->e[st->n];
		char *fld[7], *p = line;
		int k = 0;

		line[strcspn(line, "\n")] = '\0';
		for (; k < 7 && p; k++) {
			fld[k] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		if (k != 7)
			continue;
		safe(e->node, sizeof(e->node), fld[0], false);
		safe(e->bus, sizeof(e->bus), fld[1], false);
		e->last_sent = strtoll(fld[2], NULL, 10);
		safe(e->fault, sizeof(e->fault), fld[3], false);
		safe(e->jobs, sizeof(e->jobs),
		     strcmp(fld[4], "-") ? fld[4] : "", true);
		e->n_jobs = 0;
		if (e->jobs[0]) {
			e->n_jobs = 1;
			for (char *c = e->jobs; *c; c++)
				e->n_jobs += *c == ',';
		}
		e->more_jobs = (unsigned)strtoul(fld[5], NULL, 10);
		safe(e->text, sizeof(e->text), fld[6], true);
		st->n++;
	}
	fclose(f);
}

static int state_save(const char *spool, const struct state *st)
{
	char path[4096], tmp[4096];
	FILE *f;
	int rc = 0;

	state_path(spool, path, sizeof(path), "");
	state_path(spool, tmp, sizeof(tmp), ".tmp");
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < st->n; i++) {
		const struct entry *e = &st->e[i];

		fprintf(f, "%s\t%s\t%lld\t%s\t%s\t%u\t%s\n", e->node, e->bus,
		        (long long)e->last_sent, e->fault,
		        e->jobs[0] ? e->jobs : "-", e->more_jobs, e->text);
	}
	if (fflush(f) || fsync(fileno(f)))
		rc = -errno;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	return rc;
}

static struct entry *find(struct state *st, const char *node, const char *bus)
{
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->e[i].node, node) && !strcmp(st->e[i].bus, bus))
			return &st->e[i];
	if (!st->e || st->n >= MAX_ENTRIES)
		return NULL;
	memset(&st->e[st->n], 0, sizeof(st->e[0]));
	snprintf(st->e[st->n].node, sizeof(st->e[0].node), "%s", node);
	snprintf(st->e[st->n].bus, sizeof(st->e[0].bus), "%s", bus);
	return &st->e[st->n++];
}

static void add_job(struct entry *e, const char *job)
{
	char j[24];

	safe(j, sizeof(j), job, false);
	/* The same job (two steps, two tasks) is one job. */
	for (const char *p = e->jobs; *p;) {
		size_t n = strcspn(p, ",");

		if (n == strlen(j) && !strncmp(p, j, n))
			return;
		p += n + (p[n] == ',');
	}
	if (e->n_jobs >= MAX_JOBS) {
		e->more_jobs++;
		return;
	}
	if (e->jobs[0])
		strncat(e->jobs, ",", sizeof(e->jobs) - strlen(e->jobs) - 1);
	strncat(e->jobs, j, sizeof(e->jobs) - strlen(e->jobs) - 1);
	e->n_jobs++;
}

static void describe(const struct entry *e, struct ga_buf *b)
{
	bool sxid = !strncmp(e->fault, "sxid", 4);
	unsigned code = (unsigned)strtoul(e->fault + (sxid ? 4 : 3), NULL, 10);
	const struct ga_xid_info *info = ga_xid_lookup(code, sxid);

	ga_buf_printf(b, "Node:       %s\n", e->node);
	ga_buf_printf(b, "GPU:        %s\n",
	              strcmp(e->bus, "-") ? e->bus : "(not named)");
	ga_buf_printf(b, "Fault:      %s %u: %s\n", sxid ? "SXid" : "Xid", code,
	              info ? info->title : "NVIDIA driver fault");
	ga_buf_printf(b, "Kernel log: %s\n", e->text);
	ga_buf_printf(b, "Jobs:       %s", e->jobs);
	if (e->more_jobs)
		ga_buf_printf(b, " and %u more", e->more_jobs);
	ga_buf_printf(b, "\nAction:     %s\n",
	              info && info->action ? info->action
	                                   : "check the GPU (nvidia-smi -q, "
	                                     "field diagnostics)");
}

static void crlf(const char *s, struct ga_buf *out)
{
	for (; *s; s++) {
		if (*s == '\n')
			ga_buf_putc(out, '\r');
		ga_buf_putc(out, *s);
	}
}

static enum ga_send_result send_mail(const struct ga_config *cfg,
                                     const struct entry *e, int64_t now,
                                     char *err, size_t err_size)
{
	const char *rcpt[1] = {cfg->admin_mail};
	struct ga_buf body, msg;
	char date[64], from[256], to[256], id_bus[sizeof(e->bus)];
	struct tm tm;
	time_t t = (time_t)now;
	enum ga_send_result res;

	/* ':' is not allowed in a Message-ID's left part (RFC 5322 atext). */
	snprintf(id_bus, sizeof(id_bus), "%s", e->bus);
	for (char *c = id_bus; *c; c++)
		if (*c == ':')
			*c = '-';
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	safe(from, sizeof(from), cfg->mail_from, true);
	safe(to, sizeof(to), cfg->admin_mail, true);
	ga_buf_init(&body);
	ga_buf_init(&msg);
	ga_buf_printf(&msg,
	              "From: %s\nTo: %s\nDate: %s\n"
	              "Message-ID: <gpualert.admin.%lld.%s.%s@gpualert>\n"
	              "Subject: [gpualert] GPU fault on %s, GPU %s: %s %s\n"
	              "MIME-Version: 1.0\n"
	              "Content-Type: text/plain; charset=utf-8\n"
	              "Content-Transfer-Encoding: 8bit\n"
	              "Auto-Submitted: auto-generated\n\n",
	              from, to, date, (long long)now, e->node, id_bus, e->node,
	              e->bus, strncmp(e->fault, "sxid", 4) ? "Xid" : "SXid",
	              e->fault + strspn(e->fault, "sxid"));
	ga_buf_puts(&body, "gpualert found a GPU hardware fault in the kernel "
	                   "log of a node, during jobs that failed:\n\n");
	describe(e, &body);
	ga_buf_puts(&body, "\nThe users of these jobs were told that the GPU, "
	                   "not their code, failed.\n");
	ga_buf_puts(&msg, body.data);
	ga_buf_finish(&body);
	ga_buf_init(&body);
	crlf(msg.data, &body);
	res = ga_smtp_send(cfg, rcpt, 1, body.data, body.len, err, err_size);
	ga_buf_finish(&body);
	ga_buf_finish(&msg);
	return res;
}

static enum ga_send_result send_webhook(const struct ga_config *cfg,
                                        const struct entry *e, char *err,
                                        size_t err_size)
{
	struct ga_buf text, json;
	enum ga_send_result res;

	ga_buf_init(&text);
	ga_buf_init(&json);
	ga_buf_puts(&text, "gpualert: GPU hardware fault\n");
	describe(e, &text);
	ga_buf_puts(&json, "{\"text\":");
	ga_json_str(&json, text.data);
	ga_buf_puts(&json, "}");
	res = ga_webhook_post(cfg, cfg->admin_webhook, "application/json", NULL,
	                      json.data, json.len, err, err_size);
	ga_buf_finish(&text);
	ga_buf_finish(&json);
	return res;
}

static int flush(const struct ga_config *cfg, const char *spool,
                 struct state *st, int64_t now)
{
	int delivered = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct entry *e = &st->e[i];
		char err[512] = "";
		enum ga_send_result r1 = GA_SEND_OK, r2 = GA_SEND_OK;

		if (!e->jobs[0] ||
		    (e->last_sent && now - e->last_sent < cfg->admin_period_s))
			continue;
		if (cfg->admin_mail[0])
			r1 = send_mail(cfg, e, now, err, sizeof(err));
		if (cfg->admin_webhook[0] && r1 == GA_SEND_OK)
			r2 = send_webhook(cfg, e, err, sizeof(err));
		if (r1 == GA_SEND_RETRY || r2 == GA_SEND_RETRY) {
			ga_log(GA_LOG_WARN,
			       "gpualert: send: admin message about %s GPU %s: "
			       "%s; retried at the next pass",
			       e->node, e->bus, err);
			continue;
		}
		if (r1 == GA_SEND_FAIL || r2 == GA_SEND_FAIL)
			ga_log(GA_LOG_ERROR,
			       "gpualert: send: admin message about %s GPU %s "
			       "refused: %s; dropped",
			       e->node, e->bus, err);
		else {
			ga_log(GA_LOG_INFO,
			       "gpualert: send: admin told about %s GPU %s (%s, "
			       "jobs %s)",
			       e->node, e->bus, e->fault, e->jobs);
			delivered++;
		}
		e->last_sent = now;
		e->jobs[0] = '\0';
		e->n_jobs = e->more_jobs = 0;
	}
	if (state_save(spool, st) < 0)
		ga_log(GA_LOG_ERROR,
		       "gpualert: send: cannot write %s/admin.state: %s", spool,
		       strerror(errno));
	return delivered;
}

static bool admin_configured(const struct ga_config *cfg)
{
	return cfg->admin_mail[0] || cfg->admin_webhook[0];
}

int ga_admin_observe(const struct ga_config *cfg, const char *spool,
                     const struct ga_report *const *reports, size_t n,
                     int64_t now)
{
	struct state st;
	bool changed = false;
	int delivered = 0;

	for (size_t i = 0; i < n; i++) {
		struct ga_stats_record rec;

		ga_stats_from_report(reports[i], now, &rec);
		if (ga_stats_append(spool, &rec) < 0)
			ga_log(GA_LOG_ERROR,
			       "gpualert: send: cannot append to "
			       "%s/stats.log: %s",
			       spool, strerror(errno));
	}
	if (!admin_configured(cfg))
		return 0;
	state_load(spool, &st);
	for (size_t i = 0; i < n; i++) {
		const struct ga_report *r = reports[i];

		if (ga_report_class(r) != GA_CLASS_GPU_HW)
			continue;
		for (size_t k = 0; k < r->n_kernel; k++) {
			const struct ga_report_kernel *l = &r->kernel[k];
			char node[GA_STATS_FIELD_MAX], bus[GA_BUS_ID_LEN + 2];
			struct entry *e;

			if (!l->kind || strcmp(l->kind, "hardware"))
				continue;
			safe(node, sizeof(node), r->node, false);
			safe(bus, sizeof(bus), l->bus_id, false);
			e = find(&st, node, bus);
			if (!e)
				continue;
			snprintf(e->fault, sizeof(e->fault), "%s%u",
			         l->sxid ? "sxid" : "xid", l->xid);
			safe(e->text, sizeof(e->text), l->text, true);
			add_job(e, r->job_id);
			changed = true;
		}
	}
	if (changed)
		delivered = flush(cfg, spool, &st, now);
	free(st.e);
	return delivered;
}

int ga_admin_flush(const struct ga_config *cfg, const char *spool, int64_t now)
{
	struct state st;
	bool pending = false;
	int delivered = 0;

	if (!admin_configured(cfg))
		return 0;
	state_load(spool, &st);
	for (size_t i = 0; i < st.n; i++)
		pending |= st.e[i].jobs[0] != '\0';
	if (pending)
		delivered = flush(cfg, spool, &st, now);
	free(st.e);
	return delivered;
}
