/* SPDX-License-Identifier: MIT */
#include "rules.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "log.h"
#include "prefilter.h"

#define RULE_FILE_MAX (1 << 20)
#define RULE_ID_MAX 64
#define RULES_MAX 4096
#define PATTERNS_MAX 64 /* match or exclude lines per rule */
#define LITERALS_MAX 64

static bool word_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* A literal as a rule writes it: "\b" at its start or end asks for a
 * word boundary there (PCRE2's \b, which needs a letter, digit or '_'
 * on the literal's side).  Sets *BODY (allocated) to the text without
 * them and *FLAGS to GA_PREFILTER_WORD_*.  Returns 0, -EINVAL when a
 * "\b" is next to another character, or -ENOMEM (*BODY NULL then). */
static int literal_body(const char *v, char **body, unsigned *flags)
{
	size_t n = strlen(v), s = 0;

	*body = NULL;
	*flags = 0;
	if (n >= 3 && v[0] == '\\' && v[1] == 'b') {
		if (!word_byte(v[2]))
			return -EINVAL;
		s = 2;
		*flags |= GA_PREFILTER_WORD_START;
	}
	if (n >= s + 3 && v[n - 2] == '\\' && v[n - 1] == 'b' &&
	    v[n - 3] != '\\') {
		if (!word_byte(v[n - 3]))
			return -EINVAL;
		n -= 2;
		*flags |= GA_PREFILTER_WORD_END;
	}
	*body = strndup(v + s, n - s);
	return *body ? 0 : -ENOMEM;
}

#define MATCH_LIMIT 100000 /* PCRE2 backtracking bound per line */
#define DEPTH_LIMIT 1000

enum exit_kind {
	EXIT_FAILURE_ONLY = 0,
	EXIT_ANY,
	EXIT_SUCCESS_ONLY,
	EXIT_CODES
};

struct pattern {
	char *src;
	unsigned line;
	pcre2_code *code;
};

struct ga_rule {
	char *id;
	int cls;
	int priority; /* -1: class default */
	char *hint;
	char *file;
	unsigned line;
	size_t order; /* load order, breaks priority ties */
	struct pattern *match;
	size_t n_match;
	struct pattern *exclude;
	size_t n_exclude;
	char **literal; /* given with "literal =" */
	size_t n_literal;
	bool caseless;
	bool fallback;
	bool fatal;
	enum exit_kind exit_kind;
	uint8_t exit_codes[256];
	uint64_t signals; /* bit N: signal N */
	uint32_t states;  /* bit N: enum ga_sched_state N */
	int oom;          /* -1 no condition, 0 none, 1 at least one */
};

struct ga_ruleset {
	struct ga_rule **rules; /* priority order */
	size_t n;
	struct ga_prefilter *prefilter;
	uint32_t *owner_start; /* CSR: literal -> rules */
	uint32_t *owners;
	size_t n_literals;
	uint32_t *unfiltered;
	size_t n_unfiltered;
};

struct ga_matcher {
	pcre2_match_data *md;
	pcre2_match_context *mctx;
};

/* ---- rule storage ---------------------------------------------------- */

static void pattern_free(struct pattern *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].src);
		pcre2_code_free(p[i].code);
	}
	free(p);
}

static void rule_destroy(struct ga_rule *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->hint);
	free(r->file);
	pattern_free(r->match, r->n_match);
	pattern_free(r->exclude, r->n_exclude);
	for (size_t i = 0; i < r->n_literal; i++)
		free(r->literal[i]);
	free(r->literal);
	free(r);
}

void ga_ruleset_destroy(struct ga_ruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		rule_destroy(rs->rules[i]);
	free(rs->rules);
	ga_prefilter_destroy(rs->prefilter);
	free(rs->owner_start);
	free(rs->owners);
	free(rs->unfiltered);
	free(rs);
}

/* A list of rules while files are being applied. */
struct draft {
	struct ga_rule **rules;
	size_t n;
	size_t next_order;
};

static void draft_finish(struct draft *d)
{
	for (size_t i = 0; i < d->n; i++)
		rule_destroy(d->rules[i]);
	free(d->rules);
	memset(d, 0, sizeof(*d));
}

static ssize_t draft_find(const struct draft *d, const char *id)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->rules[i]->id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* ---- parsing --------------------------------------------------------- */

struct parser {
	const char *file;
	struct ga_diag *diag;
	struct draft *draft;
	struct ga_rule *cur; /* rule being defined, not yet in draft */
	char **seen;         /* ids defined in this file */
	size_t n_seen;
	bool bad_section; /* header rejected: skip its keys quietly */
	int errors;
	int errors_before_cur; /* errors when p->cur was begun */
};

