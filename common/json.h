/* SPDX-License-Identifier: MIT */
/* JSON output helpers.  Reports travel as JSON (README.md, "Report
 * schema"); everything written here is valid UTF-8 whatever the input. */
#ifndef GPUALERT_COMMON_JSON_H
#define GPUALERT_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "util.h"

/* Append S (LEN bytes, any content) as a quoted JSON string.  Control
 * characters are escaped, and bytes that are not valid UTF-8 become
 * U+FFFD, so logs with binary junk still produce valid JSON. */
void ga_json_string(struct ga_buf *out, const char *s, size_t len);

/* Same for a NUL-terminated string; NULL writes null. */
void ga_json_str(struct ga_buf *out, const char *s);

/* Append `"key":` (KEY is trusted ASCII) preceded by a comma unless
 * *FIRST, which is then cleared. */
void ga_json_key(struct ga_buf *out, int *first, const char *key);

/* Copy S into OUT replacing invalid UTF-8 by U+FFFD and dropping NUL and
 * other C0 controls except tab and newline.  For text/plain mail bodies. */
void ga_utf8_sanitize(struct ga_buf *out, const char *s, size_t len);

/* Length of the valid UTF-8 sequence at S (1-4), or 0 if invalid. */
size_t ga_utf8_seq_len(const unsigned char *s, size_t avail);

/* ---- parsing -------------------------------------------------------- */

enum ga_json_type {
	GA_JSON_NULL = 0,
	GA_JSON_BOOL,
	GA_JSON_NUMBER,
	GA_JSON_STRING,
	GA_JSON_ARRAY,
	GA_JSON_OBJECT,
};

/* A parsed JSON value (a small DOM).  Strings are NUL-terminated UTF-8
 * (a "\u0000" escape is rejected, so C string functions are safe). */
struct ga_json {
	enum ga_json_type type;
	bool boolean;
	double number;
	bool is_int; /* number is an integer that fits int64 */
	int64_t integer;
	char *string;
	size_t string_len;
	struct ga_json *items; /* array elements or object values */
	char **keys;           /* object keys, parallel to items */
	size_t n;
};

#define GA_JSON_MAX_DEPTH 32

/* Parse TEXT (LEN bytes; untrusted).  Nesting is limited to
 * GA_JSON_MAX_DEPTH and the whole document must be one value.  Returns a
 * heap tree (free with ga_json_free) or NULL with *ERR (may be NULL) set
 * to a static description ("out of memory" on ENOMEM). */
GA_MUST_CHECK struct ga_json *ga_json_parse(const char *text, size_t len,
                                            const char **err);
void ga_json_free(struct ga_json *v);

/* Lookups on an object; NULL/false when V is not an object, the key is
 * missing, or the value has another type.  Pointers live as long as V. */
const struct ga_json *ga_json_get(const struct ga_json *v, const char *key);
const char *ga_json_get_str(const struct ga_json *v, const char *key);
bool ga_json_get_int(const struct ga_json *v, const char *key, int64_t *out);

#endif
