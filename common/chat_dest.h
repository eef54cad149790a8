/* SPDX-License-Identifier: MIT */
/* A chat destination as a user or the admin gives it: the payload format
 * and the URL, checked against the hosts the admin lists.  In
 * gpualert-core: the plugin checks --gpualert=webhook:... at submission. */
#ifndef GPUALERT_COMMON_CHAT_DEST_H
#define GPUALERT_COMMON_CHAT_DEST_H

#include <stddef.h>
#include "util.h"

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
GA_MUST_CHECK int ga_chat_dest_parse(const char *dest, const char *allowed,
                                     enum ga_chat_format *format,
                                     const char **url, char *why,
                                     size_t why_size);

/* The content type of FORMAT's payload (static string). */
const char *ga_chat_content_type(enum ga_chat_format format);

#endif