static void perr(struct parser *p, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void perr(struct parser *p, unsigned line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ga_diag_error(p->diag, p->file, line, "%s", msg);
	p->errors++;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > RULE_ID_MAX)
		return false;
	for (const char *c = id; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.:-", *c))
			return false;
	return true;
}

/* Commit the rule being defined: check it is complete, then add it to
 * the draft or replace the rule with the same id. */
static void finish_rule(struct parser *p)
{
	struct ga_rule *r = p->cur;
	ssize_t at;
	struct ga_rule **tmp;

	if (!r)
		return;
	p->cur = NULL;
	/* A key of this rule was rejected: that error explains it, and
	 * "missing 'class ='" after "unknown class 'x'" would mislead. */
	if (p->errors > p->errors_before_cur)
		goto drop;
	if (r->cls < 0) {
		perr(p, r->line, "rule '%s': missing 'class ='", r->id);
		goto drop;
	}
	if (r->n_match == 0 && r->signals == 0 && r->states == 0 &&
	    r->oom < 0 && r->exit_kind != EXIT_CODES) {
		perr(p, r->line,
		     "rule '%s': needs at least one 'match =' or a condition "
		     "('exit = CODES', 'signal =', 'state =', 'oom_kill =')",
		     r->id);
		goto drop;
	}
	if (r->n_match == 0 &&
	    (r->n_exclude || r->n_literal || r->fallback || r->fatal)) {
		perr(p, r->line,
		     "rule '%s': 'exclude', 'literal', 'fallback' and 'fatal' "
		     "need a 'match ='",
		     r->id);
		goto drop;
	}
	at = draft_find(p->draft, r->id);
	if (at >= 0) {
		r->order = p->draft->rules[at]->order;
		rule_destroy(p->draft->rules[at]);
		p->draft->rules[at] = r;
		return;
	}
	if (p->draft->n >= RULES_MAX) {
		perr(p, r->line, "too many rules (at most %d)", RULES_MAX);
		goto drop;
	}
	tmp = realloc(p->draft->rules, (p->draft->n + 1) * sizeof(*tmp));
	if (!tmp) {
		perr(p, r->line, "out of memory");
		goto drop;
	}
	p->draft->rules = tmp;
	r->order = p->draft->next_order++;
	p->draft->rules[p->draft->n++] = r;
	return;
drop:
	rule_destroy(r);
}

static bool note_id(struct parser *p, unsigned line, const char *id)
{
	char **tmp;

	for (size_t i = 0; i < p->n_seen; i++) {
		if (strcmp(p->seen[i], id) == 0) {
			perr(p, line, "rule '%s' is defined twice in this file",
			     id);
			return false;
		}
	}
	tmp = realloc(p->seen, (p->n_seen + 1) * sizeof(*tmp));
	if (!tmp || !(tmp[p->n_seen] = strdup(id))) {
		if (tmp)
			p->seen = tmp;
		perr(p, line, "out of memory");
		return false;
	}
	p->seen = tmp;
	p->n_seen++;
	return true;
}

static void parse_section(struct parser *p, unsigned line, char *s)
{
	char *kind, *id;

	finish_rule(p);
	p->bad_section = true;
	kind = trim(s);
	id = kind + strcspn(kind, " \t");
	if (*id)
		*id++ = '\0';
	id = trim(id);
	if (strcmp(kind, "rule") != 0 && strcmp(kind, "disable") != 0) {
		perr(p, line,
		     "unknown section '[%s]' (want 'rule' or "
		     "'disable')",
		     kind);
		return;
	}
	if (!valid_id(id)) {
		perr(p, line,
		     "invalid rule id '%s' (1-%d characters of "
		     "A-Z a-z 0-9 _ . : -)",
		     id, RULE_ID_MAX);
		return;
	}
	if (strcmp(kind, "disable") == 0) {
		ssize_t at = draft_find(p->draft, id);

		if (at < 0) {
			perr(p, line,
			     "disable: no rule '%s' in the built-in "
			     "rules or earlier files",
			     id);
			return;
		}
		rule_destroy(p->draft->rules[at]);
		memmove(&p->draft->rules[at], &p->draft->rules[at + 1],
		        (p->draft->n - (size_t)at - 1) * sizeof(void *));
		p->draft->n--;
		p->bad_section = false;
		return;
	}
	if (!note_id(p, line, id))
		return;
	p->cur = calloc(1, sizeof(*p->cur));
	if (!p->cur) {
		perr(p, line, "out of memory");
		return;
	}
	p->errors_before_cur = p->errors;
	p->cur->cls = -1;
	p->cur->priority = -1;
	p->cur->oom = -1;
	p->cur->line = line;
	p->cur->id = strdup(id);
	p->cur->file = strdup(p->file);
	if (!p->cur->id || !p->cur->file) {
		perr(p, line, "out of memory");
		rule_destroy(p->cur);
		p->cur = NULL;
		return;
	}
	p->bad_section = false;
}

static bool add_pattern(struct parser *p, unsigned line, struct pattern **v,
                        size_t *n, const char *src)
{
	struct pattern *tmp;

	if (*n >= PATTERNS_MAX) {
		perr(p, line, "rule '%s': too many patterns (at most %d)",
		     p->cur->id, PATTERNS_MAX);
		return false;
	}
	tmp = realloc(*v, (*n + 1) * sizeof(*tmp));
	if (!tmp)
		goto nomem;
	*v = tmp;
	tmp[*n].src = strdup(src);
	tmp[*n].line = line;
	tmp[*n].code = NULL;
	if (!tmp[*n].src)
		goto nomem;
	(*n)++;
	return true;
nomem:
	perr(p, line, "out of memory");
	return false;
}

/* Split a list value on commas and blanks; call FN for each item. */
static bool each_item(struct parser *p, unsigned line, char *value,
                      bool (*fn)(struct parser *, unsigned, const char *))
{
	int count = 0;

	for (char *save = NULL, *tok = strtok_r(value, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		if (!fn(p, line, tok))
			return false;
		count++;
	}
	if (count == 0) {
		perr(p, line, "rule '%s': empty list", p->cur->id);
		return false;
	}
	return true;
}

static bool add_exit_code(struct parser *p, unsigned line, const char *tok)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(tok, &end, 10);
	if (errno || *end || end == tok || v < 0 || v > 255) {
		perr(p, line,
		     "rule '%s': exit: '%s' is not 'failure', "
		     "'success', 'any' or an exit code 0-255",
		     p->cur->id, tok);
		return false;
	}
	p->cur->exit_codes[v] = 1;
	return true;
}

static bool add_signal(struct parser *p, unsigned line, const char *tok)
{
	int sig = ga_signal_from_name(tok);

	if (sig <= 0 || sig > 63) {
		perr(p, line, "rule '%s': signal: unknown signal '%s'",
		     p->cur->id, tok);
		return false;
	}
	p->cur->signals |= UINT64_C(1) << sig;
	return true;
}

static bool add_state(struct parser *p, unsigned line, const char *tok)
{
	int st = ga_sched_state_from_name(tok);

	if (st <= 0) {
		perr(p, line,
		     "rule '%s': state: unknown scheduler state '%s' "
		     "(TIMEOUT, CANCELLED, PREEMPTED, NODE_FAIL, "
		     "OUT_OF_MEMORY, DEADLINE)",
		     p->cur->id, tok);
		return false;
	}
	p->cur->states |= UINT32_C(1) << st;
	return true;
}

static int parse_bool(const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		return 0;
	return -1;
}

static void parse_key(struct parser *p, unsigned line, char *key, char *value)
{
	struct ga_rule *r = p->cur;

	if (!r) {
		if (!p->bad_section)
			perr(p, line, "'%s' outside a [rule ID] section", key);
		return; /* inside a rejected section: already reported */
	}
	if (!strcmp(key, "class")) {
		r->cls = ga_class_from_name(value);
		if (r->cls < 0)
			perr(p, line,
			     "rule '%s': unknown class '%s' (see the "
			     "taxonomy in README.md)",
			     r->id, value);
	} else if (!strcmp(key, "priority")) {
		char *end;
		long v;

		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || *end || end == value || v < 0 || v > 1000)
			perr(p, line,
			     "rule '%s': priority must be an integer "
			     "0-1000, not '%s'",
			     r->id, value);
		else
			r->priority = (int)v;
	} else if (!strcmp(key, "match") || !strcmp(key, "exclude")) {
		if (!*value)
			perr(p, line, "rule '%s': empty %s pattern", r->id,
			     key);
		else if (!strcmp(key, "match"))
			add_pattern(p, line, &r->match, &r->n_match, value);
		else
			add_pattern(p, line, &r->exclude, &r->n_exclude, value);
	} else if (!strcmp(key, "literal")) {
		size_t vlen = strlen(value);
		char **tmp, *body;
		unsigned lflags;
		int rc;

		/* "..." keeps leading/trailing blanks (" nan"). */
		if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
			value[vlen - 1] = '\0';
			value++;
		}
		rc = literal_body(value, &body, &lflags);
		if (rc == -EINVAL) {
			perr(p, line,
			     "rule '%s': literal '%s': \\b must be next to a "
			     "letter, digit or '_'",
			     r->id, value);
			return;
		}
		if (rc < 0) {
			perr(p, line, "out of memory");
			return;
		}
		if (strlen(body) < GA_PREFILTER_MIN_LITERAL) {
			perr(p, line,
			     "rule '%s': literal '%s' is shorter than "
			     "%d bytes",
			     r->id, value, GA_PREFILTER_MIN_LITERAL);
			free(body);
			return;
		}
		free(body);
		if (r->n_literal >= LITERALS_MAX) {
			perr(p, line, "rule '%s': too many literals", r->id);
			return;
		}
		tmp = realloc(r->literal, (r->n_literal + 1) * sizeof(*tmp));
		if (!tmp || !(tmp[r->n_literal] = strdup(value))) {
			if (tmp)
				r->literal = tmp;
			perr(p, line, "out of memory");
			return;
		}
		r->literal = tmp;
		r->n_literal++;
	} else if (!strcmp(key, "exit")) {
		memset(r->exit_codes, 0, sizeof(r->exit_codes));
		if (!strcmp(value, "failure"))
			r->exit_kind = EXIT_FAILURE_ONLY;
		else if (!strcmp(value, "any"))
			r->exit_kind = EXIT_ANY;
		else if (!strcmp(value, "success"))
			r->exit_kind = EXIT_SUCCESS_ONLY;
		else if (each_item(p, line, value, add_exit_code))
			r->exit_kind = EXIT_CODES;
	} else if (!strcmp(key, "signal")) {
		each_item(p, line, value, add_signal);
	} else if (!strcmp(key, "state")) {
		each_item(p, line, value, add_state);
	} else if (!strcmp(key, "oom_kill")) {
		r->oom = parse_bool(value);
		if (r->oom < 0)
			perr(p, line, "rule '%s': oom_kill must be yes or no",
			     r->id);
	} else if (!strcmp(key, "caseless") || !strcmp(key, "fallback") ||
	           !strcmp(key, "fatal")) {
		int v = parse_bool(value);

		if (v < 0)
			perr(p, line, "rule '%s': %s must be yes or no", r->id,
			     key);
		else if (!strcmp(key, "caseless"))
			r->caseless = v;
		else if (!strcmp(key, "fallback"))
			r->fallback = v;
		else
			r->fatal = v;
	} else if (!strcmp(key, "hint")) {
		free(r->hint);
		r->hint = strdup(value);
		if (!r->hint)
			perr(p, line, "out of memory");
	} else {
		perr(p, line,
		     "rule '%s': unknown key '%s' (class, priority, "
		     "match, exclude, literal, exit, signal, state, "
		     "oom_kill, caseless, fallback, fatal, hint)",
		     r->id, key);
	}
}

