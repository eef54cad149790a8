/* SPDX-License-Identifier: MIT */
/* A growable byte buffer, always NUL-terminated for convenience. */
#ifndef GPUALERT_COMMON_BUF_H
#define GPUALERT_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct ga_buf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len; /* bytes used, excluding the NUL */
	size_t cap;
	bool failed; /* an allocation failed: contents are incomplete */
};

/* Caller storage: init zeroes, finish frees.  Appends never fail loudly:
 * on ENOMEM they set ->failed and drop the data, so a writer can build a
 * whole document and check once at the end. */
void ga_buf_init(struct ga_buf *b);
void ga_buf_finish(struct ga_buf *b);
void ga_buf_reset(struct ga_buf *b);

void ga_buf_append(struct ga_buf *b, const void *data, size_t len);
void ga_buf_puts(struct ga_buf *b, const char *s);
void ga_buf_putc(struct ga_buf *b, char c);
void ga_buf_printf(struct ga_buf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Append S (LEN bytes) as HTML/XML text: & < > " escaped, C0 control
 * characters other than tab and newline dropped (XML 1.0 forbids them
 * even escaped). */
void ga_buf_put_markup(struct ga_buf *b, const char *s, size_t len);

/* Hand the data over to the caller (who frees it) and reset B.  Returns
 * NULL if any append failed (the data is freed then). Returns "" (heap) for
 * an empty buffer. */
GA_MUST_CHECK char *ga_buf_steal(struct ga_buf *b);

/* Read the whole file at PATH, at most MAX bytes (-EFBIG past that).
 * Returns 0 or -errno; on success *OUT is heap memory, NUL-terminated. */
GA_MUST_CHECK int ga_read_file(const char *path, size_t max, char **out,
                               size_t *out_len);

#endif
