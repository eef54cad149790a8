/* SPDX-License-Identifier: MIT */
/* Diagnostics of a parser: every problem as "file:LINE: message", kept for
 * the caller (`gpualert rules check` prints them) and logged. */
#ifndef GPUALERT_COMMON_DIAG_H
#define GPUALERT_COMMON_DIAG_H

#include <stddef.h>

struct ga_diag {
	const char *stage; /* for log lines: "gpualert: <stage>: ..." */
	char **msgs;       /* "file:LINE: error: message" */
	size_t n;
	size_t errors;
	size_t warnings;
};

/* Caller storage.  STAGE must outlive D. */
void ga_diag_init(struct ga_diag *d, const char *stage);
void ga_diag_finish(struct ga_diag *d);

/* Record and log a problem.  LINE 0 omits the line number; FILE NULL
 * omits the location.  D may be NULL: then the message is only logged. */
void ga_diag_error(struct ga_diag *d, const char *file, unsigned line,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ga_diag_warn(struct ga_diag *d, const char *file, unsigned line,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