static int on_ini(void *ctx, unsigned line, char *name, char *value)
{
	struct parser *p = ctx;

	if (!name) {
		p->errors++; /* reported by the reader */
		if (!value) {
			finish_rule(p);
			p->bad_section = true; /* its keys: not reported */
		}
	} else if (!value)
		parse_section(p, line, name);
	else
		parse_key(p, line, name, value);
	return 0;
}

/* Parse one file's TEXT into the draft (the INI dialect of ini.h, shared
 * with gpualert.conf).  Returns the number of errors. */
static int parse_text(const char *file, const char *text, struct draft *d,
                      struct ga_diag *diag)
{
	struct parser p = {.file = file, .diag = diag, .draft = d};
	int rc;

	rc = ga_ini_parse(file, text, strlen(text), on_ini, &p, diag);
	if (rc < 0) {
		ga_diag_error(diag, file, 0, "out of memory");
		p.errors++;
	}
	finish_rule(&p);
	for (size_t i = 0; i < p.n_seen; i++)
		free(p.seen[i]);
	free(p.seen);
	return p.errors;
}

/* ---- literal extraction ---------------------------------------------- */

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

/* Does PATTERN turn on extended mode ("(?x)", "(?ix)", "(?x:...")?  Then
 * blanks are not literal: give up on it. */
