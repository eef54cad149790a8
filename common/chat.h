/* SPDX-License-Identifier: MIT */
/* Chat destinations: the admin's [webhook] url or a user's own webhook
 * (--gpualert=webhook:[FORMAT:]URL), the payload each format expects, and
 * the host check that keeps user-given URLs to the hosts the admin lists.
 * No network here (the POST is in webhook.c).  The destination check,
 * which the plugin runs on --gpualert, is in chat_dest.h. */
#ifndef GPUALERT_COMMON_CHAT_H
#define GPUALERT_COMMON_CHAT_H

#include <stddef.h>

#include "buf.h"
#include "chat_dest.h"
#include "mime.h"
#include "util.h"

/* The payload for M in FORMAT: Slack/Mattermost {"text": ...} with '&',
 * '<' and '>' escaped as entities (Slack's markup: no "<!channel>" or
 * disguised "<url|text>" link from a job name) and "@word" mentions broken
 * with U+2060; Teams an Adaptive Card whose text has its Markdown
 * characters backslash-escaped; ntfy plain text (TITLE receives the title
 * for its header: printable ASCII, at most TITLE_SIZE - 1 bytes).  Returns
 * 0, -EINVAL (no reports) or -ENOMEM. */
GA_MUST_CHECK int ga_chat_payload(const struct ga_mail *m,
                                  enum ga_chat_format format,
                                  struct ga_buf *out, char *title,
                                  size_t title_size);

#endif
