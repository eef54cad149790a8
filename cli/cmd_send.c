/* SPDX-License-Identifier: MIT */
/* gpualert send: deliver the spooled reports (README.md, "Delivery").
 *
 * One pass: claim the jobs whose reports are complete (new/ -> out/),
 * render each claim's message once (out/CLAIM/message.eml, so a re-send
 * after a crash is byte-identical, Message-ID included), deliver what is
 * due, and move each claim to sent.log (accepted), back to waiting
 * (transient failure, exponential backoff) or dead/ (permanent failure or
 * older than max_age).  --once runs one pass; otherwise passes repeat,
 * woken by inotify on new/ or by the next due retry, until SIGTERM.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin_notify.h"
#include "artifacts.h"
#include "artifacts_load.h"
#include "buf.h"
#include "chat.h"
#include "cli.h"
#include "clock.h"
#include "config.h"
#include "fdio.h"
#include "ga-config.h"
#include "log.h"
#include "mime.h"
#include "ratelimit.h"
#include "report.h"
#include "smtp.h"
#include "spool.h"
#include "spool_queue.h"
#include "webhook.h"

#define MAX_REPORTS_PER_CLAIM 10000
#define MAX_BACKOFF_S (6 * 3600)
#define RECONCILE_S 300

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = sig;
}

struct sender {
	struct ga_config cfg;
	const char *dir;
	struct ga_rate *rate;
	bool flush; /* --now: every waiting job is complete */
	unsigned sent, retried, dead, logged;
	int64_t next_wake;  /* earliest next_try of a waiting claim */
	int64_t reconciled; /* last ga_spool_reconcile */
	unsigned removed_at_reconcile; /* sent + dead then */
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert send [--once] [--now] [--config FILE] [--spool DIR]\n"
	        "                     [--set SECTION.KEY=VALUE]... [--interval S]\n"
	        "       gpualert send --render JOB | --test ADDR [--config FILE]\n"
	        "                     [--spool DIR] [--set SECTION.KEY=VALUE]...\n\n"
	        "Deliver the reports waiting in the spool by mail ([mail]) or to the\n"
	        "webhook ([webhook]): one message per job, retried with backoff,\n"
	        "dead-lettered on a permanent failure.  Without --once, runs until\n"
	        "SIGTERM, woken by new reports.\n\n"
	        "  --once         one pass, then exit (for cron)\n"
	        "  --now          treat every waiting job as complete (no quiet period)\n"
	        "  --config FILE  default $GPUALERT_CONFIG, else " GA_DEFAULT_CONFIG
	        "\n"
	        "  --spool DIR    override [general] spool_dir\n"
	        "  --set K=V      override one setting (e.g. mail.smtp_url=smtp://...)\n"
	        "  --interval S   longest sleep between passes (default 30)\n"
	        "  --render JOB   print the message JOB's spooled reports would\n"
	        "                 give, without sending it or changing the spool\n"
	        "  --test ADDR    send a test message to ADDR through the relay\n\n"
	        "Exit status: 0 done (or stopped by SIGTERM/SIGINT), 1 the spool or\n"
	        "the configuration is unusable, 2 usage error.  Delivery failures are\n"
	        "logged and kept for retry; they do not change the exit status.\n");
}

/* The sender's clock: time(2), or GPUALERT_TEST_NOW in tests, so retry
 * and quiet-period tests move the clock instead of sleeping. */
static int64_t now_s(void)
{
	return (int64_t)ga_clock_now();
}

/* The reports of a claim, parsed. */
struct claim {
	char path[4096];
	char *name;
	struct ga_report *reports;
	const struct ga_report **ptrs;
	char **report_names;
	size_t n;
};

static void claim_finish(struct claim *c)
{
	for (size_t i = 0; i < c->n; i++) {
		ga_report_finish(&c->reports[i]);
		free(c->report_names[i]);
	}
	free(c->reports);
	free(c->ptrs);
	free(c->report_names);
	memset(c, 0, sizeof(*c));
}

