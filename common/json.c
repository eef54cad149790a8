/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <errno.h>
#include <stdlib.h>
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

/* Append the UTF-8 sequence at P, or U+FFFD for an invalid byte; returns
 * the bytes consumed (at least 1). */
static size_t put_char(struct ga_buf *out, const unsigned char *p, size_t avail)
{
	size_t n = ga_utf8_seq_len(p, avail);

	if (n == 0) {
		ga_buf_puts(out, replacement);
		return 1;
	}
	ga_buf_append(out, p, n);
	return n;
}

void ga_json_string(struct ga_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	ga_buf_putc(out, '"');
	while (i < len) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			ga_buf_putc(out, '\\');
			ga_buf_putc(out, (char)c);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n':
				ga_buf_puts(out, "\\n");
				break;
			case '\r':
				ga_buf_puts(out, "\\r");
				break;
			case '\t':
				ga_buf_puts(out, "\\t");
				break;
			default:
				ga_buf_printf(out, "\\u%04x", c);
				break;
			}
			i++;
			continue;
		}
		i += put_char(out, p + i, len - i);
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

		if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
			i++;
			continue;
		}
		i += put_char(out, p + i, len - i);
	}
}

/* ---- parsing --------------------------------------------------------- */

struct parser {
	const char *p, *end;
	const char *err;
};

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
	                           *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool fail(struct parser *ps, const char *err)
{
	if (!ps->err)
		ps->err = err;
	return false;
}

static int hex4(const char *s, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct ga_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	ga_buf_append(b, u, n);
}

static bool parse_string(struct parser *ps, char **out, size_t *out_len)
{
	struct ga_buf b;

	ga_buf_init(&b);
	ps->p++; /* opening quote */
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;

		if (c < 0x20) {
			ga_buf_finish(&b);
			return fail(ps, "control character in string");
		}
		if (c != '\\') {
			size_t n = ga_utf8_seq_len((const unsigned char *)ps->p,
			                           (size_t)(ps->end - ps->p));

			if (n == 0) {
				ga_buf_finish(&b);
				return fail(ps, "invalid UTF-8 in string");
			}
			ga_buf_append(&b, ps->p, n);
			ps->p += n;
			continue;
		}
		if (ps->end - ps->p < 2)
			break;
		ps->p++;
		switch (*ps->p) {
		case '"':
			ga_buf_putc(&b, '"');
			break;
		case '\\':
			ga_buf_putc(&b, '\\');
			break;
		case '/':
			ga_buf_putc(&b, '/');
			break;
		case 'b':
			ga_buf_putc(&b, '\b');
			break;
		case 'f':
			ga_buf_putc(&b, '\f');
			break;
		case 'n':
			ga_buf_putc(&b, '\n');
			break;
		case 'r':
			ga_buf_putc(&b, '\r');
			break;
		case 't':
			ga_buf_putc(&b, '\t');
			break;
		case 'u': {
			uint32_t cp, lo;

			if (ps->end - ps->p < 5 || hex4(ps->p + 1, &cp) < 0) {
				ga_buf_finish(&b);
				return fail(ps, "bad \\u escape");
			}
			ps->p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (ps->end - ps->p < 7 || ps->p[1] != '\\' ||
				    ps->p[2] != 'u' ||
				    hex4(ps->p + 3, &lo) < 0 || lo < 0xdc00 ||
				    lo > 0xdfff) {
					ga_buf_finish(&b);
					return fail(ps, "unpaired surrogate");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				ps->p += 6;
			} else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
				ga_buf_finish(&b);
				return fail(ps, "bad \\u escape");
			}
			put_utf8(&b, cp);
			break;
		}
		default:
			ga_buf_finish(&b);
			return fail(ps, "bad escape in string");
		}
		ps->p++;
	}
	if (ps->p >= ps->end) {
		ga_buf_finish(&b);
		return fail(ps, "unterminated string");
	}
	ps->p++; /* closing quote */
	*out_len = b.len;
	*out = ga_buf_steal(&b);
	return *out ? true : fail(ps, "out of memory");
}

static bool parse_value(struct parser *ps, struct ga_json *v, int depth);

