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

/* The end of the top-level alternative that starts at P: the next '|'
 * outside groups, character classes and quotes, or END. */
static const char *alternative_end(const char *p, const char *end)
{
	while (p < end && *p != '|') {
		const char *q = skip_opaque(p);

		if (q)
			p = q;
		else if (*p == '(')
			p = skip_group(p);
		else
			p++;
	}
	return p < end ? p : end;
}

size_t ga_literals_extract(const char *pattern, char **out, size_t max)
{
	const char *end = pattern + strlen(pattern), *alt = pattern, *p;
	struct ga_buf best;
	size_t n = 0;
	bool ok = true;

	/* Extended mode changes what whitespace means: give up. */
	if (sets_extended(pattern) || strstr(pattern, "(*"))
		return 0;
	ga_buf_init(&best);
	for (;;) {
		p = alternative_end(alt, end);
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
		if (p >= end)
			break;
		alt = p + 1;
	}
	ga_buf_finish(&best);
	if (!ok) {
		while (n)
			free(out[--n]);
	}
	return n;
}

/* ---- coverage by a rule's own literals -------------------------------- */

/* The pattern's text spelled out: every choice of its alternations,
 * optional parts and small character classes, one string per choice.
 * BREAK stands for text the pattern does not fix (".", "\d+", "x*"): no
 * literal can be found across it. */
#define BREAK '\x01'
#define VARIANTS_MAX 512

struct variants {
	char **s;
	size_t n;
	bool failed; /* too many, out of memory, or a construct not judged */
};

static void variants_free(struct variants *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->s[i]);
	free(v->s);
	v->s = NULL;
	v->n = 0;
}

static void variants_add(struct variants *v, const char *a, size_t alen,
                         const char *b, size_t blen)
{
	char **tmp, *s;

	if (v->failed)
		return;
	if (v->n >= VARIANTS_MAX) {
		v->failed = true;
		return;
	}
	tmp = realloc(v->s, (v->n + 1) * sizeof(*tmp));
	if (!tmp) {
		v->failed = true;
		return;
	}
	v->s = tmp;
	s = malloc(alen + blen + 1);
	if (!s) {
		v->failed = true;
		return;
	}
	memcpy(s, a, alen);
	memcpy(s + alen, b, blen);
	s[alen + blen] = '\0';
	v->s[v->n++] = s;
}

/* A set holding the single string S (LEN bytes). */
static struct variants variants_of(const char *s, size_t len)
{
	struct variants v = {0};

	variants_add(&v, s, len, "", 0);
	return v;
}

/* Every string of A followed by every string of B; A and B are freed. */
static struct variants variants_cross(struct variants *a, struct variants *b)
{
	struct variants v = {0};

	v.failed = a->failed || b->failed;
	for (size_t i = 0; i < a->n && !v.failed; i++)
		for (size_t j = 0; j < b->n && !v.failed; j++)
			variants_add(&v, a->s[i], strlen(a->s[i]), b->s[j],
			             strlen(b->s[j]));
	variants_free(a);
	variants_free(b);
	return v;
}

/* Move B's strings into A. */
static void variants_join(struct variants *a, struct variants *b)
{
	a->failed |= b->failed;
	for (size_t i = 0; i < b->n && !a->failed; i++)
		variants_add(a, b->s[i], strlen(b->s[i]), "", 0);
	variants_free(b);
}

/* Add the empty string to V: the choice without an optional part. */
static void variants_allow_empty(struct variants *v)
{
	struct variants none = variants_of("", 0);

	variants_join(v, &none);
}

static struct variants expand_alt(const char *p, const char *end);

/* A character class at P ('['): its members when they are a few plain
 * characters ("[ _]", "[-_ ]"), else one BREAK. */
static struct variants expand_class(const char *p, const char **next)
{
	const char *e = skip_class(p);
	struct variants v = {0};
	char brk = BREAK;

	*next = e;
	for (const char *q = p + 1; q < e - 1; q++) {
		char c = *q;

		if (c == '\\' && !isalnum((unsigned char)q[1]) && q + 1 < e - 1)
			c = *++q;
		else if (c == '\\' || c == '[' || c == '^' ||
		         (c == '-' && q > p + 1 && q + 1 < e - 1))
			goto opaque; /* an escape, a range, a negation */
		variants_add(&v, &c, 1, "", 0);
	}
	if (v.n > 0 && v.n <= 8)
		return v;
opaque:
	variants_free(&v);
	v.failed = false;
	return variants_of(&brk, 1);
}

/* A group at P ('('): what its body spells, nothing for a zero-width
 * group (lookaround, comment, option setting). */
