/* SPDX-License-Identifier: MIT */
#include "literals.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "prefilter.h"

/* Skip a \Q...\E quote starting at P (the backslash); returns the char
 * after \E, or the end of the pattern (pcre2pattern(3): \Q runs to the
 * end when no \E follows). */
static const char *skip_quote(const char *p)
{
	const char *e = strstr(p + 2, "\\E");

	return e ? e + 2 : p + strlen(p);
}

/* Skip a bracketed argument at P if it opens with OPEN. */
static const char *skip_arg(const char *p, char open, char close)
{
	const char *e;

	if (*p != open)
		return p;
	e = strchr(p + 1, close);
	return e ? e + 1 : p + strlen(p);
}

/* Skip an escape whose letter or digit is not itself a literal, starting
 * at P (the backslash), with its argument: \x41 \x{41} \o{101} \101 \cX
 * \pL \p{Lu} \g1 \g{-1} \k<name> \N{U+41}, or a plain \d \b ...  Taking
 * an argument's characters for a literal would filter out real matches. */
static const char *skip_escape(const char *p)
{
	char e = p[1];
	const char *q = p + 2;

	switch (e) {
	case 'x':
		if (*q == '{')
			return skip_arg(q, '{', '}');
		for (int i = 0; i < 2 && isxdigit((unsigned char)*q); i++)
			q++;
		return q;
	case 'o':
	case 'N':
		return skip_arg(q, '{', '}');
	case 'c':
		return *q ? q + 1 : q;
	case 'p':
	case 'P':
		if (*q == '{')
			return skip_arg(q, '{', '}');
		return *q ? q + 1 : q;
	case 'g':
		if (*q == '{' || *q == '<' || *q == '\'')
			return skip_arg(q, *q,
			                *q == '{'   ? '}'
			                : *q == '<' ? '>'
			                            : '\'');
		if (*q == '+' || *q == '-')
			q++;
		while (isdigit((unsigned char)*q))
			q++;
		return q;
	case 'k':
		if (*q == '{' || *q == '<' || *q == '\'')
			return skip_arg(q, *q,
			                *q == '{'   ? '}'
			                : *q == '<' ? '>'
			                            : '\'');
		return q;
	default:
		/* \0 octal and \1.. back references or octal: all digits */
		if (isdigit((unsigned char)e))
			while (isdigit((unsigned char)*q))
				q++;
		return q;
	}
}

