/* SPDX-License-Identifier: MIT */
/* Delivery over SMTP (libcurl, the way curl's docs/examples/smtp-tls.c
 * shows) and the classification of what went wrong, which decides between
 * retrying later and the dead-letter folder.
 */
#ifndef GPUALERT_COMMON_SMTP_H
#define GPUALERT_COMMON_SMTP_H

#include <stddef.h>

#include "config.h"
#include "util.h"

enum ga_send_result {
	GA_SEND_OK = 0, /* the server accepted the message */
	GA_SEND_RETRY,  /* transient: connection, timeout, 4xx */
	GA_SEND_FAIL,   /* permanent: 5xx; dead-letter it */
};

/* Read "user:password" (the first line) from PATH into USER and PASS.
 * Refused with -EPERM when the file is readable or writable by group or
 * others, or owned by someone other than root or the caller, since it
 * holds the relay's password.  Returns 0, -EPERM, -EINVAL (no ':' or too
 * long) or -errno. */
GA_MUST_CHECK int ga_smtp_read_credentials(const char *path, char *user,
                                           size_t user_size, char *pass,
                                           size_t pass_size);

/* Send MSG (LEN bytes, a complete RFC 5322 message with CRLF line ends)
 * to the N addresses in RCPT with CFG's [mail] settings: one easy handle,
 * explicit MAIL FROM, TLS as configured (starttls and implicit refuse to
 * continue in the clear), connect and total timeouts.  ERR (ERR_SIZE
 * bytes) receives a one-line explanation on failure, including the
 * server's reply code.  Needs curl_global_init() done by the caller. */
GA_MUST_CHECK enum ga_send_result ga_smtp_send(const struct ga_config *cfg,
                                               const char *const *rcpt,
                                               size_t n, const char *msg,
                                               size_t len, char *err,
                                               size_t err_size);

/* Classify a libcurl result and the last SMTP/HTTP reply code.  Exposed
 * for the unit tests. */
enum ga_send_result ga_smtp_classify(int curl_code, long reply);

#endif
