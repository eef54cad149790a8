/* SPDX-License-Identifier: MIT */
/* The second channel: a JSON POST to the admin's webhook, with a "text"
 * field that Slack and Mattermost incoming webhooks display as is. */
#ifndef GPUALERT_COMMON_WEBHOOK_H
#define GPUALERT_COMMON_WEBHOOK_H

#include <stddef.h>

#include "config.h"
#include "smtp.h"

/* POST BODY (LEN bytes, CONTENT_TYPE) to URL (NULL: CFG's [webhook]
 * url), with CFG's timeout.  TITLE (may be NULL; printable ASCII) goes in
 * a "Title:" header (ntfy).  2xx: OK; 408, 429, 5xx and transport errors:
 * RETRY; other 4xx: FAIL.  ERR as in ga_smtp_send. */
enum ga_send_result ga_webhook_post(const struct ga_config *cfg,
                                    const char *url, const char *content_type,
                                    const char *title, const char *body,
                                    size_t len, char *err, size_t err_size);

/* Classify an HTTP status.  Exposed for the unit tests. */
enum ga_send_result ga_webhook_classify(int curl_code, long status);

#endif