static int claim_load(struct sender *s, const char *name, struct claim *c,
                      const char **why)
{
	char **names = NULL;
	size_t n = 0;
	uint32_t uid = 0;
	bool have_uid;
	int rc;

	memset(c, 0, sizeof(*c));
	c->name = (char *)name;
	/* The claim's uid (its job key has it); an older claim without one
	 * takes its first report's. */
	have_uid = ga_spool_name_uid(name, &uid) == 0;
	snprintf(c->path, sizeof(c->path), "%s/out/%s", s->dir, name);
	rc = ga_spool_list(s->dir, c->path + strlen(s->dir) + 1, &names, &n);
	if (rc)
		return rc;
	c->reports = calloc(n ? n : 1, sizeof(*c->reports));
	c->ptrs = calloc(n ? n : 1, sizeof(*c->ptrs));
	c->report_names = calloc(n ? n : 1, sizeof(*c->report_names));
	if (!c->reports || !c->ptrs || !c->report_names) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && c->n < MAX_REPORTS_PER_CLAIM; i++) {
		size_t len = strlen(names[i]);
		char path[8192], *text = NULL;
		size_t tlen = 0;
		const char *err = NULL;
		struct ga_report *r = &c->reports[c->n];

		if (len < 6 || strcmp(names[i] + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->path, names[i]);
		rc = ga_read_file(path, (size_t)s->cfg.spool_entry_max, &text,
		                  &tlen);
		if (rc) {
			ga_log(GA_LOG_ERROR, "gpualert: send: %s: %s", path,
			       strerror(-rc));
			continue;
		}
		ga_report_init(r);
		rc = ga_report_parse_json(text, tlen, r, &err);
		free(text);
		if (rc) {
			ga_log(GA_LOG_ERROR, "gpualert: send: %s: %s", path,
			       err ? err : strerror(-rc));
			ga_report_finish(r);
			continue;
		}
		if (!have_uid) {
			uid = r->uid;
			have_uid = true;
		} else if (r->uid != uid) {
			char reason[160];

			/* Never merged into another user's message. */
			snprintf(reason, sizeof(reason),
			         "uid %" PRIu32 " differs from the job's uid "
			         "%" PRIu32 ": not merged",
			         r->uid, uid);
			ga_report_finish(r);
			/* Logged either way; left in the claim, it is
			 * taken out again on the next pass. */
			if (ga_spool_separate(s->dir, name, names[i], reason))
				ga_log(GA_LOG_WARN,
				       "gpualert: send: %s: report %s stays "
				       "in the claim, left out of the message",
				       name, names[i]);
			continue;
		}
		c->report_names[c->n] = strndup(names[i], len - 5);
		c->ptrs[c->n] = r;
		c->n++;
	}
	rc = 0;
	if (!c->n) {
		*why = "no readable report in the claim";
		rc = -EINVAL;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* email, webhook or log, for the job: the strongest mode of its reports
 * (one step asking for mail is enough). */
static enum ga_mode claim_mode(const struct claim *c)
{
	enum ga_mode m = GA_MODE_LOG;

	for (size_t i = 0; i < c->n; i++) {
		int v = c->reports[i].mode
		                ? ga_mode_from_name(c->reports[i].mode)
		                : -1;

		if (v == GA_MODE_EMAIL)
			m = GA_MODE_EMAIL;
		else if (v == GA_MODE_WEBHOOK && m != GA_MODE_EMAIL)
			m = GA_MODE_WEBHOOK;
	}
	return m;
}

static void job_key(const struct claim *c, char *out, size_t size)
{
	size_t n = strcspn(c->name, ".");

	snprintf(out, size, "%.*s", (int)n, c->name);
}

/* The site's wording ([mail] from_name, subject_prefix, footer, help_url). */
static void mail_site(const struct sender *s, struct ga_mail *m)
{
	m->from_name = s->cfg.from_name;
	m->subject_prefix = s->cfg.subject_prefix;
	m->footer = s->cfg.footer;
	m->help_url = s->cfg.help_url;
}

/* Where a webhook claim goes: the first report's own destination (checked
 * again against [webhook] allowed_hosts: the admin may have removed the
 * host since), else the admin's url and format.  Returns 0 or -EINVAL
 * with WHY. */
static int webhook_dest(const struct sender *s, const struct claim *c,
                        enum ga_chat_format *f, const char **url, char *why,
                        size_t why_size)
{
	int v;

	for (size_t i = 0; i < c->n; i++) {
		const struct ga_report *r = &c->reports[i];
		char dest[GA_CHAT_URL_MAX + 32];

		if (!r->webhook_url)
			continue;
		snprintf(dest, sizeof(dest), "%s:%s",
		         r->webhook_format ? r->webhook_format : "slack",
		         r->webhook_url);
		if (ga_chat_dest_parse(dest, s->cfg.webhook_allowed_hosts, f,
		                       url, why, why_size) < 0)
			return -EINVAL;
		*url = r->webhook_url;
		return 0;
	}
	if (!s->cfg.webhook_url || !*s->cfg.webhook_url) {
		/* Retrying cannot help: dead-letter now, with the reason. */
		snprintf(why, why_size,
		         "the job asked for the site's webhook and [webhook] "
		         "url is not configured");
		return -EINVAL;
	}
	v = ga_chat_format_from_name(s->cfg.webhook_format,
	                             strlen(s->cfg.webhook_format));
	*f = v < 0 ? GA_CHAT_SLACK : (enum ga_chat_format)v;
	*url = NULL;
	return 0;
}

static void mail_init(struct sender *s, struct claim *c, int64_t date,
                      const char *mid, struct ga_artifact_set *att,
                      struct ga_mail *m)
{
	memset(m, 0, sizeof(*m));
	m->reports = c->ptrs;
	m->n_reports = c->n;
	m->from = s->cfg.mail_from;
	m->message_id = mid;
	m->date = date;
	m->attach_budget = s->cfg.attach_budget;
	mail_site(s, m);
	for (size_t i = 0; i < c->n; i++) {
		char dir[8192];
		int rc = ga_path_printf(dir, sizeof(dir), "%s/att/%s", c->path,
		                        c->report_names[i]);

		if (!rc)
			rc = ga_artifacts_load(
			        dir, s->cfg.attach_budget * 2 + 65536, att);
		if (rc)
			ga_log(GA_LOG_WARN,
			       "gpualert: send: %s: cannot read all the files "
			       "of %s: %s (the message lists what it has)",
			       c->name, c->report_names[i], strerror(-rc));
	}
	m->files = att->files;
	m->n_files = att->n_files;
	m->skipped = att->skipped;
	m->n_skipped = att->n_skipped;
}

/* out/CLAIM/message.eml: rendered once, then reused as is. */
static int get_message(struct sender *s, struct claim *c,
                       const struct ga_spool_state *st, const char *mid,
                       char **msg, size_t *len)
{
	char path[8192];
	struct ga_artifact_set att;
	struct ga_mail m;
	struct ga_buf b;
	int rc;

	snprintf(path, sizeof(path), "%s/message.eml", c->path);
	rc = ga_read_file(path, 256u << 20, msg, len);
	if (rc != -ENOENT)
		return rc;
	ga_artifact_set_init(&att);
	mail_init(s, c, st->first_seen, mid, &att, &m);
	ga_buf_init(&b);
	rc = ga_mime_render(&m, &b);
	if (!rc)
		rc = ga_spool_write_file(c->path, "message.eml", b.data, b.len);
	if (!rc) {
		*len = b.len;
		*msg = ga_buf_steal(&b);
	}
	ga_buf_finish(&b);
	ga_artifact_set_finish(&att);
	return rc;
}

static void bury(struct sender *s, struct claim *c, const char *reason)
{
	ga_log(GA_LOG_ERROR,
	       "gpualert: send: %s: giving up, moved to %s/dead: "
	       "%s",
	       c->name, s->dir, reason);
	if (!ga_spool_bury(s->dir, c->name, reason))
		s->dead++;
}

/* The claim's delivery state; a state that cannot be written makes the
 * next pass treat the claim as new (first seen now, no attempts). */
static void save_state(const struct claim *c, const struct ga_spool_state *st)
{
	int rc = ga_spool_state_write(c->path, st);

	if (rc)
		ga_log(GA_LOG_WARN,
		       "gpualert: send: cannot save the delivery state of %s: "
		       "%s",
		       c->path, strerror(-rc));
}

/* Record NAME as done (NOTE: its Message-ID, or why nothing was sent).
 * When sent.log cannot take the line (logged), the claim stays in out/
 * and the next pass delivers it again. */
static void mark_sent(struct sender *s, const char *name, const char *user,
                      const char *note, int64_t now)
{
	if (ga_spool_mark_sent(s->dir, name, user, note, now))
		ga_log(GA_LOG_WARN,
		       "gpualert: send: %s stays in %s/out and will be "
		       "delivered again",
		       name, s->dir);
}

static void deliver(struct sender *s, const char *name, int64_t now)
{
	struct ga_spool_state st;
	struct claim c;
	const char *why = NULL, *user;
	char err[512] = "", key[128], mid[300];
	enum ga_send_result res = GA_SEND_OK;
	enum ga_mode mode;
	char *msg = NULL;
	size_t len = 0;
	int rc;

	if (ga_spool_was_sent(s->dir, name)) {
		/* Accepted before a crash: only the clean-up is missing. */
		ga_log(GA_LOG_INFO,
		       "gpualert: send: %s was already accepted; "
		       "removing it",
		       name);
		if (ga_spool_drop(s->dir, name))
			ga_log(GA_LOG_WARN,
			       "gpualert: send: cannot remove %s; tried again "
			       "on the next pass",
			       name);
		return;
	}
	snprintf(c.path, sizeof(c.path), "%s/out/%s", s->dir, name);
	if (ga_spool_state_read(c.path, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (st.next_try > now) {
		if (!s->next_wake || st.next_try < s->next_wake)
			s->next_wake = st.next_try;
		return;
	}
	rc = claim_load(s, name, &c, &why);
	if (rc) {
		if (rc == -EINVAL) {
			c.name = (char *)name;
			bury(s, &c, why);
		}
		claim_finish(&c);
		return;
	}
	if (!st.first_seen) {
		st.first_seen = now;
		save_state(&c, &st);
		ga_admin_observe(&s->cfg, s->dir, c.ptrs, c.n, now);
	}
	job_key(&c, key, sizeof(key));
	ga_mime_message_id(key, name, s->cfg.mail_from, mid, sizeof(mid));
	mode = claim_mode(&c);
	user = c.reports[0].user;
	if (mode == GA_MODE_LOG || mode == GA_MODE_OFF) {
		ga_log(GA_LOG_INFO,
		       "gpualert: send: %s: mode log, nothing to "
		       "deliver",
		       name);
		mark_sent(s, name, user, "(log-only)", now);
		s->logged++;
		goto out;
	}
	{
		struct ga_mail w;

		memset(&w, 0, sizeof(w));
		w.reports = c.ptrs;
		w.n_reports = c.n;
		if (!ga_mime_wanted(&w)) {
			/* notify = fail and the job succeeded: the reports
			 * stay counted in sent.log, nothing is sent. */
			ga_log(GA_LOG_INFO,
			       "gpualert: send: %s: completed, and only "
			       "failures were asked for; nothing to deliver",
			       name);
			mark_sent(s, name, user, "(success, fail-only)", now);
			goto out;
		}
	}
	if (mode == GA_MODE_EMAIL) {
		int64_t wait = ga_rate_wait(s->rate, user, now);

		if (wait > 0 &&
		    now - st.first_seen >= (int64_t)s->cfg.max_age_s) {
			char reason[200];

			/* Deferral is not an attempt, but it ends: max_age
			 * holds for a message that never got its turn. */
			snprintf(reason, sizeof(reason),
			         "expired after %" PRId64 " s deferred by the "
			         "rate limit ([mail] max_age = %u)",
			         now - st.first_seen, s->cfg.max_age_s);
			snprintf(st.last_error, sizeof(st.last_error), "%s",
			         reason);
			save_state(&c, &st);
			bury(s, &c, reason);
			goto out;
		}
		if (wait > 0) {
			/* Deferred, not dropped, and not an attempt. */
			st.next_try = now + wait;
			snprintf(st.last_error, sizeof(st.last_error),
			         "deferred by the rate limit");
			save_state(&c, &st);
			ga_log(GA_LOG_WARN,
			       "gpualert: send: %s: rate limit "
			       "reached (user %s: %u/h, all: %u/h); deferred "
			       "%" PRId64 " s",
			       name, user ? user : "-",
			       s->cfg.rate_per_user_hour,
			       s->cfg.rate_global_hour, wait);
			if (!s->next_wake || st.next_try < s->next_wake)
				s->next_wake = st.next_try;
			goto out;
		}
	}
	if (mode == GA_MODE_EMAIL) {
		const char **rcpt;
		size_t n_rcpt = 0;
		struct ga_mail m;
		struct ga_artifact_set none;

		ga_artifact_set_init(&none);
		memset(&m, 0, sizeof(m));
		m.reports = c.ptrs;
		m.n_reports = c.n;
		rcpt = ga_mime_recipients(&m, &n_rcpt);
		if (!n_rcpt) {
			free(rcpt);
			bury(s, &c, "no valid recipient in the reports");
			goto out;
		}
		rc = get_message(s, &c, &st, mid, &msg, &len);
		if (rc) {
			free(rcpt);
			snprintf(err, sizeof(err),
			         "cannot render the message: %s",
			         strerror(-rc));
			res = GA_SEND_RETRY;
		} else {
			res = ga_smtp_send(&s->cfg, rcpt, n_rcpt, msg, len, err,
			                   sizeof(err));
			free(rcpt);
		}
	} else {
		struct ga_mail m;
		struct ga_buf b;
		enum ga_chat_format fmt;
		const char *url;
		char title[200], bad[300];

		memset(&m, 0, sizeof(m));
		m.reports = c.ptrs;
		m.n_reports = c.n;
		mail_site(s, &m);
		ga_buf_init(&b);
		if (webhook_dest(s, &c, &fmt, &url, bad, sizeof(bad)) < 0) {
			ga_buf_finish(&b);
			bury(s, &c, bad);
			goto out;
		}
		if (ga_chat_payload(&m, fmt, &b, title, sizeof(title)) < 0) {
			snprintf(err, sizeof(err), "out of memory");
			res = GA_SEND_RETRY;
		} else {
			res = ga_webhook_post(
			        &s->cfg, url, ga_chat_content_type(fmt),
			        fmt == GA_CHAT_NTFY ? title : NULL, b.data,
			        b.len, err, sizeof(err));
		}
		ga_buf_finish(&b);
	}
	switch (res) {
	case GA_SEND_OK:
		mark_sent(s, name, user, mid, now);
		if (mode == GA_MODE_EMAIL && ga_rate_record(s->rate, user, now))
			ga_log(GA_LOG_WARN,
			       "gpualert: send: %s: out of memory: this "
			       "message is not counted in the rate limit",
			       name);
		s->sent++;
		ga_log(GA_LOG_INFO,
		       "gpualert: send: %s: delivered %s (%zu "
		       "report%s, attempt %u)",
		       name, mid, c.n, c.n == 1 ? "" : "s", st.attempts + 1);
		break;
	case GA_SEND_RETRY:
		st.attempts++;
		snprintf(st.last_error, sizeof(st.last_error), "%s", err);
		if (now - st.first_seen >= (int64_t)s->cfg.max_age_s) {
			char reason[700];

			snprintf(reason, sizeof(reason),
			         "expired after %u "
			         "attempts in %" PRId64
			         " s ([mail] max_age = %u); "
			         "last error: %s",
			         st.attempts, now - st.first_seen,
			         s->cfg.max_age_s, err);
			save_state(&c, &st);
			bury(s, &c, reason);
			break;
		}
		st.next_try = now + (int64_t)ga_backoff_delay(
		                            s->cfg.retry_base_s, st.attempts,
		                            MAX_BACKOFF_S);
		save_state(&c, &st);
		s->retried++;
		if (!s->next_wake || st.next_try < s->next_wake)
			s->next_wake = st.next_try;
		ga_log(GA_LOG_WARN,
		       "gpualert: send: %s: %s; kept, attempt %u, "
		       "next try in %" PRId64 " s",
		       name, err, st.attempts, st.next_try - now);
		break;
	case GA_SEND_FAIL:
		st.attempts++;
		snprintf(st.last_error, sizeof(st.last_error), "%s", err);
		save_state(&c, &st);
		bury(s, &c, err);
		break;
	}
out:
	free(msg);
	claim_finish(&c);
}

/* One pass.  Returns 0, or -errno when the spool cannot be read. */
static int pass(struct sender *s)
{
	struct ga_spool_scan scan;
	char **claims = NULL;
	size_t n = 0;
	int64_t now = now_s();
	int rc;

	s->next_wake = 0;
	ga_spool_sweep_tmp(s->dir, now, 3600);
	/* A writer holds att/NAME for at most its collect deadline: an hour
	 * old without a report, it is an orphan. */
	ga_spool_sweep_att(s->dir, now, 3600);
	rc = ga_spool_scan_new(s->dir, &scan);
	if (rc) {
		ga_log(GA_LOG_ERROR, "gpualert: send: cannot read %s/new: %s",
		       s->dir, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < scan.n_groups && !stop_requested; i++) {
		struct ga_spool_group *g = &scan.groups[i];
		char claim[GA_SPOOL_NAME_MAX + 32];

		if (!s->flush &&
		    !ga_spool_group_due(g, now, s->cfg.spool_quiet_s)) {
			int64_t due = g->newest + s->cfg.spool_quiet_s;

			if (!s->next_wake || due < s->next_wake)
				s->next_wake = due;
			continue;
		}
		ga_spool_claim_name(g, claim, sizeof(claim));
		/* Logged; the reports stay in new/ for the next pass. */
		if (ga_spool_claim(s->dir, g, claim))
			continue;
	}
	ga_spool_scan_finish(&scan);
	rc = ga_spool_list(s->dir, "out", &claims, &n);
	if (rc) {
		ga_log(GA_LOG_ERROR, "gpualert: send: cannot read %s/out: %s",
		       s->dir, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		if (!stop_requested)
			deliver(s, claims[i], now_s());
		free(claims[i]);
	}
	free(claims);
	ga_admin_flush(&s->cfg, s->dir, now_s());
	/* The writers keep the usage counters without scanning; the sender,
	 * which removes entries, sets them to what the spool holds. */
	if (s->sent + s->dead + s->logged != s->removed_at_reconcile ||
	    now - s->reconciled >= RECONCILE_S) {
		rc = ga_spool_reconcile(s->dir);
		if (rc)
			ga_log(GA_LOG_WARN,
			       "gpualert: send: cannot update %s/usage: %s",
			       s->dir, strerror(-rc));
		s->reconciled = now;
		s->removed_at_reconcile = s->sent + s->dead + s->logged;
	}
	return 0;
}

/* Under systemd, prefix lines with the sd-daemon(3) priority so the
 * journal keeps the level. */
static void journal_sink(enum ga_log_level level, const char *msg, void *ctx)
{
	static const int prio[] = {3, 4, 6, 7};

	fprintf(stderr, "<%d>%s\n", prio[level], msg);
}

int cmd_send(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"once", no_argument, NULL, '1'},
	        {"now", no_argument, NULL, 'n'},
	        {"config", required_argument, NULL, 'c'},
	        {"spool", required_argument, NULL, 'd'},
	        {"set", required_argument, NULL, 's'},
	        {"interval", required_argument, NULL, 'i'},
	        {"render", required_argument, NULL, 'R'},
	        {"test", required_argument, NULL, 'T'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	struct sender s;
	const char *config = getenv("GPUALERT_CONFIG");
	const char *spool = NULL, *render = NULL, *test_addr = NULL;
	char **sets = NULL;
	size_t n_sets = 0;
	bool once = false;
	long interval = 30;
	struct sigaction sa;
	struct ga_diag diag;
	int rc = CLI_OK, c, ifd = -1;
	char path[4096];

	memset(&s, 0, sizeof(s));
	sets = calloc((size_t)argc, sizeof(*sets));
	if (!sets)
		return CLI_FAILURE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "1nc:d:s:i:h", opts, NULL)) != -1) {
		switch (c) {
		case '1':
			once = true;
			break;
		case 'n':
			s.flush = true;
			break;
		case 'c':
			config = optarg;
			break;
		case 'd':
			spool = optarg;
			break;
		case 's':
			sets[n_sets++] = optarg;
			break;
		case 'i':
			interval = strtol(optarg, NULL, 10);
			if (interval < 1 || interval > 3600) {
				cli_error(
				        "send: --interval: 1 to 3600 seconds");
				free(sets);
				return CLI_USAGE;
			}
			break;
		case 'R':
			render = optarg;
			break;
		case 'T':
			test_addr = optarg;
			break;
		case 'h':
			usage(stdout);
			free(sets);
			return CLI_OK;
		default:
			usage(stderr);
			free(sets);
			return CLI_USAGE;
		}
	}
	if (optind < argc) {
		usage(stderr);
		free(sets);
		return CLI_USAGE;
	}
	if (getenv("JOURNAL_STREAM"))
		ga_log_set_sink(journal_sink, NULL);
	if (ga_config_init(&s.cfg) < 0) {
		cli_error("send: out of memory");
		free(sets);
		return CLI_FAILURE;
	}
	ga_diag_init(&diag, "send");
	if (!config)
		config = GA_DEFAULT_CONFIG;
	c = ga_config_load(&s.cfg, config, &diag);
	if (c == -ENOENT && !getenv("GPUALERT_CONFIG") &&
	    !strcmp(config, GA_DEFAULT_CONFIG))
		c = 0; /* no config file: the defaults */
	/* --set errors are usage errors: they blame the option (exit 2). */
	for (size_t i = 0; i < n_sets && !c; i++) {
		char *eq = strchr(sets[i], '=');
		int e;

		if (!eq) {
			cli_error("send: --set %s: expected SECTION.KEY=VALUE",
			          sets[i]);
			free(sets);
			rc = CLI_USAGE;
			goto out;
		}
		*eq = '\0';
		/* Reported by ga_config_set as "--set: error: ...". */
		e = ga_config_set(&s.cfg, sets[i], eq + 1, "--set", &diag);
		*eq = '=';
		if (e) {
			if (e != -EINVAL)
				cli_error("send: --set: %s", strerror(-e));
			free(sets);
			rc = CLI_USAGE;
			goto out;
		}
	}
	free(sets);
	if (c) {
		cli_error("send: configuration %s: %s", config,
		          c == -EINVAL ? "invalid (see above)" : strerror(-c));
		rc = CLI_FAILURE;
		goto out;
	}
	/* Tools that leave the spool alone (cli/send_tools.c). */
	if (render || test_addr) {
		rc = render ? send_render(&s.cfg,
		                          spool ? spool : s.cfg.spool_dir,
		                          render)
		            : send_test(&s.cfg, test_addr);
		goto out;
	}
	/* Never guessed: user@localhost would be accepted and lost. */
	if (!s.cfg.owner_domain || !*s.cfg.owner_domain) {
		cli_error("send: [recipients] owner_domain is empty: set it in "
		          "%s (job owners are mailed as USER@owner_domain)",
		          config);
		rc = CLI_FAILURE;
		goto out;
	}
	s.dir = spool ? spool : s.cfg.spool_dir;
	if (ga_spool_prepare(s.dir) < 0) {
		rc = CLI_FAILURE;
		goto out;
	}
	s.rate = ga_rate_create(s.cfg.rate_per_user_hour,
	                        s.cfg.rate_global_hour);
	snprintf(path, sizeof(path), "%s/sent.log", s.dir);
	if (!s.rate || ga_rate_load_log(s.rate, path, now_s()) == -ENOMEM) {
		cli_error("send: out of memory");
		rc = CLI_FAILURE;
		goto out;
	}
	/* curl's libcurl-thread(3): global init once, before any thread. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cli_error("send: cannot initialise libcurl");
		rc = CLI_FAILURE;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* No SA_RESTART: poll() returns at once with EINTR.  A delivery in
	 * progress completes (libcurl runs with CURLOPT_NOSIGNAL). */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (!once) {
		snprintf(path, sizeof(path), "%s/new", s.dir);
		ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ifd >= 0 &&
		    inotify_add_watch(ifd, path, IN_MOVED_TO | IN_CLOSE_WRITE) <
		            0) {
			ga_log(GA_LOG_WARN,
			       "gpualert: send: inotify on %s: %s; "
			       "polling every %ld s",
			       path, strerror(errno), interval);
			close(ifd);
			ifd = -1;
		}
		ga_log(GA_LOG_INFO, "gpualert: send: serving %s (mail via %s)",
		       s.dir, s.cfg.smtp_url);
	}
	for (;;) {
		int64_t now, wait_ms;
		struct pollfd pfd;
		char evbuf[4096];

		if (pass(&s) < 0 && once) {
			rc = CLI_FAILURE;
			break;
		}
		if (once || stop_requested)
			break;
		now = now_s();
		wait_ms = interval * 1000;
		if (s.next_wake && (s.next_wake - now) * 1000 < wait_ms)
			wait_ms = s.next_wake > now ? (s.next_wake - now) * 1000
			                            : 0;
		pfd.fd = ifd;
		pfd.events = POLLIN;
		if (poll(&pfd, ifd >= 0 ? 1 : 0, (int)wait_ms) > 0)
			while (read(ifd, evbuf, sizeof(evbuf)) > 0)
				;
		if (stop_requested)
			break;
	}
	if (stop_requested)
		ga_log(GA_LOG_INFO, "gpualert: send: stopping on signal %d",
		       (int)stop_requested);
	if (once)
		ga_log(GA_LOG_INFO,
		       "gpualert: send: %u delivered, %u kept for "
		       "retry, %u dead-lettered",
		       s.sent, s.retried, s.dead);
	if (ifd >= 0)
		close(ifd);
	curl_global_cleanup();
out:
	ga_rate_destroy(s.rate);
	ga_diag_finish(&diag);
	ga_config_finish(&s.cfg);
	return rc;
}
