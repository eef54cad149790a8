#include "json.h"

#include <string.h>

size_t ga_utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static const char replacement[] = "\xef\xbf\xbd";

void ga_json_string(struct ga_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	ga_buf_putc(out, '"');
	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		if (c == '"' || c == '\\') {
			ga_buf_putc(out, '\\');
			ga_buf_putc(out, (char)c);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': ga_buf_puts(out, "\\n"); break;
			case '\r': ga_buf_puts(out, "\\r"); break;
			case '\t': ga_buf_puts(out, "\\t"); break;
			default: ga_buf_printf(out, "\\u%04x", c); break;
			}
			i++;
			continue;
		}
		n = ga_utf8_seq_len(p + i, len - i);
		if (n == 0) {
			ga_buf_puts(out, replacement);
			i++;
			continue;
		}
		ga_buf_append(out, p + i, n);
		i += n;
	}
	ga_buf_putc(out, '"');
}

void ga_json_str(struct ga_buf *out, const char *s)
{
	if (!s)
		ga_buf_puts(out, "null");
	else
		ga_json_string(out, s, strlen(s));
}

void ga_json_key(struct ga_buf *out, int *first, const char *key)
{
	if (!*first)
		ga_buf_putc(out, ',');
	*first = 0;
	ga_buf_printf(out, "\"%s\":", key);
}

void ga_utf8_sanitize(struct ga_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
			i++;
			continue;
		}
		n = ga_utf8_seq_len(p + i, len - i);
		if (n == 0) {
			ga_buf_puts(out, replacement);
			i++;
			continue;
		}
		ga_buf_append(out, p + i, n);
		i += n;
	}
}