/* Skip a character class starting at P ('['); returns the char after ']'. */
static const char *skip_class(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (*p == '\\' && p[1] == 'Q') {
			p = skip_quote(p);
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '[' && p[1] == ':') {
			const char *e = strstr(p, ":]");
			if (e)
				p = e + 1;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

/* If P starts a token that hides parentheses and bars (\Q...\E, an
 * escape, a character class), the char after it; else NULL. */
static const char *skip_opaque(const char *p)
{
	if (*p == '\\' && p[1] == 'Q')
		return skip_quote(p);
	if (*p == '\\' && p[1])
		return p + 2;
	if (*p == '[')
		return skip_class(p);
	return NULL;
}

/* Skip a group starting at P ('('); returns the char after its ')'. */
static const char *skip_group(const char *p)
{
	int depth = 0;

	while (*p) {
		const char *q = skip_opaque(p);

		if (q) {
			p = q;
			continue;
		}
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p + 1;
		p++;
	}
	return p;
}

/* Does PATTERN name option letter FLAG in an inline option group ("(?ix)",
 * "(?x:...", "(?-i)")?  Any mention counts, turning it off included: the
 * callers only need to know whether the pattern may change it. */
static bool sets_option(const char *pattern, char flag)
{
	for (const char *p = strstr(pattern, "(?"); p; p = strstr(p + 1, "(?"))
		for (const char *q = p + 2;
		     isalpha((unsigned char)*q) || *q == '-' || *q == '^'; q++)
			if (*q == flag)
				return true;
	return false;
}

/* Extended mode makes blanks not literal: give up on such a pattern. */
static bool sets_extended(const char *pattern)
{
	return sets_option(pattern, 'x');
}

bool ga_literals_caseless(const char *pattern)
{
	return sets_option(pattern, 'i');
}

/* Parse a quantifier at P.  Returns its length (0 if none) and whether
 * it allows zero repetitions. */
static size_t quantifier(const char *p, bool *optional)
{
	size_t n = 0;

	*optional = false;
	if (*p == '?' || *p == '*') {
		*optional = true;
		n = 1;
	} else if (*p == '+') {
		n = 1;
	} else if (*p == '{' && isdigit((unsigned char)p[1])) {
		const char *q = p + 1;
		long min = strtol(q, (char **)&q, 10);

		if (*q == ',') {
			q++;
			while (isdigit((unsigned char)*q))
				q++;
		}
		if (*q != '}')
			return 0; /* a literal '{' */
		*optional = min == 0;
		n = (size_t)(q + 1 - p);
	}
	if (n && (p[n] == '?' || p[n] == '+'))
		n++; /* lazy or possessive */
	return n;
}

/* The longest literal run in one alternative [P, END). */
static void longest_run(const char *p, const char *end, struct ga_buf *best)
{
	struct ga_buf run;

	ga_buf_init(&run);
	ga_buf_reset(best);
	while (p < end) {
		char c = *p;
		bool opt, is_char = false;
		size_t q;

		if (c == '\\' && p + 1 < end) {
			char e = p[1];

			if (e == 'Q') {
				const char *stop = strstr(p + 2, "\\E");

				if (!stop || stop > end)
					stop = end;
				ga_buf_append(&run, p + 2,
				              (size_t)(stop - p - 2));
				p = stop + (stop < end ? 2 : 0);
				/* A quantifier after \E applies to the last
				 * quoted character. */
				q = quantifier(p, &opt);
				if (q) {
					p += q;
					if (opt && run.len)
						run.data[--run.len] = '\0';
					goto brk;
				}
				continue;
			}
			if (isalnum((unsigned char)e)) {
				p = skip_escape(
				        p); /* \d \b \x41: not literal */
				p += quantifier(p, &opt);
				goto brk;
			}
			c = e;
			p += 2;
			is_char = true;
		} else if (c == '[') {
			p = skip_class(p);
			p += quantifier(p, &opt);
			goto brk;
		} else if (c == '(') {
			p = skip_group(p);
			p += quantifier(p, &opt);
			goto brk;
		} else if (c == '.' || c == '^' || c == '$') {
			p++;
			p += quantifier(p, &opt);
			goto brk;
		} else {
			p++;
			is_char = true;
		}
		if (!is_char)
			continue;
		q = quantifier(p, &opt);
		if (q) {
			p += q;
			if (!opt)
				ga_buf_putc(&run, c);
			goto brk;
		}
		ga_buf_putc(&run, c);
		continue;
	brk:
		if (run.len > best->len) {
			ga_buf_reset(best);
			ga_buf_append(best, run.data, run.len);
		}
		ga_buf_reset(&run);
	}
	if (run.len > best->len) {
		ga_buf_reset(best);
		ga_buf_append(best, run.data, run.len);
	}
	ga_buf_finish(&run);
}

size_t ga_literals_extract(const char *pattern, char **out, size_t max)
{
	const char *p = pattern, *alt = pattern;
	struct ga_buf best;
	size_t n = 0;
	bool ok = true;

	/* Extended mode changes what whitespace means: give up. */
	if (sets_extended(pattern) || strstr(pattern, "(*"))
		return 0;
	ga_buf_init(&best);
	for (;;) {
		const char *q = skip_opaque(p);

		if (q) {
			p = q;
			continue;
		}
		if (*p == '(') {
			p = skip_group(p);
			continue;
		}
		if (*p != '|' && *p != '\0') {
			p++;
			continue;
		}
		longest_run(alt, p, &best);
		if (best.failed || best.len < GA_PREFILTER_MIN_LITERAL ||
		    n >= max) {
			ok = false;
			break;
		}
		out[n] = strndup(best.data, best.len);
		if (!out[n]) {
			ok = false;
			break;
		}
		n++;
		if (*p == '\0')
			break;
		alt = ++p;
	}
	ga_buf_finish(&best);
	if (!ok) {
		while (n)
			free(out[--n]);
	}
	return n;
}
