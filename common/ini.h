/* SPDX-License-Identifier: MIT */
/* The one INI dialect of gpualert: gpualert.conf and the rules files.
 *
 * - A line ends at '\n' (a '\r' before it is dropped) and holds at most
 *   GA_INI_LINE_MAX bytes; a longer line is an error, never cut.
 * - Blank lines, and lines whose first non-blank character is '#' or ';',
 *   are comments.  There are no inline comments: a '#' or ';' after a key
 *   belongs to the value (regular expressions, URLs and lists use both).
 * - "[NAME]" alone on a line opens a section.
 * - "key = value": blanks around the key and the value are dropped; the
 *   value may be empty.
 * - There are no continuation lines.  A line that starts with a blank,
 *   follows a key and holds no '=' would continue the value in other INI
 *   dialects; here it is an error that says so, so nothing is silently
 *   dropped or replaced.
 *
 * libinih is not used: Debian 12's libinih1 (55-1) is built with its
 * default 200-byte line limit, a compile-time constant of the shared
 * library, and it treats ';' after a value as a comment, which the rules
 * files cannot have.
 */
#ifndef GPUALERT_COMMON_INI_H
#define GPUALERT_COMMON_INI_H

#include <stddef.h>

#include "diag.h"
#include "util.h"

#define GA_INI_LINE_MAX 65536

/* Called for each section header (NAME set, VALUE NULL), each key (NAME
 * the key, VALUE its value), and each line rejected by the reader, already reported to DIAG:
 * a malformed section header (NAME and VALUE NULL: the keys after it
 * belong to no section) or another line (NAME NULL, VALUE "").  Both strings live until the callback
 * returns and may be modified.  LINE counts from 1.  Return 0 to go on,
 * or a negative errno to stop the parse with that value. */
typedef int (*ga_ini_fn)(void *ctx, unsigned line, char *name, char *value);

/* Parse TEXT (LEN bytes, need not be NUL-terminated) named FILE in
 * diagnostics.  Every syntax error goes to DIAG (may be NULL) as
 * "FILE:LINE: ..." and the line is skipped.  Returns the number of syntax
 * errors (>= 0), or the callback's negative errno, or -ENOMEM. */
GA_MUST_CHECK int ga_ini_parse(const char *file, const char *text, size_t len,
                               ga_ini_fn fn, void *ctx, struct ga_diag *diag);

#endif
