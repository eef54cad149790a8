/* SPDX-License-Identifier: MIT */
#include "option.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool local_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
	       c == '-';
}

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-';
}

/* A domain: LDH labels of 1-63 bytes separated by single dots. */
static bool domain_valid(const char *d, size_t len)
{
	size_t label = 0;

	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (d[i] == '.') {
			if (label == 0 || d[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!label_char(d[i]) || (label == 0 && d[i] == '-') ||
		    ++label > 63)
			return false;
	}
	return label > 0 && d[len - 1] != '-';
}

int ga_address_valid(const char *s)
{
	const char *at = strchr(s, '@');
	size_t len = strlen(s), local;

	if (!at || len > GA_ADDRESS_MAX || strchr(at + 1, '@'))
		return 0;
	local = (size_t)(at - s);
	if (local == 0 || local > 64 || s[0] == '.' || s[local - 1] == '.')
		return 0;
	for (size_t i = 0; i < local; i++)
		if (!local_char(s[i]) || (s[i] == '.' && s[i + 1] == '.'))
			return 0;
	return domain_valid(at + 1, len - local - 1);
}

/* Show at most 64 bytes of untrusted S, non-printables as '?'. */
static void sanitize(char *out, size_t size, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < size && i < 64; i++)
		out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (len > 64 && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static bool domain_allowed(const char *addr, const char *allowed)
{
	const char *dom = strchr(addr, '@') + 1;
	size_t dlen = strlen(dom);

	for (const char *p = allowed; p && *p;) {
		const char *end = strchrnul(p, ',');
		const char *b = p, *e = end;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if ((size_t)(e - b) == dlen && !strncasecmp(b, dom, dlen))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

#define NO_OWNER_DOMAIN                                                        \
	"cannot form the job owner's mail address: the administrator must "    \
	"set [recipients] owner_domain in gpualert.conf (owners are mailed "   \
	"as USER@owner_domain)"

/* -ENXIO: owner_domain is empty.  It is never guessed: user@localhost
 * would be accepted by the relay and lost. */
static int owner_address(const struct ga_config *cfg, const char *user,
                         char *out, size_t size)
{
	const char *dom = cfg->owner_domain;

	out[0] = '\0';
	if (!dom || !*dom)
		return -ENXIO;
	if (!user || !*user ||
	    (size_t)snprintf(out, size, "%s@%s", user, dom) >= size ||
	    !ga_address_valid(out))
		return -EINVAL;
	return 0;
}

static int add(struct ga_alert *a, const char *addr, size_t len)
{
	char *d = strndup(addr, len);

	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_recipients; i++)
		if (!strcasecmp(a->recipients[i], d)) {
			free(d); /* a duplicate is harmless: drop it */
			return 0;
		}
	a->recipients[a->n_recipients++] = d;
	return 0;
}

void ga_alert_finish(struct ga_alert *a)
{
	for (size_t i = 0; i < a->n_recipients; i++)
		free(a->recipients[i]);
	free(a->webhook_url);
	memset(a, 0, sizeof(*a));
}

int ga_alert_to_report(const struct ga_alert *a, struct ga_report *r)
{
	int rc = ga_report_set(&r->mode, ga_mode_name(a->mode));

	for (size_t i = 0; !rc && i < a->n_recipients; i++)
		rc = ga_report_add_recipient(r, a->recipients[i]);
	if (!rc)
		rc = ga_report_set(&r->notify, ga_notify_name(a->notify));
	if (!rc && a->webhook_url) {
		rc = ga_report_set(&r->webhook_url, a->webhook_url);
		if (!rc)
			rc = ga_report_set(
			        &r->webhook_format,
			        ga_chat_format_name(a->webhook_format));
	}
	return rc < 0 ? rc : 0;
}

static int parse_webhook(const char *dest, const struct ga_config *cfg,
                         struct ga_alert *a, char *err, size_t errsz)
{
	const char *url;
	enum ga_chat_format f;

	a->mode = GA_MODE_WEBHOOK;
	if (!dest) {
		if (cfg->webhook_url && *cfg->webhook_url)
			return 0;
		snprintf(err, errsz,
		         "this cluster has no webhook configured; use email%s",
		         cfg->webhook_allowed_hosts &&
		                         *cfg->webhook_allowed_hosts
		                 ? " or webhook:URL to your own chat"
		                 : "");
		return -EINVAL;
	}
	if (!cfg->webhook_allowed_hosts || !*cfg->webhook_allowed_hosts) {
		snprintf(err, errsz,
		         "webhooks to your own chat are not enabled on this "
		         "cluster ([webhook] allowed_hosts is empty)");
		return -EINVAL;
	}
	if (ga_chat_dest_parse(dest, cfg->webhook_allowed_hosts, &f, &url, err,
	                       errsz) < 0)
		return -EINVAL;
	a->webhook_url = strdup(url);
	if (!a->webhook_url)
		return -ENOMEM;
	a->webhook_format = f;
	return 0;
}

int ga_alert_parse(const char *value, const struct ga_config *cfg,
                   const char *user, struct ga_alert *a, char *err,
                   size_t errsz)
{
	char owner[GA_ADDRESS_MAX + 2], shown[96];
	const char *list = NULL;
	size_t max = cfg->max_recipients ? cfg->max_recipients : 1;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	err[0] = '\0';
	a->notify = cfg->notify;
	if (max > GA_REPORT_MAX_RECIPIENTS)
		max = GA_REPORT_MAX_RECIPIENTS;
	if (!value) {
		a->mode = cfg->default_mode;
		if (a->mode == GA_MODE_EMAIL) {
			rc = owner_address(cfg, user, owner, sizeof(owner));
			if (rc < 0) {
				snprintf(err, errsz, "%s",
				         rc == -ENXIO ? NO_OWNER_DOMAIN
				                      : "cannot form the job "
				                        "owner's mail address");
				return -EINVAL;
			}
			return add(a, owner, strlen(owner));
		}
		return 0;
	}
	if (strlen(value) > GA_OPTION_VALUE_MAX) {
		snprintf(err, errsz, "the value is longer than %d bytes",
		         GA_OPTION_VALUE_MAX);
		return -EINVAL;
	}
	if (!strncmp(value, "fail:", 5)) {
		a->notify = GA_NOTIFY_FAIL;
		value += 5;
	} else if (!strncmp(value, "always:", 7)) {
		a->notify = GA_NOTIFY_ALWAYS;
		value += 7;
	}
	if (!strcmp(value, "off")) {
		a->mode = GA_MODE_OFF;
		return 0;
	}
	if (!strcmp(value, "log")) {
		a->mode = GA_MODE_LOG;
		return 0;
	}
	if (!strcmp(value, "webhook") || !strncmp(value, "webhook:", 8)) {
		rc = parse_webhook(value[7] ? value + 8 : NULL, cfg, a, err,
		                   errsz);
		if (rc < 0)
			ga_alert_finish(a);
		return rc;
	}
	if (!strcmp(value, "email")) {
		a->mode = GA_MODE_EMAIL;
	} else if (!strncmp(value, "email:", 6)) {
		a->mode = GA_MODE_EMAIL;
		list = value + 6;
	} else {
		sanitize(shown, sizeof(shown), value, strlen(value));
		snprintf(err, errsz,
		         "unknown mode '%s' (use [fail:|always:] then off, "
		         "log, email, email:ADDR[,ADDR...], webhook or "
		         "webhook:URL)",
		         shown);
		return -EINVAL;
	}
	rc = owner_address(cfg, user, owner, sizeof(owner));
	if (rc < 0 && !list) {
		snprintf(err, errsz, "%s",
		         rc == -ENXIO ? NO_OWNER_DOMAIN
		                      : "cannot form the job owner's mail "
		                        "address");
		return -EINVAL;
	}
	rc = 0;
	if (!list)
		return add(a, owner, strlen(owner));
	if (!*list) {
		snprintf(err, errsz,
		         "email: needs at least one address after ':'");
		return -EINVAL;
	}
	for (const char *p = list; rc == 0;) {
		const char *end = strchrnul(p, ',');
		size_t len = (size_t)(end - p);
		char addr[GA_ADDRESS_MAX + 1];

		if (len == 0 || len > GA_ADDRESS_MAX) {
			snprintf(err, errsz,
			         "an empty or over-long address in the list");
			rc = -EINVAL;
			break;
		}
		memcpy(addr, p, len);
		addr[len] = '\0';
		sanitize(shown, sizeof(shown), addr, len);
		if (!ga_address_valid(addr)) {
			snprintf(
			        err, errsz,
			        "'%s' is not a plain mail address "
			        "(user@domain; no spaces, quotes, <> or control characters)",
			        shown);
			rc = -EINVAL;
			break;
		}
		if (strcasecmp(addr, owner) &&
		    (cfg->recipient_policy == GA_RECIPIENTS_OWNER ||
		     !domain_allowed(addr, cfg->allowed_domains))) {
			if (cfg->recipient_policy == GA_RECIPIENTS_OWNER)
				snprintf(err, errsz,
				         "'%s' is not allowed: this cluster "
				         "mails only the job owner (%s)",
				         shown, owner);
			else
				snprintf(err, errsz,
				         "'%s' is not allowed: its domain is "
				         "not one of %s",
				         shown,
				         cfg->allowed_domains &&
				                         *cfg->allowed_domains
				                 ? cfg->allowed_domains
				                 : "(none)");
			rc = -EINVAL;
			break;
		}
		if (a->n_recipients >= max) {
			snprintf(err, errsz, "more than %zu recipients", max);
			rc = -EINVAL;
			break;
		}
		rc = add(a, addr, len);
		if (!*end)
			break;
		p = end + 1;
	}
	if (rc < 0)
		ga_alert_finish(a);
	return rc;
}
