/* SPDX-License-Identifier: MIT */
/* gpualert send --render JOB and --test ADDR: look at what the sender
 * would send, and try the relay, without touching the spool. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "artifacts.h"
#include "artifacts_load.h"
#include "buf.h"
#include "chat.h"
#include "cli.h"
#include "mime.h"
#include "option.h"
#include "report.h"
#include "smtp.h"
#include "spool.h"
#include "spool_queue.h"

#define RENDER_MAX_REPORTS 10000

/* The reports of one job, from new/ or from a claim directory. */
struct job_reports {
	struct ga_report *reports;
	const struct ga_report **ptrs;
	size_t n;
	struct ga_artifact_set att;
};

static void job_reports_finish(struct job_reports *j)
{
	for (size_t i = 0; i < j->n; i++)
		ga_report_finish(&j->reports[i]);
	free(j->reports);
	free(j->ptrs);
	ga_artifact_set_finish(&j->att);
}

/* Read JSON_DIR/NAMES[i] (names ending in ".json"; others skipped) and
 * the files collected for each in ATT_DIR/<name without .json>. */
static int load_reports(const struct ga_config *cfg, const char *json_dir,
                        const char *att_dir, char **names, size_t n,
                        struct job_reports *j)
{
	memset(j, 0, sizeof(*j));
	ga_artifact_set_init(&j->att);
	if (n > RENDER_MAX_REPORTS)
		n = RENDER_MAX_REPORTS;
	j->reports = calloc(n ? n : 1, sizeof(*j->reports));
	j->ptrs = calloc(n ? n : 1, sizeof(*j->ptrs));
	if (!j->reports || !j->ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		char path[8192], *text = NULL;
		const char *err = NULL;
		size_t tlen = 0;
		int rc;

		if (len < 6 || strcmp(names[i] + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", json_dir, names[i]);
		rc = ga_read_file(path, (size_t)cfg->spool_entry_max, &text,
		                  &tlen);
		if (rc) {
			cli_error("send: %s: %s", path, strerror(-rc));
			continue;
		}
		ga_report_init(&j->reports[j->n]);
		rc = ga_report_parse_json(text, tlen, &j->reports[j->n], &err);
		free(text);
		if (rc) {
			cli_error("send: %s: %s", path,
			          err ? err : strerror(-rc));
			ga_report_finish(&j->reports[j->n]);
			continue;
		}
		j->ptrs[j->n] = &j->reports[j->n];
		j->n++;
		snprintf(path, sizeof(path), "%s/%.*s", att_dir, (int)(len - 5),
		         names[i]);
		rc = ga_artifacts_load(path, cfg->attach_budget * 2 + 65536,
		                       &j->att);
		if (rc)
			cli_error("send: %s: cannot read all its files: %s "
			          "(the message lists what it has)",
			          path, strerror(-rc));
	}
	return j->n ? 0 : -ENOENT;
}

/* The claim of JOB in DIR/SUB ("JOB.<hash>"), copied into OUT. */
static bool find_claim(const char *dir, const char *sub, const char *job,
                       char *out, size_t size)
{
	char **names = NULL;
	size_t n = 0, jl = strlen(job);
	bool found = false;

	if (ga_spool_list(dir, sub, &names, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!found && !strncmp(names[i], job, jl) &&
		    names[i][jl] == '.') {
			snprintf(out, size, "%s", names[i]);
			found = true;
		}
		free(names[i]);
	}
	free(names);
	return found;
}

static int print_file(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ga_read_file(path, 256u << 20, &text, &len);

	if (rc)
		return rc;
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

int send_render(const struct ga_config *cfg, const char *dir, const char *job)
{
	char claim[512] = "", claim_dir[4096], json_dir[4096], att_dir[4200];
	char mid[300], path[8192], sub[600];
	struct ga_spool_scan scan = {0};
	struct job_reports j;
	const char *where = NULL;
	char **names = NULL;
	size_t n = 0;
	bool own_names = false;
	int rc;

	if (!ga_spool_name_ok(job) || strchr(job, '.')) {
		cli_error("send: --render %s: not a job id", job);
		return CLI_USAGE;
	}
	/* A claim being delivered or dead: its message.eml, once rendered,
	 * is what is (re)sent byte for byte. */
	if (find_claim(dir, "out", job, claim, sizeof(claim)))
		where = "out";
	else if (find_claim(dir, "dead", job, claim, sizeof(claim)))
		where = "dead";
	if (where) {
		snprintf(claim_dir, sizeof(claim_dir), "%s/%s/%s", dir, where,
		         claim);
		snprintf(path, sizeof(path), "%s/message.eml", claim_dir);
		if (print_file(path) == 0)
			return CLI_OK;
		snprintf(sub, sizeof(sub), "%s/%s", where, claim);
		if (ga_spool_list(dir, sub, &names, &n)) {
			cli_error("send: cannot read %s: %s", claim_dir,
			          strerror(errno));
			return CLI_FAILURE;
		}
		own_names = true;
		snprintf(json_dir, sizeof(json_dir), "%s", claim_dir);
		snprintf(att_dir, sizeof(att_dir), "%s/att", claim_dir);
	} else {
		rc = ga_spool_scan_new(dir, &scan);
		if (rc) {
			cli_error("send: cannot read %s/new: %s", dir,
			          strerror(-rc));
			return CLI_FAILURE;
		}
		for (size_t i = 0; i < scan.n_groups; i++) {
			/* The key is "<job>.u<uid>"; the first match. */
			if (n ||
			    strncmp(scan.groups[i].key, job, strlen(job)) ||
			    (scan.groups[i].key[strlen(job)] != '\0' &&
			     scan.groups[i].key[strlen(job)] != '.'))
				continue;
			names = scan.groups[i].names;
			n = scan.groups[i].n_names;
			ga_spool_claim_name(&scan.groups[i], claim,
			                    sizeof(claim));
		}
		snprintf(json_dir, sizeof(json_dir), "%s/new", dir);
		snprintf(att_dir, sizeof(att_dir), "%s/att", dir);
	}
	if (!n) {
		cli_error("send: --render: no spooled report of job %s in %s",
		          job, dir);
		ga_spool_scan_finish(&scan);
		return CLI_FAILURE;
	}
	rc = load_reports(cfg, json_dir, att_dir, names, n, &j);
	if (own_names) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	ga_spool_scan_finish(&scan);
	if (!rc) {
		struct ga_mail m = {
		        .reports = j.ptrs,
		        .n_reports = j.n,
		        .from = cfg->mail_from,
		        .message_id = mid,
		        .date = (int64_t)time(NULL),
		        .attach_budget = cfg->attach_budget,
		        .files = j.att.files,
		        .n_files = j.att.n_files,
		        .skipped = j.att.skipped,
		        .n_skipped = j.att.n_skipped,
		};
		bool webhook = true;
		struct ga_buf b;

		for (size_t i = 0; i < j.n; i++)
			if (!j.reports[i].mode ||
			    strcmp(j.reports[i].mode, "webhook"))
				webhook = false;
		ga_mime_message_id(job, claim, cfg->mail_from, mid,
		                   sizeof(mid));
		ga_buf_init(&b);
		if (webhook) {
			/* The job's own chat format, else the site's. */
			const char *fname =
			        j.reports[0].webhook_format
			                ? j.reports[0].webhook_format
			                : cfg->webhook_format;
			int f = fname ? ga_chat_format_from_name(fname,
			                                         strlen(fname))
			              : -1;
			char title[200];

			rc = ga_chat_payload(&m,
			                     f < 0 ? GA_CHAT_SLACK
			                           : (enum ga_chat_format)f,
			                     &b, title, sizeof(title));
		} else {
			rc = ga_mime_render(&m, &b);
		}
		if (!rc && b.data)
			fwrite(b.data, 1, b.len, stdout);
		ga_buf_finish(&b);
	}
	job_reports_finish(&j);
	if (rc) {
		cli_error("send: --render %s: %s", job,
		          rc == -ENOENT   ? "no readable report"
		          : rc == -EINVAL ? "no valid recipient in the reports"
		                          : strerror(-rc));
		return CLI_FAILURE;
	}
	return fflush(stdout) ? CLI_FAILURE : CLI_OK;
}

int send_test(const struct ga_config *cfg, const char *addr)
{
	const char *rcpt[1] = {addr};
	char date[64], err[512] = "", host[256] = "localhost";
	const char *dom = strchr(cfg->mail_from, '@');
	time_t now = time(NULL);
	enum ga_send_result res;
	struct ga_buf b;
	struct tm tm;

	if (!ga_address_valid(addr)) {
		cli_error("send: --test %s: not a plain mail address "
		          "(user@domain)",
		          addr);
		return CLI_USAGE;
	}
	gethostname(host, sizeof(host) - 1);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	ga_buf_init(&b);
	ga_buf_printf(&b,
	              "From: %s\r\nTo: %s\r\nSubject: [gpualert] test message "
	              "from %s\r\nDate: %s\r\n"
	              "Message-ID: <gpualert.test.%lld.%ld@%s>\r\n"
	              "MIME-Version: 1.0\r\n"
	              "Content-Type: text/plain; charset=us-ascii\r\n\r\n"
	              "This is a test message from gpualert send on %s.\r\n"
	              "Mail to job owners goes the same way: %s.\r\n",
	              cfg->mail_from, addr, host, date, (long long)now,
	              (long)getpid(), dom ? dom + 1 : "localhost", host,
	              cfg->smtp_url);
	if (!b.data) {
		cli_error("send: out of memory");
		return CLI_FAILURE;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cli_error("send: cannot initialise libcurl");
		ga_buf_finish(&b);
		return CLI_FAILURE;
	}
	res = ga_smtp_send(cfg, rcpt, 1, b.data, b.len, err, sizeof(err));
	curl_global_cleanup();
	ga_buf_finish(&b);
	if (res != GA_SEND_OK) {
		cli_error("send: --test: %s did not accept the message for %s: "
		          "%s",
		          cfg->smtp_url, addr, err);
		return CLI_FAILURE;
	}
	printf("gpualert: send: --test: %s accepted the message for %s\n",
	       cfg->smtp_url, addr);
	return CLI_OK;
}
