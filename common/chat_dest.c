/* SPDX-License-Identifier: MIT */
#include "chat_dest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const format_names[] = {"slack", "teams", "ntfy"};

int ga_chat_format_from_name(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(*format_names);
	     i++)
		if (strlen(format_names[i]) == len &&
		    !strncmp(name, format_names[i], len))
			return (int)i;
	if (len == 10 && !strncmp(name, "mattermost", len))
		return GA_CHAT_SLACK;
	return -1;
}

const char *ga_chat_format_name(enum ga_chat_format f)
{
	if ((size_t)f >= sizeof(format_names) / sizeof(*format_names))
		return "slack";
	return format_names[f];
}

const char *ga_chat_content_type(enum ga_chat_format format)
{
	return format == GA_CHAT_NTFY ? "text/plain; charset=utf-8"
	                              : "application/json";
}

static bool url_char(unsigned char c)
{
	/* RFC 3986 unreserved, reserved and '%', minus what could break
	 * out of a quoted value or a header. */
	return c > 0x20 && c < 0x7f && !strchr("\"'<>\\^`{|}", c);
}

static bool host_allowed(const char *host, size_t hlen, const char *port,
                         size_t plen, const char *allowed)
{
	for (const char *p = allowed; p && *p;) {
		const char *end = strchrnul(p, ',');
		const char *b = p, *e = end, *colon;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		colon = memchr(b, ':', (size_t)(e - b));
		if (colon) {
			if ((size_t)(colon - b) == hlen &&
			    !strncasecmp(b, host, hlen) &&
			    (size_t)(e - colon - 1) == plen &&
			    !strncmp(colon + 1, port, plen))
				return true;
		} else if ((size_t)(e - b) == hlen &&
		           !strncasecmp(b, host, hlen)) {
			return true;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

int ga_chat_dest_parse(const char *dest, const char *allowed,
                       enum ga_chat_format *format, const char **url, char *why,
                       size_t why_size)
{
	const char *u = dest, *colon = strchr(dest, ':'), *auth, *host,
	           *port = "";
	size_t hlen, plen = 0, alen;
	int f = GA_CHAT_SLACK;

	why[0] = '\0';
	if (colon && strncmp(dest, "http://", 7) &&
	    strncmp(dest, "https://", 8)) {
		f = ga_chat_format_from_name(dest, (size_t)(colon - dest));
		if (f < 0) {
			snprintf(why, why_size,
			         "unknown webhook format (use slack, "
			         "mattermost, teams or ntfy)");
			return -EINVAL;
		}
		u = colon + 1;
	}
	if (strlen(u) > GA_CHAT_URL_MAX) {
		snprintf(why, why_size,
		         "the webhook URL is longer than %d bytes",
		         GA_CHAT_URL_MAX);
		return -EINVAL;
	}
	if (!strncmp(u, "https://", 8))
		auth = u + 8;
	else if (!strncmp(u, "http://", 7))
		auth = u + 7;
	else {
		snprintf(why, why_size,
		         "the webhook URL must start with https:// or http://");
		return -EINVAL;
	}
	for (const char *c = u; *c; c++)
		if (!url_char((unsigned char)*c)) {
			snprintf(
			        why, why_size,
			        "the webhook URL has a character that is not "
			        "allowed in a URL (space, quote, <>, \\, {} ...)");
			return -EINVAL;
		}
	alen = strcspn(auth, "/?#");
	/* No user-info: "https://allowed.example@evil.example/" names the
	 * host after the '@' (RFC 3986 section 3.2.1). */
	if (memchr(auth, '@', alen) || alen == 0) {
		snprintf(why, why_size,
		         "the webhook URL must name a host, without user@");
		return -EINVAL;
	}
	host = auth;
	hlen = strcspn(auth, ":/?#");
	if (hlen < alen) {
		port = auth + hlen + 1;
		plen = alen - hlen - 1;
		for (size_t i = 0; i < plen; i++)
			if (port[i] < '0' || port[i] > '9') {
				snprintf(why, why_size,
				         "the webhook URL has a bad port");
				return -EINVAL;
			}
	}
	for (size_t i = 0; i < hlen; i++) {
		char c = host[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '-')) {
			snprintf(why, why_size,
			         "the webhook URL's host is not a plain host "
			         "name or IPv4 address");
			return -EINVAL;
		}
	}
	if (!host_allowed(host, hlen, port, plen, allowed)) {
		snprintf(why, why_size,
		         "webhooks to %.*s%s%.*s are not allowed on this "
		         "cluster (allowed: %s)",
		         (int)(hlen > 100 ? 100 : hlen), host, plen ? ":" : "",
		         (int)(plen > 5 ? 5 : plen), port,
		         allowed && *allowed ? allowed : "none");
		return -EINVAL;
	}
	*format = (enum ga_chat_format)f;
	*url = u;
	return 0;
}