static bool sets_extended(const char *pattern)
{
	for (const char *p = strstr(pattern, "(?"); p; p = strstr(p + 1, "(?"))
		for (const char *q = p + 2;
		     isalpha((unsigned char)*q) || *q == '-' || *q == '^'; q++)
			if (*q == 'x')
				return true;
	return false;
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

size_t ga_rules_extract_literals(const char *pattern, char **out, size_t max)
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

/* ---- compiling ------------------------------------------------------- */

/* Length of an unbounded quantifier at P ("*", "+", "{n,}"), 0 if none;
 * a possessive one ("*+", "++", "{n,}+") does not backtrack: 0. */
static size_t unbounded_at(const char *p)
{
	size_t n = 0;

	if (*p == '*' || *p == '+') {
		n = 1;
	} else if (*p == '{') {
		const char *q = p + 1;

		while (*q >= '0' && *q <= '9')
			q++;
		if (q == p + 1 || *q != ',' || q[1] != '}')
			return 0;
		n = (size_t)(q + 2 - p);
	}
	return n && p[n] == '+' ? 0 : n;
}

/* Whether the group content that ends just before CLOSE (a ')') ends in
 * an unbounded, backtracking quantifier: "\\w+", "\\s*", "x{2,}". */
static bool ends_unbounded(const char *start, const char *close)
{
	const char *q = close - 1;

	if (q < start)
		return false;
	if (*q == '}') {
		while (q > start && *q != '{')
			q--;
		return *q == '{' && unbounded_at(q) == (size_t)(close - q);
	}
	if (*q != '*' && *q != '+')
		return false;
	if (q > start && q[-1] == '\\')
		return false; /* a literal '*' or '+' */
	/* "a*+", "a++": possessive, no backtracking */
	return !(*q == '+' && q > start && strchr("*+}?", q[-1]));
}

/* Whether RE repeats without bound a group whose content ends in an
 * unbounded quantifier: "(a+)+", "(\\w+\\s*)*", "(?:x|\\d+){2,}".  Both
 * quantifiers can share the same characters, so on a line that almost
 * matches the backtracking is exponential in the line's length (each
 * such line costs up to the match limit).  Atomic groups and possessive
 * quantifiers are exempt. */
static bool nested_unbounded(const char *re)
{
	const char *open[64];
	int depth = 0;

	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '[') {
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p += (*p == '\\' && p[1]) ? 2 : 1;
			if (!*p)
				return false;
			continue;
		}
		if (*p == '(' && depth < 64) {
			open[depth++] = p;
			continue;
		}
		if (*p == ')' && depth > 0) {
			const char *o = open[--depth];
			bool atomic = o[1] == '?' && o[2] == '>';

			if (!atomic && unbounded_at(p + 1) &&
			    ends_unbounded(o + 1, p))
				return true;
		}
	}
	return false;
}