static struct variants expand_group(const char *p, const char **next)
{
	const char *e = skip_group(p), *body = p + 1;
	struct variants v = {0};

	*next = e;
	if (*e == '\0' && e[-1] != ')') {
		v.failed = true; /* unbalanced */
		return v;
	}
	if (p[1] == '*') {
		v.failed = true; /* (*VERB) */
		return v;
	}
	if (p[1] == '?') {
		const char *q = p + 2;

		if (*q == '#' || *q == '=' || *q == '!' ||
		    (*q == '<' && (q[1] == '=' || q[1] == '!')))
			return variants_of("", 0);
		if (*q == '<' || *q == '\'' || (*q == 'P' && q[1] == '<')) {
			body = strpbrk(q + 1, ">'");
			body = body ? body + 1 : e;
		} else {
			while (isalpha((unsigned char)*q) || *q == '-' ||
			       *q == '^')
				q++;
			if (*q == ')')
				return variants_of("", 0);
			body = *q == ':' || *q == '|' ? q + 1 : e;
		}
	}
	if (body >= e) {
		v.failed = true;
		return v;
	}
	return expand_alt(body, e - 1);
}

/* One alternative [P, END): the cross product of its atoms. */
static struct variants expand_seq(const char *p, const char *end)
{
	struct variants seq = variants_of("", 0);
	char brk = BREAK;

	while (p < end && !seq.failed) {
		struct variants atom;
		const char *next = p + 1;
		bool opt;
		size_t q;

		if (*p == '\\' && p[1] == 'Q') {
			const char *stop = strstr(p + 2, "\\E");

			if (!stop || stop > end)
				stop = end;
			atom = variants_of(p + 2, (size_t)(stop - p - 2));
			next = stop + (stop < end ? 2 : 0);
		} else if (*p == '\\' && isalnum((unsigned char)p[1])) {
			next = skip_escape(p);
			atom = strchr("bBAzZGK", p[1]) ? variants_of("", 0)
			       : p[1] == 's'           ? variants_of(" ", 1)
			                               : variants_of(&brk, 1);
		} else if (*p == '\\' && p + 1 < end) {
			atom = variants_of(p + 1, 1);
			next = p + 2;
		} else if (*p == '[') {
			atom = expand_class(p, &next);
		} else if (*p == '(') {
			atom = expand_group(p, &next);
		} else if (*p == '^' || *p == '$') {
			atom = variants_of("", 0);
		} else if (*p == '.') {
			atom = variants_of(&brk, 1);
		} else {
			atom = variants_of(p, 1);
		}
		q = quantifier(next, &opt);
		if (*p == '\\' && p[1] == 's' && q && next[0] != '{') {
			/* Blanks read as one space ("loss:\s*nan" holds
			 * ": nan" or ":nan"): a tab between the words is not
			 * worth a warning. */
			variants_free(&atom);
			atom = variants_of(" ", 1);
			if (opt)
				variants_allow_empty(&atom);
		} else if (q && next[0] == '?' && (q == 1 || next[1] != '?')) {
			/* "x?" (also possessive "x?+"): with or without; a
			 * lazy "x??" is left as text the pattern does not fix */
			variants_allow_empty(&atom);
		} else if (q) {
			variants_free(&atom);
			atom = variants_of(&brk, 1);
		}
		p = next + q;
		seq = variants_cross(&seq, &atom);
	}
	return seq;
}

/* [P, END): the union of its top-level alternatives. */
static struct variants expand_alt(const char *p, const char *end)
{
	struct variants all = {0};

	for (;;) {
		const char *q = alternative_end(p, end);
		struct variants one = expand_seq(p, q);

		variants_join(&all, &one);
		if (q >= end || all.failed)
			break;
		p = q + 1;
	}
	return all;
}

int ga_literals_cover(const char *pattern, const char *const *lits,
                      const bool *exact, size_t n, char **witness)
{
	struct variants v;
	int rc = 1;

	*witness = NULL;
	if (sets_extended(pattern))
		return -1;
	v = expand_alt(pattern, pattern + strlen(pattern));
	if (v.failed) {
		variants_free(&v);
		return -1;
	}
	for (size_t i = 0; i < v.n && rc == 1; i++) {
		bool held = false;

		for (size_t k = 0; k < n && !held; k++)
			held = (exact && exact[k]
			                ? strstr(v.s[i], lits[k])
			                : strcasestr(v.s[i], lits[k])) != NULL;
		if (held)
			continue;
		rc = 0;
		for (char *c = v.s[i]; *c; c++)
			if (*c == BREAK)
				*c = '~';
		*witness = v.s[i];
		v.s[i] = NULL;
	}
	variants_free(&v);
	return rc;
}
