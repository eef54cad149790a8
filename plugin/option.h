/* SPDX-License-Identifier: MIT */
/* The --gpualert[=MODE] value: parsing and validation against the admin's
 * recipient policy.  Slurm-free (unit-tested); the same code checks the
 * value at submission (srun/sbatch/salloc) and again in slurmstepd, where
 * it arrives from the user's environment and is therefore untrusted. */
#ifndef GPUALERT_PLUGIN_OPTION_H
#define GPUALERT_PLUGIN_OPTION_H

#include <stddef.h>

#include "chat.h"
#include "config.h"
#include "report.h"

#define GA_OPTION_VALUE_MAX 1024
#define GA_ADDRESS_MAX 254

struct ga_alert {
	enum ga_mode mode;
	enum ga_notify notify; /* when to send: always, or failures only */
	char *recipients[GA_REPORT_MAX_RECIPIENTS];
	size_t n_recipients;
	char *webhook_url; /* a user's own webhook; NULL: the admin's */
	enum ga_chat_format webhook_format;
};

/* VALUE NULL means the option was absent: the admin's default_mode (with
 * the owner as recipient for email).  "" and a bare --gpualert (optional
 * argument absent) are passed as NULL by the caller when meant as
 * "email"; see plugin/local.c.  USER is the job owner's name.
 *
 * VALUE := [WHEN:]MODE
 * WHEN  := fail | always      (default: [general] notify)
 * MODE  := off | log | email | email:ADDR[,ADDR...] | webhook
 *        | webhook:[FORMAT:]URL   (FORMAT: slack, mattermost, teams, ntfy)
 *
 * "fail:" sends only when the job failed or gpualert found a problem
 * (Slurm's MailType=FAIL, plus a NaN after exit 0); the report is still
 * spooled and counted.  A bare "webhook" is refused when the admin set no
 * [webhook] url; "webhook:URL" only when URL's host is in [webhook]
 * allowed_hosts (ga_chat_dest_parse).
 *
 * Returns 0, -EINVAL with a message for the user in ERR (never containing
 * raw user bytes: the offending address is shown sanitised and bounded),
 * or -ENOMEM.  A is initialised here; release with ga_alert_finish. */
int ga_alert_parse(const char *value, const struct ga_config *cfg,
                   const char *user, struct ga_alert *a, char *err,
                   size_t errsz);
void ga_alert_finish(struct ga_alert *a);

/* Copy A's delivery choice into report R: mode, recipients, notify and
 * the user's webhook.  Returns 0 or -ENOMEM. */
int ga_alert_to_report(const struct ga_alert *a, struct ga_report *r);

/* Is S a plain address we accept (local@domain, [A-Za-z0-9._+-] local part
 * up to 64 bytes, LDH labels, at most GA_ADDRESS_MAX bytes)? */
int ga_address_valid(const char *s);

#endif