static int compile_patterns(struct ga_rule *r, struct pattern *v, size_t n,
                            struct ga_diag *diag)
{
	int errors = 0;

	for (size_t i = 0; i < n; i++) {
		int err;
		PCRE2_SIZE off;
		uint32_t opts = r->caseless ? PCRE2_CASELESS : 0;

		/* Byte mode on purpose: logs hold invalid UTF-8 and NUL bytes,
		 * and the patterns are ASCII. */
		v[i].code = pcre2_compile((PCRE2_SPTR)v[i].src,
		                          PCRE2_ZERO_TERMINATED, opts, &err,
		                          &off, NULL);
		if (!v[i].code) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(err, msg, sizeof(msg));
			ga_diag_error(diag, r->file, v[i].line,
			              "rule '%s': %s at offset %zu", r->id,
			              (const char *)msg, (size_t)off);
			errors++;
			continue;
		}
		if (nested_unbounded(v[i].src))
			ga_diag_warn(
			        diag, r->file, v[i].line,
			        "rule '%s': a group with an unbounded "
			        "quantifier is itself repeated without bound: "
			        "backtracking can cost every line up to the "
			        "match limit; make the inner quantifier "
			        "possessive (a++) or the group atomic (?>...)",
			        r->id);
		err = pcre2_jit_compile(v[i].code, PCRE2_JIT_COMPLETE);
		if (err < 0)
			ga_log(GA_LOG_DEBUG,
			       "gpualert: rules: rule '%s': no JIT "
			       "(%d), interpreting",
			       r->id, err);
	}
	return errors;
}

static int cmp_priority(const void *a, const void *b)
{
	const struct ga_rule *x = *(const struct ga_rule *const *)a;
	const struct ga_rule *y = *(const struct ga_rule *const *)b;
	int px = ga_rule_priority(x), py = ga_rule_priority(y);

	if (px != py)
		return px > py ? -1 : 1;
	return x->order < y->order ? -1 : (x->order > y->order);
}

struct lit_list {
	char **text;
	size_t *len;
	unsigned *flags;
	uint32_t *owner;
	size_t n;
	bool failed;
};

/* TEXT as written in a rule when WRITTEN (see literal_body), else as
 * extracted from a pattern. */
static void lit_add(struct lit_list *l, const char *text, bool written,
                    uint32_t owner)
{
	char **t = realloc(l->text, (l->n + 1) * sizeof(*t));
	size_t *n;
	unsigned *f;
	uint32_t *o;

	if (t)
		l->text = t;
	n = realloc(l->len, (l->n + 1) * sizeof(*n));
	if (n)
		l->len = n;
	f = realloc(l->flags, (l->n + 1) * sizeof(*f));
	if (f)
		l->flags = f;
	o = realloc(l->owner, (l->n + 1) * sizeof(*o));
	if (o)
		l->owner = o;
	if (!t || !n || !f || !o) {
		l->failed = true;
		return;
	}
	if (!written) {
		l->text[l->n] = strdup(text);
		l->flags[l->n] = 0;
	} else if (literal_body(text, &l->text[l->n], &l->flags[l->n]) < 0) {
		l->text[l->n] = NULL;
	}
	if (!l->text[l->n]) {
		l->failed = true;
		return;
	}
	l->len[l->n] = strlen(l->text[l->n]);
	l->owner[l->n] = owner;
	l->n++;
}

static void lit_finish(struct lit_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->text[i]);
	free(l->text);
	free(l->len);
	free(l->flags);
	free(l->owner);
}

/* Collect each rule's literals: its own, or one per alternative of every
 * match pattern.  A rule left without any becomes "unfiltered". */