static bool push_item(struct parser *ps, struct ga_json *v, char *key)
{
	struct ga_json *items;

	items = realloc(v->items, (v->n + 1) * sizeof(*items));
	if (!items) {
		free(key);
		return fail(ps, "out of memory");
	}
	v->items = items;
	memset(&items[v->n], 0, sizeof(items[0]));
	if (v->type == GA_JSON_OBJECT) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (!keys) {
			free(key);
			return fail(ps, "out of memory");
		}
		v->keys = keys;
		keys[v->n] = key;
	}
	v->n++;
	return true;
}

static bool parse_container(struct parser *ps, struct ga_json *v, int depth)
{
	char close = *ps->p == '[' ? ']' : '}';

	v->type = close == ']' ? GA_JSON_ARRAY : GA_JSON_OBJECT;
	if (depth >= GA_JSON_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;
		size_t klen;

		skip_ws(ps);
		if (v->type == GA_JSON_OBJECT) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a key");
			if (!parse_string(ps, &key, &klen))
				return false;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail(ps, "expected ':'");
			}
			ps->p++;
		}
		if (!push_item(ps, v, key))
			return false;
		if (!parse_value(ps, &v->items[v->n - 1], depth + 1))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return true;
		}
		return fail(ps, "expected ',' or a closing bracket");
	}
}

static bool parse_number(struct parser *ps, struct ga_json *v)
{
	const char *s = ps->p;
	char tmp[64];
	size_t n;
	char *end;

	while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p))
		ps->p++;
	n = (size_t)(ps->p - s);
	if (n == 0 || n >= sizeof(tmp))
		return fail(ps, "bad number");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	v->type = GA_JSON_NUMBER;
	v->number = strtod(tmp, &end);
	if (*end)
		return fail(ps, "bad number");
	if (!strpbrk(tmp, ".eE")) {
		long long i;

		errno = 0;
		i = strtoll(tmp, &end, 10);
		if (!errno && !*end) {
			v->is_int = true;
			v->integer = i;
		}
	}
	return true;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, "unexpected character");
	ps->p += n;
	return true;
}

static bool parse_value(struct parser *ps, struct ga_json *v, int depth)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end of input");
	switch (*ps->p) {
	case '{':
	case '[':
		return parse_container(ps, v, depth);
	case '"':
		v->type = GA_JSON_STRING;
		return parse_string(ps, &v->string, &v->string_len);
	case 't':
		v->type = GA_JSON_BOOL;
		v->boolean = true;
		return literal(ps, "true");
	case 'f':
		v->type = GA_JSON_BOOL;
		return literal(ps, "false");
	case 'n':
		v->type = GA_JSON_NULL;
		return literal(ps, "null");
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps, v);
		return fail(ps, "unexpected character");
	}
}

static void free_value(struct ga_json *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_value(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
}

void ga_json_free(struct ga_json *v)
{
	if (!v)
		return;
	free_value(v);
	free(v);
}

struct ga_json *ga_json_parse(const char *text, size_t len, const char **err)
{
	struct parser ps = {text, text + len, NULL};
	struct ga_json *v = calloc(1, sizeof(*v));

	if (!v) {
		if (err)
			*err = "out of memory";
		return NULL;
	}
	if (parse_value(&ps, v, 0)) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			fail(&ps, "trailing data after the value");
	}
	if (ps.err) {
		if (err)
			*err = ps.err;
		ga_json_free(v);
		return NULL;
	}
	return v;
}

const struct ga_json *ga_json_get(const struct ga_json *v, const char *key)
{
	if (!v || v->type != GA_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

const char *ga_json_get_str(const struct ga_json *v, const char *key)
{
	const struct ga_json *s = ga_json_get(v, key);

	return s && s->type == GA_JSON_STRING ? s->string : NULL;
}

bool ga_json_get_int(const struct ga_json *v, const char *key, int64_t *out)
{
	const struct ga_json *n = ga_json_get(v, key);

	if (!n || n->type != GA_JSON_NUMBER || !n->is_int)
		return false;
	*out = n->integer;
	return true;
}
