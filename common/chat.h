/* SPDX-License-Identifier: MIT */
/* Chat destinations: the admin's [webhook] url or a user's own webhook
 * (--gpualert=webhook:[FORMAT:]URL), the payload each format expects, and
 * the host check that keeps user-given URLs to the hosts the admin lists.
 * No network here (the POST is in webhook.c), so the plugin can link it. */
#ifndef GPUALERT_COMMON_CHAT_H
#define GPUALERT_COMMON_CHAT_H

#include <stddef.h>

#include "buf.h"
#include "mime.h"

#define GA_CHAT_URL_MAX 512

enum ga_chat_format {
	GA_CHAT_SLACK = 0, /* Slack and Mattermost incoming webhooks */
	GA_CHAT_TEAMS, /* Microsoft Teams workflow webhook (Adaptive Card) */
	GA_CHAT_NTFY,  /* ntfy: plain text POST to the topic URL */
};

/* "slack" (also "mattermost"), "teams", "ntfy"; -1 if unknown. */
int ga_chat_format_from_name(const char *name, size_t len);
const char *ga_chat_format_name(enum ga_chat_format f);

/* Split a destination "[FORMAT:]URL" (FORMAT defaults to slack) and check
 * URL: http:// or https://, at most GA_CHAT_URL_MAX bytes of printable
 * ASCII without spaces, quotes, angle brackets, backslashes or braces, no
 * user-info ('@' before the path), and a host (or host:port) listed in
 * ALLOWED (comma-separated; an entry without a port allows the host on
 * any port).  Returns 0 with *FORMAT and *URL (pointing into DEST), or
 * -EINVAL with a message for the user in WHY (no raw user bytes beyond a
 * sanitised, bounded host). */
int ga_chat_dest_parse(const char *dest, const char *allowed,
                       enum ga_chat_format *format, const char **url, char *why,
                       size_t why_size);

/* The payload for M in FORMAT: Slack/Mattermost {"text": ...} with '&',
 * '<' and '>' escaped as entities (Slack's markup: no "<!channel>" or
 * disguised "<url|text>" link from a job name) and "@word" mentions broken
 * with U+2060; Teams an Adaptive Card whose text has its Markdown
 * characters backslash-escaped; ntfy plain text (TITLE receives the title
 * for its header: printable ASCII, at most TITLE_SIZE - 1 bytes).  Returns
 * 0, -EINVAL (no reports) or -ENOMEM. */
int ga_chat_payload(const struct ga_mail *m, enum ga_chat_format format,
                    struct ga_buf *out, char *title, size_t title_size);

/* The content type of FORMAT's payload (static string). */
const char *ga_chat_content_type(enum ga_chat_format format);

#endif