static int build_prefilter(struct ga_ruleset *rs, struct ga_diag *diag)
{
	struct lit_list l = {0};
	int rc = -1;

	rs->unfiltered = calloc(rs->n + 1, sizeof(*rs->unfiltered));
	if (!rs->unfiltered)
		return -1;
	for (size_t i = 0; i < rs->n; i++) {
		struct ga_rule *r = rs->rules[i];
		size_t before = l.n;
		bool complete = r->n_match > 0;

		if (r->n_match == 0)
			continue;
		for (size_t k = 0; k < r->n_literal; k++)
			lit_add(&l, r->literal[k], true, (uint32_t)i);
		if (r->n_literal)
			continue;
		for (size_t k = 0; k < r->n_match && complete; k++) {
			char *found[LITERALS_MAX];
			size_t nf = ga_rules_extract_literals(
			        r->match[k].src, found, LITERALS_MAX);

			if (nf == 0)
				complete = false;
			for (size_t j = 0; j < nf; j++) {
				lit_add(&l, found[j], false, (uint32_t)i);
				free(found[j]);
			}
		}
		if (!complete) {
			/* Drop the partial set: the rule must see every line. */
			while (l.n > before)
				free(l.text[--l.n]);
			rs->unfiltered[rs->n_unfiltered++] = (uint32_t)i;
			ga_diag_warn(diag, r->file, r->line,
			             "rule '%s': no literal of %d+ bytes found "
			             "in its patterns; it is tried on every "
			             "line (slow): add 'literal ='",
			             r->id, GA_PREFILTER_MIN_LITERAL);
		}
	}
	if (l.failed)
		goto out;
	rs->n_literals = l.n;
	if (l.n) {
		rs->prefilter = ga_prefilter_create_flags(
		        (const char *const *)l.text, l.len, l.flags, l.n);
		if (!rs->prefilter)
			goto out;
	}
	rs->owner_start = calloc(l.n + 1, sizeof(uint32_t));
	rs->owners = calloc(l.n + 1, sizeof(uint32_t));
	if (!rs->owner_start || !rs->owners)
		goto out;
	/* One owner per literal entry; duplicates across rules stay separate
	 * entries in the prefilter, which reports each. */
	for (size_t i = 0; i < l.n; i++) {
		rs->owner_start[i] = (uint32_t)i;
		rs->owners[i] = l.owner[i];
	}
	rs->owner_start[l.n] = (uint32_t)l.n;
	rc = 0;
out:
	lit_finish(&l);
	return rc;
}

/* Turn a draft into a compiled ruleset; the draft's rules move into it. */
static struct ga_ruleset *compile_draft(struct draft *d, struct ga_diag *diag)
{
	struct ga_ruleset *rs;
	int errors = 0;

	for (size_t i = 0; i < d->n; i++) {
		errors += compile_patterns(d->rules[i], d->rules[i]->match,
		                           d->rules[i]->n_match, diag);
		errors += compile_patterns(d->rules[i], d->rules[i]->exclude,
		                           d->rules[i]->n_exclude, diag);
	}
	if (errors)
		return NULL;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return NULL;
	rs->rules = d->rules;
	rs->n = d->n;
	d->rules = NULL;
	d->n = 0;
	if (rs->n)
		qsort(rs->rules, rs->n, sizeof(*rs->rules), cmp_priority);
	if (build_prefilter(rs, diag) < 0) {
		ga_diag_error(diag, NULL, 0,
		              "out of memory building the "
		              "prefilter");
		ga_ruleset_destroy(rs);
		return NULL;
	}
	return rs;
}

static int apply_builtin(struct draft *d, struct ga_diag *diag)
{
	int errors = 0;

	for (size_t i = 0; i < ga_builtin_rules_count; i++)
		errors += parse_text(ga_builtin_rules[i].name,
		                     ga_builtin_rules[i].text, d, diag);
	return errors;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Apply every *.rules file of DIR in name order.  Returns the number of
 * errors; a missing directory is none. */
static int apply_dir(const char *dir, struct draft *d, struct ga_diag *diag)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int errors = 0;

	if (!dh) {
		if (errno == ENOENT)
			return 0;
		ga_diag_error(diag, dir, 0, "cannot open rules directory: %s",
		              strerror(errno));
		return 1;
	}
	while ((de = readdir(dh))) {
		size_t len = strlen(de->d_name);
		char **tmp;

		if (de->d_name[0] == '.' || len < 7 ||
		    strcmp(de->d_name + len - 6, ".rules") != 0)
			continue;
		tmp = realloc(names, (n + 1) * sizeof(*tmp));
		if (!tmp || !(tmp[n] = strdup(de->d_name))) {
			if (tmp)
				names = tmp;
			errors++;
			break;
		}
		names = tmp;
		n++;
	}
	closedir(dh);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		char *text = NULL;
		size_t len = 0;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = ga_read_file(path, RULE_FILE_MAX, &text, &len);
		if (rc < 0) {
			ga_diag_error(diag, path, 0, "cannot read: %s",
			              rc == -EFBIG ? "larger than 1 MiB"
			                           : strerror(-rc));
			errors++;
		} else if (strlen(text) != len) {
			ga_diag_error(diag, path, 0,
			              "contains a NUL byte: not "
			              "a rules file");
			errors++;
		} else {
			errors += parse_text(path, text, d, diag);
		}
		free(text);
		free(names[i]);
	}
	free(names);
	return errors;
}

static struct ga_ruleset *load(const char *dir,
                               const struct ga_rules_source *src, size_t n_src,
                               bool with_builtin, struct ga_diag *diag)
{
	struct draft d = {0};
	struct ga_ruleset *rs = NULL;
	int errors = 0;

	if (with_builtin)
		errors += apply_builtin(&d, diag);
	if (dir && *dir)
		errors += apply_dir(dir, &d, diag);
	for (size_t i = 0; i < n_src; i++)
		errors += parse_text(src[i].name, src[i].text, &d, diag);
	if (!errors)
		rs = compile_draft(&d, diag);
	draft_finish(&d);
	return rs;
}

