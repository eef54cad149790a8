/* JSON output helpers.  Reports travel as JSON (README.md, "Report
 * schema"); everything written here is valid UTF-8 whatever the input. */
#ifndef GPUALERT_COMMON_JSON_H
#define GPUALERT_COMMON_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

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

#endif
