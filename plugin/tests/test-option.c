/* SPDX-License-Identifier: MIT */
/* plugin/option: --gpualert values, addresses, recipient policy. */
#include "option.h"

#include <errno.h>
#include <string.h>

#include "tap.h"

static int parse(const struct ga_config *cfg, const char *v, struct ga_alert *a,
                 char *err)
{
	return ga_alert_parse(v, cfg, "alice", a, err, 512);
}

int main(void)
{
	struct ga_config cfg;
	struct ga_alert a;
	char err[512], big[2000];

	ga_config_init(&cfg);
	ga_config_set(&cfg, "owner_domain", "example.org", "test", NULL);

	ok(parse(&cfg, NULL, &a, err) == 0 && a.mode == GA_MODE_LOG,
	   "absent: the default mode (log)");
	ga_alert_finish(&a);
	ok(parse(&cfg, "email", &a, err) == 0 && a.mode == GA_MODE_EMAIL &&
	           a.n_recipients == 1 &&
	           !strcmp(a.recipients[0], "alice@example.org"),
	   "email: the owner's address");
	ga_alert_finish(&a);
	ok(parse(&cfg, "off", &a, err) == 0 && a.mode == GA_MODE_OFF, "off");
	ok(parse(&cfg, "log", &a, err) == 0 && a.mode == GA_MODE_LOG, "log");
	ok(parse(&cfg, "webhook", &a, err) == -EINVAL &&
	           strstr(err, "no webhook configured"),
	   "webhook without [webhook] url: refused: %s", err);
	ga_config_set(&cfg, "webhook.url", "https://chat.example.org/hooks/x",
	              "test", NULL);
	ok(parse(&cfg, "webhook", &a, err) == 0 && a.mode == GA_MODE_WEBHOOK &&
	           !a.webhook_url,
	   "webhook: the admin's");
	ga_alert_finish(&a);
	ok(parse(&cfg, "webhook:https://hooks.slack.com/services/T/B/x", &a,
	         err) == -EINVAL &&
	           strstr(err, "not enabled"),
	   "own webhook, no allowed_hosts: refused: %s", err);
	ga_config_set(&cfg, "webhook.allowed_hosts",
	              "hooks.slack.com, ntfy.example.org, 127.0.0.1:18320",
	              "test", NULL);
	ok(parse(&cfg, "fail:webhook:https://hooks.slack.com/services/T/B/x",
	         &a, err) == 0 &&
	           a.mode == GA_MODE_WEBHOOK && a.notify == GA_NOTIFY_FAIL &&
	           a.webhook_format == GA_CHAT_SLACK &&
	           !strcmp(a.webhook_url,
	                   "https://hooks.slack.com/services/T/B/x"),
	   "fail:webhook:URL to an allowed host");
	ga_alert_finish(&a);
	ok(parse(&cfg, "webhook:ntfy:https://ntfy.example.org/alice", &a,
	         err) == 0 &&
	           a.webhook_format == GA_CHAT_NTFY,
	   "ntfy format");
	ga_alert_finish(&a);
	ok(parse(&cfg, "webhook:teams:http://127.0.0.1:18320/hook", &a, err) ==
	                   0 &&
	           a.webhook_format == GA_CHAT_TEAMS,
	   "teams format, allowed host:port");
	ga_alert_finish(&a);
	ok(parse(&cfg, "webhook:http://127.0.0.1:18321/hook", &a, err) ==
	           -EINVAL,
	   "same host, other port: refused: %s", err);
	ok(parse(&cfg, "webhook:https://evil.example.com/x", &a, err) ==
	                   -EINVAL &&
	           strstr(err, "not allowed"),
	   "host not listed: refused: %s", err);
	ok(parse(&cfg, "webhook:https://hooks.slack.com@evil.example.com/x", &a,
	         err) == -EINVAL,
	   "user-info trick refused: %s", err);
	ok(parse(&cfg, "webhook:https://hooks.slack.com.evil.example.com/x", &a,
	         err) == -EINVAL,
	   "suffix trick refused");
	ok(parse(&cfg, "webhook:https://hooks.slack.com/a b", &a, err) ==
	           -EINVAL,
	   "space in the URL refused");
	ok(parse(&cfg, "webhook:irc:https://hooks.slack.com/x", &a, err) ==
	           -EINVAL,
	   "unknown format refused");
	ok(parse(&cfg, "webhook:ftp://hooks.slack.com/x", &a, err) == -EINVAL,
	   "other scheme refused");
	ok(parse(&cfg, "fail:email", &a, err) == 0 &&
	           a.notify == GA_NOTIFY_FAIL && a.mode == GA_MODE_EMAIL,
	   "fail:email");
	ga_alert_finish(&a);
	ok(parse(&cfg, "always:log", &a, err) == 0 &&
	           a.notify == GA_NOTIFY_ALWAYS && a.mode == GA_MODE_LOG,
	   "always:log");
	ok(parse(&cfg, "email", &a, err) == 0 && a.notify == GA_NOTIFY_ALWAYS,
	   "no WHEN: the site default (always)");
	ga_alert_finish(&a);
	ga_config_set(&cfg, "general.notify", "fail", "test", NULL);
	ok(parse(&cfg, "email", &a, err) == 0 && a.notify == GA_NOTIFY_FAIL,
	   "no WHEN: the site default (fail)");
	{
		struct ga_report r;

		ga_report_init(&r);
		ok(ga_alert_to_report(&a, &r) == 0 && r.notify &&
		           !strcmp(r.notify, "fail") && r.n_recipients == 1 &&
		           !strcmp(r.mode, "email"),
		   "the choice reaches the report");
		ga_report_finish(&r);
	}
	ga_alert_finish(&a);
	ok(parse(&cfg, "fail:", &a, err) == -EINVAL, "fail: alone refused");
	ok(parse(&cfg, "mail", &a, err) == -EINVAL &&
	           strstr(err, "unknown mode"),
	   "unknown mode: %s", err);
	ok(parse(&cfg, "email:bob@example.org", &a, err) == -EINVAL &&
	           strstr(err, "only the job owner"),
	   "policy owner: another address refused: %s", err);
	ok(parse(&cfg, "email:alice@example.org", &a, err) == 0,
	   "policy owner: own address");
	ga_alert_finish(&a);

	ga_config_set(&cfg, "policy", "domains", "test", NULL);
	ga_config_set(&cfg, "allowed_domains", "example.org, lab.example.net",
	              "test", NULL);
	ok(parse(&cfg, "email:bob@example.org,carol@LAB.example.net", &a,
	         err) == 0 &&
	           a.n_recipients == 2,
	   "policy domains: allowed domains");
	ga_alert_finish(&a);
	ok(parse(&cfg, "email:eve@evil.com", &a, err) == -EINVAL,
	   "policy domains: other domain: %s", err);
	ok(parse(&cfg, "email:a b@example.org", &a, err) == -EINVAL,
	   "space refused");
	ok(parse(&cfg, "email:x@example.org\r\nRCPT TO:<y@evil.com>", &a,
	         err) == -EINVAL &&
	           !strchr(err, '\r') && !strchr(err, '\n'),
	   "CR/LF refused, not echoed raw: %s", err);
	ok(parse(&cfg, "email:\"x\"@example.org", &a, err) == -EINVAL,
	   "quotes refused");
	ok(parse(&cfg, "email:<x@example.org>", &a, err) == -EINVAL,
	   "angle brackets refused");
	ok(parse(&cfg, "email:%n%s@example.org", &a, err) == -EINVAL,
	   "format characters refused");
	ok(parse(&cfg, "email:../../etc@example.org", &a, err) == -EINVAL,
	   "'..' in the local part refused");
	ok(parse(&cfg, "email:", &a, err) == -EINVAL, "empty list refused");
	ok(parse(&cfg, "email:a@example.org,,b@example.org", &a, err) ==
	           -EINVAL,
	   "empty item refused");
	ok(parse(&cfg,
	         "email:a@example.org,b@example.org,c@example.org,d@example.org,"
	         "e@example.org,f@example.org",
	         &a, err) == -EINVAL &&
	           strstr(err, "more than 5"),
	   "more than max_recipients refused: %s", err);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(parse(&cfg, big, &a, err) == -EINVAL, "over-long value refused");
	ok(ga_address_valid("a.b+tag@sub-domain.example.org"),
	   "plain address accepted");
	ok(!ga_address_valid("a@-bad.org") && !ga_address_valid("a@bad..org") &&
	           !ga_address_valid("a@@b.org") && !ga_address_valid("@b.org"),
	   "malformed addresses refused");
	ga_config_finish(&cfg);

	/* No owner_domain: never guessed (user@localhost would be lost);
	 * the message says what to set. */
	ga_config_init(&cfg);
	ok(parse(&cfg, "email", &a, err) == -EINVAL &&
	           strstr(err, "set [recipients] owner_domain"),
	   "empty owner_domain refused: %s", err);
	ga_config_set(&cfg, "default_mode", "email", "test", NULL);
	ok(parse(&cfg, NULL, &a, err) == -EINVAL &&
	           strstr(err, "set [recipients] owner_domain"),
	   "... also for default_mode = email: %s", err);
	ok(parse(&cfg, "log", &a, err) == 0, "... log mode needs no address");
	ga_alert_finish(&a);
	ga_config_finish(&cfg);
	return tap_done();
}
