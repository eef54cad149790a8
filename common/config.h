/* SPDX-License-Identifier: MIT */
/* gpualert.conf: the admin's settings (the INI dialect of ini.h;
 * etc/gpualert.conf and gpualert.conf(5) document every key).
 *
 * One struct for every part (plugin, gpualert run, gpualert send).  Values
 * are bounded and checked when read; an unknown key or a bad value is an
 * error reported as "file:LINE: message", and the key keeps its default.
 */
#ifndef GPUALERT_COMMON_CONFIG_H
#define GPUALERT_COMMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "util.h"

enum ga_mode {
	GA_MODE_OFF = 0, /* nothing: no log, no report */
	GA_MODE_LOG,     /* durable logs and report, no notification */
	GA_MODE_EMAIL,   /* + mail to the job owner or given addresses */
	GA_MODE_WEBHOOK, /* + the admin's webhook */
};

/* When a job with mail or webhook is notified. */
enum ga_notify {
	GA_NOTIFY_ALWAYS = 0, /* every job, successes included */
	GA_NOTIFY_FAIL,       /* only a job that failed or hid a problem */
};

enum ga_recipient_policy {
	GA_RECIPIENTS_OWNER = 0, /* only the job owner's own address */
	GA_RECIPIENTS_DOMAINS, /* the owner, or addresses in allowed_domains */
};

enum ga_tls {
	GA_TLS_NONE = 0, /* plain SMTP (a local relay) */
	GA_TLS_STARTTLS, /* STARTTLS required: fail if not offered */
	GA_TLS_TRY,      /* STARTTLS if offered (logged when it is not) */
	GA_TLS_IMPLICIT, /* smtps:// */
};

/* Which durable logs stay after a step (the task's own output files are
 * never touched). */
enum ga_keep {
	GA_KEEP_FAILED = 0, /* remove the logs of steps that succeeded */
	GA_KEEP_ALL,
};

struct ga_config {
	/* [general] */
	enum ga_mode default_mode; /* when --gpualert is absent */
	enum ga_notify notify;     /* when neither fail: nor always: given */
	char *log_pattern;         /* %j %s %t %u %x %N %w %% */
	unsigned log_file_mode;    /* e.g. 0600 */
	char *rules_dir;
	char *spool_dir;
	unsigned tail_lines;
	uint64_t helper_max_rss;   /* capture helper RLIMIT_AS, bytes */
	unsigned drain_timeout_ms; /* task_exit wait for the helper */
	bool query_scheduler;      /* slurm_load_job() on signal deaths */

	/* [capture] */
	uint64_t log_max;             /* output bytes a durable log keeps */
	enum ga_keep keep_logs;       /* after a successful step */
	uint64_t classify_max;        /* bytes read back per record */
	unsigned classify_timeout_ms; /* the whole step's classification */

	/* [recipients] */
	enum ga_recipient_policy recipient_policy;
	char *owner_domain;    /* owner address = user@owner_domain */
	char *allowed_domains; /* comma-separated */
	unsigned max_recipients;

	/* [spool] */
	uint64_t spool_entry_max; /* bytes per entry */
	uint64_t spool_total_max; /* bytes in the whole spool */
	unsigned spool_quiet_s;   /* a job is complete this long after
					 * its last report (batch step: at once) */
	/* percent of total_max the entries of one uid may use */
	unsigned spool_user_share;

	/* [mail] */
	char *smtp_url; /* smtp://host:port or smtps:// */
	enum ga_tls tls;
	char *mail_from;
	char *credentials_file; /* "user:password", root/service only */
	char *ca_file;          /* CA bundle for the relay; "": the system's */
	unsigned connect_timeout_s;
	unsigned timeout_s;
	uint64_t attach_budget; /* bytes of attachments per message */
	char *artifact_globs;   /* comma-separated, in the work dir */
	unsigned max_age_s;     /* give up (dead-letter) after this */
	unsigned retry_base_s;  /* first retry delay, doubled each time */
	unsigned rate_per_user_hour;
	unsigned rate_global_hour;
	char *from_name;      /* From: display name */
	char *subject_prefix; /* e.g. "[gpualert]"; "" for none */
	char *footer;         /* one line above the signature */
	char *help_url;       /* the site's help page, linked in the footer */
	/* ms the file-reading child of a report may take (then killed) */
	unsigned collect_timeout_ms;

	/* [webhook] */
	char *webhook_url;
	char *webhook_format;        /* slack | mattermost | teams | ntfy */
	char *webhook_allowed_hosts; /* hosts for users' own webhooks */
	unsigned webhook_timeout_s;

	/* Kernel evidence and the admin channel: [general] kernel_log,
	 * nvidia_gpus_dir, kernel_log_max_ms; [admin] mail, webhook,
	 * period. */
	bool kernel_log;            /* read the node's kernel log at step end */
	char *nvidia_gpus_dir;      /* bus ids of the GPUs */
	unsigned kernel_log_max_ms; /* time budget of the reading */
	char *admin_mail;           /* "" : no admin mail */
	char *admin_webhook;        /* "" : no admin webhook */
	unsigned admin_period_s; /* one message per node and GPU per period */
};

/* Set every field to its default (allocations: returns -ENOMEM). */
int ga_config_init(struct ga_config *cfg);
void ga_config_finish(struct ga_config *cfg);

/* Read PATH over the current values.  Problems go to DIAG (may be NULL)
 * as "PATH:LINE: ...".  Returns 0 when the file was read without errors,
 * -ENOENT when it does not exist (defaults stay: not an error for most
 * callers), -EINVAL when it had errors (every valid key still applied),
 * or another -errno. */
GA_MUST_CHECK int ga_config_load(struct ga_config *cfg, const char *path,
                                 struct ga_diag *diag);

/* Apply one "key=value" override (plugstack.conf arguments).  KEY may be
 * "section.key" or a bare key searched in every section.  Returns 0 or
 * -EINVAL (reported to DIAG with ORIGIN as the location). */
int ga_config_set(struct ga_config *cfg, const char *key, const char *value,
                  const char *origin, struct ga_diag *diag);

/* "always" / "fail"; -1 if unknown. */
int ga_notify_from_name(const char *name);
const char *ga_notify_name(enum ga_notify n);

/* The key table, for documentation checks: key I (0 <= I <
 * ga_config_n_keys()) is SECTION.NAME; both strings are static. */
size_t ga_config_n_keys(void);
void ga_config_key(size_t i, const char **section, const char **name);

/* Format the value of KEY ("section.key") into BUF as gpualert.conf would
 * spell it (sizes in bytes, modes in octal, yes/no).  Returns 0, -ENOENT
 * for an unknown key, -ENOSPC when BUF is too small. */
GA_MUST_CHECK int ga_config_get(const struct ga_config *cfg, const char *key,
                                char *buf, size_t size);

/* Parse a mode name ("off", "log", "email", "webhook").  -1 if unknown. */
int ga_mode_from_name(const char *name);
const char *ga_mode_name(enum ga_mode mode);

#endif