struct ga_ruleset *ga_rules_load_sources(const struct ga_rules_source *sources,
                                         size_t n, bool with_builtin,
                                         struct ga_diag *diag)
{
	return load(NULL, sources, n, with_builtin, diag);
}

struct ga_ruleset *ga_rules_check_dir(const char *dir, struct ga_diag *diag)
{
	return load(dir, NULL, 0, true, diag);
}

struct ga_ruleset *ga_rules_load(const char *dir, struct ga_diag *diag,
                                 bool *fell_back)
{
	struct ga_ruleset *rs;

	if (fell_back)
		*fell_back = false;
	rs = load(dir, NULL, 0, true, diag);
	if (rs || !dir || !*dir)
		return rs;
	ga_diag_error(diag, dir, 0,
	              "ignoring this rules directory because "
	              "of the errors above; using the built-in "
	              "rules");
	if (fell_back)
		*fell_back = true;
	return load(NULL, NULL, 0, true, diag);
}

/* ---- queries --------------------------------------------------------- */

size_t ga_ruleset_size(const struct ga_ruleset *rs)
{
	return rs->n;
}

const struct ga_rule *ga_ruleset_rule(const struct ga_ruleset *rs, size_t i)
{
	return i < rs->n ? rs->rules[i] : NULL;
}

const struct ga_prefilter *ga_ruleset_prefilter(const struct ga_ruleset *rs)
{
	return rs->prefilter;
}

void ga_ruleset_literal_owners(const struct ga_ruleset *rs, size_t lit,
                               const uint32_t **rules, size_t *n)
{
	if (lit >= rs->n_literals) {
		*rules = NULL;
		*n = 0;
		return;
	}
	*rules = rs->owners + rs->owner_start[lit];
	*n = rs->owner_start[lit + 1] - rs->owner_start[lit];
}

size_t ga_ruleset_unfiltered(const struct ga_ruleset *rs,
                             const uint32_t **rules)
{
	*rules = rs->unfiltered;
	return rs->n_unfiltered;
}

const char *ga_rule_id(const struct ga_rule *r)
{
	return r->id;
}

enum ga_class ga_rule_class(const struct ga_rule *r)
{
	return (enum ga_class)r->cls;
}

int ga_rule_priority(const struct ga_rule *r)
{
	return r->priority >= 0
	               ? r->priority
	               : ga_class_default_priority((enum ga_class)r->cls);
}

const char *ga_rule_hint(const struct ga_rule *r)
{
	return r->hint ? r->hint : ga_class_default_hint((enum ga_class)r->cls);
}

bool ga_rule_has_patterns(const struct ga_rule *r)
{
	return r->n_match > 0;
}

bool ga_rule_is_fallback(const struct ga_rule *r)
{
	return r->fallback;
}

bool ga_rule_is_fatal(const struct ga_rule *r)
{
	return r->fatal;
}

const char *ga_rule_file(const struct ga_rule *r)
{
	return r->file;
}

unsigned ga_rule_line(const struct ga_rule *r)
{
	return r->line;
}

struct ga_matcher *ga_matcher_create(void)
{
	struct ga_matcher *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->md = pcre2_match_data_create(1, NULL);
	m->mctx = pcre2_match_context_create(NULL);
	if (!m->md || !m->mctx) {
		ga_matcher_destroy(m);
		return NULL;
	}
	pcre2_set_match_limit(m->mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(m->mctx, DEPTH_LIMIT);
	return m;
}

void ga_matcher_destroy(struct ga_matcher *m)
{
	if (!m)
		return;
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mctx);
	free(m);
}

/* 1 match, 0 none, -1 PCRE2 gave up. */
static int match_any(const struct pattern *v, size_t n, struct ga_matcher *m,
                     const char *s, size_t len)
{
	int gave_up = 0;

	for (size_t i = 0; i < n; i++) {
		int rc = pcre2_match(v[i].code, (PCRE2_SPTR)s, len, 0, 0, m->md,
		                     m->mctx);

		if (rc >= 0)
			return 1;
		if (rc != PCRE2_ERROR_NOMATCH)
			gave_up = 1;
	}
	return gave_up ? -1 : 0;
}

int ga_rule_match(const struct ga_rule *r, struct ga_matcher *m, const char *s,
                  size_t len)
{
	int rc = match_any(r->match, r->n_match, m, s, len);

	if (rc <= 0)
		return rc;
	/* An exclusion that gives up counts as excluding: a false verdict is
	 * worse than a missed one here. */
	return match_any(r->exclude, r->n_exclude, m, s, len) == 0 ? 1 : 0;
}

