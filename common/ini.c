/* SPDX-License-Identifier: MIT */
#include "ini.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static char *trim(char *s)
{
	char *e;

	while (blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && blank(e[-1]))
		*--e = '\0';
	return s;
}

int ga_ini_parse(const char *file, const char *text, size_t len, ga_ini_fn fn,
                 void *ctx, struct ga_diag *diag)
{
	char *buf = malloc(GA_INI_LINE_MAX + 1);
	const char *s = text, *end = text + len;
	bool after_key = false;
	unsigned line = 0;
	int errors = 0, rc = 0;

	if (!buf)
		return -ENOMEM;
	while (s < end && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		bool indented = n && blank(s[0]);
		char *t, *eq;

		line++;
		if (n && s[n - 1] == '\r')
			n--;
		if (n > GA_INI_LINE_MAX) {
			ga_diag_error(diag, file, line,
			              "line longer than %d bytes",
			              GA_INI_LINE_MAX);
			goto rejected;
		}
		if (memchr(s, '\0', n)) {
			ga_diag_error(diag, file, line, "NUL byte in the line");
			goto rejected;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		t = trim(buf);
		if (*t == '\0' || *t == '#' || *t == ';')
			goto next; /* a comment keeps the key context */
		eq = strchr(t, '=');
		if (*t == '[') {
			after_key = false;
			if (t[strlen(t) - 1] != ']') {
				ga_diag_error(
				        diag, file, line,
				        "malformed section header "
				        "(want '[NAME]' alone on the line; "
				        "comments go on their own line)");
				errors++;
				rc = fn(ctx, line, NULL, NULL);
				goto next;
			}
			t[strlen(t) - 1] = '\0';
			rc = fn(ctx, line, trim(t + 1), NULL);
		} else if (!eq && indented && after_key) {
			ga_diag_error(diag, file, line,
			              "continuation lines are not supported: "
			              "write the whole value on the key's line "
			              "(up to %d bytes)",
			              GA_INI_LINE_MAX);
			goto rejected;
		} else if (!eq || eq == t) {
			ga_diag_error(diag, file, line,
			              "expected 'key = value', a '[section]' "
			              "or a comment");
			goto rejected;
		} else {
			*eq = '\0';
			after_key = true;
			rc = fn(ctx, line, trim(t), trim(eq + 1));
		}
		goto next;
	rejected:
		errors++;
		rc = fn(ctx, line, NULL, (char *)"");
	next:
		s += nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
	}
	free(buf);
	return rc < 0 ? rc : errors;
}