bool ga_rule_status_ok(const struct ga_rule *r, const struct ga_status *st)
{
	if (!st->known)
		return r->signals == 0 && r->states == 0 && r->oom < 0 &&
		       r->n_match > 0;
	switch (r->exit_kind) {
	case EXIT_FAILURE_ONLY:
		if (!ga_status_failed(st))
			return false;
		break;
	case EXIT_SUCCESS_ONLY:
		if (ga_status_failed(st))
			return false;
		break;
	case EXIT_CODES:
		if (st->signal || !r->exit_codes[st->exit_code & 255])
			return false;
		break;
	case EXIT_ANY:
		break;
	}
	if (r->signals) {
		int sig = st->signal;

		/* A shell reports a child killed by signal N as 128+N. */
		if (!sig && st->exit_code > 128 && st->exit_code < 128 + 64)
			sig = st->exit_code - 128;
		if (sig <= 0 || sig > 63 ||
		    !(r->signals & (UINT64_C(1) << sig)))
			return false;
	}
	if (r->states && !(r->states & (UINT32_C(1) << st->state)))
		return false;
	if (r->oom == 1 && st->oom_kills <= 0)
		return false;
	if (r->oom == 0 && st->oom_kills > 0)
		return false;
	return true;
}

void ga_rule_describe_status(const struct ga_rule *r,
                             const struct ga_status *st, struct ga_buf *out)
{
	const char *sep = "";

	if (r->states) {
		ga_buf_printf(out, "scheduler state %s",
		              ga_sched_state_name(st->state));
		sep = "; ";
	}
	if (r->oom == 1) {
		ga_buf_printf(out,
		              "%s%d oom-kill event(s) in the job's memory "
		              "cgroup",
		              sep, st->oom_kills);
		sep = "; ";
	}
	if (r->signals || r->exit_kind == EXIT_CODES || !*sep) {
		ga_buf_puts(out, sep);
		if (st->signal) {
			const char *name = ga_signal_name(st->signal);

			if (name)
				ga_buf_printf(out, "terminated by %s", name);
			else
				ga_buf_printf(out, "terminated by signal %d",
				              st->signal);
		} else {
			ga_buf_printf(out, "exit code %d", st->exit_code);
		}
	}
}

static void format_list(struct ga_buf *out, const char *key, uint64_t mask,
                        int max, const char *(*name)(int))
{
	const char *sep = "";

	if (!mask)
		return;
	ga_buf_printf(out, "%s = ", key);
	for (int i = 1; i < max; i++) {
		if (mask & (UINT64_C(1) << i)) {
			ga_buf_printf(out, "%s%s", sep, name(i));
			sep = ", ";
		}
	}
	ga_buf_putc(out, '\n');
}

static const char *signal_short(int sig)
{
	const char *n = ga_signal_name(sig);

	return n ? n + 3 : "?";
}

static const char *state_name_int(int s)
{
	return ga_sched_state_name((enum ga_sched_state)s);
}

void ga_rule_format(const struct ga_rule *r, struct ga_buf *out)
{
	ga_buf_printf(out, "[rule %s]\n", r->id);
	ga_buf_printf(out, "; from %s:%u\n", r->file, r->line);
	ga_buf_printf(out, "class = %s\n",
	              ga_class_name((enum ga_class)r->cls));
	ga_buf_printf(out, "priority = %d\n", ga_rule_priority(r));
	for (size_t i = 0; i < r->n_match; i++)
		ga_buf_printf(out, "match = %s\n", r->match[i].src);
	for (size_t i = 0; i < r->n_exclude; i++)
		ga_buf_printf(out, "exclude = %s\n", r->exclude[i].src);
	for (size_t i = 0; i < r->n_literal; i++) {
		const char *l = r->literal[i];
		size_t n = strlen(l);
		/* The parser trims blanks: quote them, as the rule file did. */
		bool quote = n && (l[0] == ' ' || l[0] == '\t' ||
		                   l[n - 1] == ' ' || l[n - 1] == '\t');

		ga_buf_printf(out,
		              quote ? "literal = \"%s\"\n" : "literal = %s\n",
		              l);
	}
	if (r->caseless)
		ga_buf_puts(out, "caseless = yes\n");
	if (r->fallback)
		ga_buf_puts(out, "fallback = yes\n");
	if (r->fatal)
		ga_buf_puts(out, "fatal = yes\n");
	switch (r->exit_kind) {
	case EXIT_FAILURE_ONLY:
		break;
	case EXIT_ANY:
		ga_buf_puts(out, "exit = any\n");
		break;
	case EXIT_SUCCESS_ONLY:
		ga_buf_puts(out, "exit = success\n");
		break;
	case EXIT_CODES: {
		const char *sep = "";

		ga_buf_puts(out, "exit = ");
		for (int i = 0; i < 256; i++) {
			if (r->exit_codes[i]) {
				ga_buf_printf(out, "%s%d", sep, i);
				sep = ", ";
			}
		}
		ga_buf_putc(out, '\n');
		break;
	}
	}
	format_list(out, "signal", r->signals, 64, signal_short);
	format_list(out, "state", r->states, GA_STATE_COUNT, state_name_int);
	if (r->oom >= 0)
		ga_buf_printf(out, "oom_kill = %s\n", r->oom ? "yes" : "no");
	if (r->hint)
		ga_buf_printf(out, "hint = %s\n", r->hint);
}
