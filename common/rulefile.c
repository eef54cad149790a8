/* SPDX-License-Identifier: MIT */
#include "rulefile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "prefilter.h"
#include "rules_internal.h"

#define RULE_ID_MAX 64
#define RULES_MAX 4096
#define PATTERNS_MAX 64 /* match or exclude lines per rule */

static bool word_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

int ga_rulefile_literal_body(const char *v, char **body, unsigned *flags)
{
	size_t n = strlen(v), s = 0;
	char *o;

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
		/* "\t\b": the boundary would be next to a tab. */
		if (!word_byte(v[n - 3]) ||
		    (v[n - 3] == 't' && n >= s + 4 && v[n - 4] == '\\'))
			return -EINVAL;
		n -= 2;
		*flags |= GA_PREFILTER_WORD_END;
	}
	/* "\t" is a tab, for fields a program separates with tabs (Lua's
	 * print): a tab typed as such looks like blanks to whoever reads the
	 * rule file. */
	*body = malloc(n - s + 1);
	if (!*body)
		return -ENOMEM;
	o = *body;
	for (size_t i = s; i < n; i++) {
		if (v[i] == '\\' && i + 1 < n && v[i + 1] == 't') {
			*o++ = '\t';
			i++;
		} else {
			*o++ = v[i];
		}
	}
	*o = '\0';
	return 0;
}

struct parser {
	const char *file;
	struct ga_diag *diag;
	struct ga_draft *draft;
	struct ga_rule *cur; /* rule being defined, not yet in draft */
	struct exclusion *cur_exclusion; /* likewise */
	char **seen;                     /* rule ids defined in this file */
	size_t n_seen;
	char **seen_exclusions; /* exclusion ids defined in this file */
	size_t n_seen_exclusions;
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
	    (r->n_exclude || r->exclusions.n_id || r->n_literal ||
	     r->fallback || r->fatal || r->echo_of.n_id ||
	     r->ignored_after.n_id || r->yields_to.n_id)) {
		perr(p, r->line,
		     "rule '%s': 'exclude', 'exclusion', 'literal', "
		     "'fallback', 'fatal', 'echo_of', 'ignored_after' and "
		     "'yields_to' need a 'match ='",
		     r->id);
		goto drop;
	}
	at = ga_draft_find(p->draft, r->id);
	if (at >= 0) {
		r->order = p->draft->rules[at]->order;
		ga_rule_destroy(p->draft->rules[at]);
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
	ga_rule_destroy(r);
}

/* Commit the exclusion being defined: add it to the draft or replace the
 * exclusion with the same id. */
static void finish_exclusion(struct parser *p)
{
	struct exclusion *e = p->cur_exclusion;
	ssize_t at;
	struct exclusion **tmp;

	if (!e)
		return;
	p->cur_exclusion = NULL;
	if (p->errors > p->errors_before_cur)
		goto drop;
	if (e->n_exclude == 0) {
		perr(p, e->line,
		     "exclusion '%s': needs at least one 'exclude ='", e->id);
		goto drop;
	}
	at = ga_draft_find_exclusion(p->draft, e->id);
	if (at >= 0) {
		ga_exclusion_destroy(p->draft->exclusions[at]);
		p->draft->exclusions[at] = e;
		return;
	}
	tmp = realloc(p->draft->exclusions,
	              (p->draft->n_exclusions + 1) * sizeof(*tmp));
	if (!tmp) {
		perr(p, e->line, "out of memory");
		goto drop;
	}
	p->draft->exclusions = tmp;
	p->draft->exclusions[p->draft->n_exclusions++] = e;
	return;
drop:
	ga_exclusion_destroy(e);
}

/* A section ends (the next header, a rejected one, or the file's end):
 * commit the rule or the exclusion being defined (at most one is). */
static void finish_section(struct parser *p)
{
	finish_rule(p);
	finish_exclusion(p);
}

/* Append a copy of S to the array *V of *N strings.  False: out of
 * memory (reported at LINE), *V and *N unchanged. */
static bool push_copy(struct parser *p, unsigned line, char ***v, size_t *n,
                      const char *s)
{
	char **tmp = realloc(*v, (*n + 1) * sizeof(*tmp));

	if (!tmp || !(tmp[*n] = strdup(s))) {
		if (tmp)
			*v = tmp;
		perr(p, line, "out of memory");
		return false;
	}
	*v = tmp;
	(*n)++;
	return true;
}

/* Note that this file defines the KIND ("rule", "exclusion") ID, which
 * it may do once: in the list *SEEN of *N. */
static bool note_id(struct parser *p, unsigned line, const char *kind,
                    char ***seen, size_t *n, const char *id)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*seen)[i], id) == 0) {
			perr(p, line, "%s '%s' is defined twice in this file",
			     kind, id);
			return false;
		}
	}
	return push_copy(p, line, seen, n, id);
}

static void begin_exclusion(struct parser *p, unsigned line, const char *id)
{
	if (!note_id(p, line, "exclusion", &p->seen_exclusions,
	             &p->n_seen_exclusions, id))
		return;
	p->cur_exclusion = calloc(1, sizeof(*p->cur_exclusion));
	if (!p->cur_exclusion) {
		perr(p, line, "out of memory");
		return;
	}
	p->errors_before_cur = p->errors;
	p->cur_exclusion->line = line;
	p->cur_exclusion->id = strdup(id);
	p->cur_exclusion->file = strdup(p->file);
	if (!p->cur_exclusion->id || !p->cur_exclusion->file) {
		perr(p, line, "out of memory");
		ga_exclusion_destroy(p->cur_exclusion);
		p->cur_exclusion = NULL;
		return;
	}
	p->bad_section = false;
}

static void parse_section(struct parser *p, unsigned line, char *s)
{
	char *kind, *id;

	finish_section(p);
	p->bad_section = true;
	kind = trim(s);
	id = kind + strcspn(kind, " \t");
	if (*id)
		*id++ = '\0';
	id = trim(id);
	if (strcmp(kind, "rule") != 0 && strcmp(kind, "disable") != 0 &&
	    strcmp(kind, "exclusion") != 0) {
		perr(p, line,
		     "unknown section '[%s]' (want 'rule', 'exclusion' or "
		     "'disable')",
		     kind);
		return;
	}
	if (!valid_id(id)) {
		perr(p, line,
		     "invalid %s id '%s' (1-%d characters of "
		     "A-Z a-z 0-9 _ . : -)",
		     strcmp(kind, "exclusion") ? "rule" : "exclusion", id,
		     RULE_ID_MAX);
		return;
	}
	if (strcmp(kind, "exclusion") == 0) {
		begin_exclusion(p, line, id);
		return;
	}
	if (strcmp(kind, "disable") == 0) {
		ssize_t at = ga_draft_find(p->draft, id);

		if (at < 0) {
			perr(p, line,
			     "disable: no rule '%s' in the built-in "
			     "rules or earlier files",
			     id);
			return;
		}
		ga_rule_destroy(p->draft->rules[at]);
		memmove(&p->draft->rules[at], &p->draft->rules[at + 1],
		        (p->draft->n - (size_t)at - 1) * sizeof(void *));
		p->draft->n--;
		p->bad_section = false;
		return;
	}
	if (!note_id(p, line, "rule", &p->seen, &p->n_seen, id))
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
		ga_rule_destroy(p->cur);
		p->cur = NULL;
		return;
	}
	p->bad_section = false;
}

/* Append SRC to the N patterns *V of the KIND ("rule", "exclusion") ID. */
static bool add_pattern(struct parser *p, unsigned line, const char *kind,
                        const char *id, struct pattern **v, size_t *n,
                        const char *src)
{
	struct pattern *tmp;

	if (*n >= PATTERNS_MAX) {
		perr(p, line, "%s '%s': too many patterns (at most %d)", kind,
		     id, PATTERNS_MAX);
		return false;
	}
	tmp = realloc(*v, (*n + 1) * sizeof(*tmp));
	if (!tmp)
		goto nomem;
	*v = tmp;
	tmp[*n].src = strdup(src);
	tmp[*n].line = line;
	tmp[*n].code = NULL;
	tmp[*n].shared = false;
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

static void key_class(struct parser *p, unsigned line, const char *key,
                      char *value)
{
	struct ga_rule *r = p->cur;

	(void)key;
	r->cls = ga_class_from_name(value);
	if (r->cls < 0)
		perr(p, line,
		     "rule '%s': unknown class '%s' (see the "
		     "taxonomy in README.md)",
		     r->id, value);
}

static void key_priority(struct parser *p, unsigned line, const char *key,
                         char *value)
{
	struct ga_rule *r = p->cur;
	char *end;
	long v;

	(void)key;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || *end || end == value || v < 0 || v > 1000)
		perr(p, line,
		     "rule '%s': priority must be an integer "
		     "0-1000, not '%s'",
		     r->id, value);
	else
		r->priority = (int)v;
}

static void key_pattern(struct parser *p, unsigned line, const char *key,
                        char *value)
{
	struct ga_rule *r = p->cur;

	if (!*value)
		perr(p, line, "rule '%s': empty %s pattern", r->id, key);
	else if (!strcmp(key, "match"))
		add_pattern(p, line, "rule", r->id, &r->match, &r->n_match,
		            value);
	else
		add_pattern(p, line, "rule", r->id, &r->exclude, &r->n_exclude,
		            value);
}

static void key_literal(struct parser *p, unsigned line, const char *key,
                        char *value)
{
	struct ga_rule *r = p->cur;
	size_t vlen = strlen(value);
	char *body;
	unsigned lflags;
	int rc;

	(void)key;
	/* "..." keeps leading/trailing blanks (" nan"). */
	if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
		value[vlen - 1] = '\0';
		value++;
	}
	rc = ga_rulefile_literal_body(value, &body, &lflags);
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
	push_copy(p, line, &r->literal, &r->n_literal, value);
}

static void key_exit(struct parser *p, unsigned line, const char *key,
                     char *value)
{
	struct ga_rule *r = p->cur;

	(void)key;
	memset(r->exit_codes, 0, sizeof(r->exit_codes));
	if (!strcmp(value, "failure"))
		r->exit_kind = EXIT_FAILURE_ONLY;
	else if (!strcmp(value, "any"))
		r->exit_kind = EXIT_ANY;
	else if (!strcmp(value, "success"))
		r->exit_kind = EXIT_SUCCESS_ONLY;
	else if (each_item(p, line, value, add_exit_code))
		r->exit_kind = EXIT_CODES;
}

static void key_signal(struct parser *p, unsigned line, const char *key,
                       char *value)
{
	(void)key;
	each_item(p, line, value, add_signal);
}

static void key_state(struct parser *p, unsigned line, const char *key,
                      char *value)
{
	(void)key;
	each_item(p, line, value, add_state);
}

static void key_oom_kill(struct parser *p, unsigned line, const char *key,
                         char *value)
{
	struct ga_rule *r = p->cur;

	(void)key;
	r->oom = parse_bool(value);
	if (r->oom < 0)
		perr(p, line, "rule '%s': oom_kill must be yes or no", r->id);
}

static void key_flag(struct parser *p, unsigned line, const char *key,
                     char *value)
{
	struct ga_rule *r = p->cur;
	int v = parse_bool(value);

	if (v < 0)
		perr(p, line, "rule '%s': %s must be yes or no", r->id, key);
	else if (!strcmp(key, "caseless"))
		r->caseless = v;
	else if (!strcmp(key, "fallback"))
		r->fallback = v;
	else
		r->fatal = v;
}

static bool add_ref(struct parser *p, unsigned line, const char *key,
                    struct rule_refs *refs, const char *tok)
{
	struct ga_rule *r = p->cur;
	bool exclusion = !strcmp(key, "exclusion"); /* else it names rules */

	if (!valid_id(tok)) {
		perr(p, line, "rule '%s': %s: '%s' is not %s id", r->id, key,
		     tok, exclusion ? "an exclusion" : "a rule");
		return false;
	}
	if (refs->n_id >= RULE_REFS_MAX) {
		perr(p, line, "rule '%s': %s: too many %s", r->id, key,
		     exclusion ? "exclusions" : "rules");
		return false;
	}
	return push_copy(p, line, &refs->id, &refs->n_id, tok);
}

static bool add_echo_of(struct parser *p, unsigned line, const char *tok)
{
	return add_ref(p, line, "echo_of", &p->cur->echo_of, tok);
}

static bool add_ignored_after(struct parser *p, unsigned line, const char *tok)
{
	return add_ref(p, line, "ignored_after", &p->cur->ignored_after, tok);
}

static bool add_yields_to(struct parser *p, unsigned line, const char *tok)
{
	return add_ref(p, line, "yields_to", &p->cur->yields_to, tok);
}

static bool add_exclusion(struct parser *p, unsigned line, const char *tok)
{
	return add_ref(p, line, "exclusion", &p->cur->exclusions, tok);
}

static void key_refs(struct parser *p, unsigned line, const char *key,
                     char *value)
{
	each_item(p, line, value,
	          !strcmp(key, "echo_of")     ? add_echo_of
	          : !strcmp(key, "exclusion") ? add_exclusion
	          : !strcmp(key, "yields_to") ? add_yields_to
	                                      : add_ignored_after);
}

static void key_hint(struct parser *p, unsigned line, const char *key,
                     char *value)
{
	struct ga_rule *r = p->cur;

	(void)key;
	free(r->hint);
	r->hint = strdup(value);
	if (!r->hint)
		perr(p, line, "out of memory");
}

/* Every key of a [rule ID] section and what sets it, in the order the
 * "unknown key" message lists them. */
static const struct {
	const char *name;
	void (*set)(struct parser *p, unsigned line, const char *key,
	            char *value);
} keys[] = {
        {"class", key_class},        {"priority", key_priority},
        {"match", key_pattern},      {"exclude", key_pattern},
        {"exclusion", key_refs},     {"literal", key_literal},
        {"exit", key_exit},          {"signal", key_signal},
        {"state", key_state},        {"oom_kill", key_oom_kill},
        {"caseless", key_flag},      {"fallback", key_flag},
        {"fatal", key_flag},         {"echo_of", key_refs},
        {"ignored_after", key_refs}, {"yields_to", key_refs},
        {"hint", key_hint},
};

/* A key of an [exclusion ID] section: only "exclude =". */
static void parse_exclusion_key(struct parser *p, unsigned line, char *key,
                                char *value)
{
	struct exclusion *e = p->cur_exclusion;

	if (strcmp(key, "exclude") != 0)
		perr(p, line, "exclusion '%s': unknown key '%s' (exclude)",
		     e->id, key);
	else if (!*value)
		perr(p, line, "exclusion '%s': empty exclude pattern", e->id);
	else
		add_pattern(p, line, "exclusion", e->id, &e->exclude,
		            &e->n_exclude, value);
}

static void parse_key(struct parser *p, unsigned line, char *key, char *value)
{
	if (p->cur_exclusion) {
		parse_exclusion_key(p, line, key, value);
		return;
	}
	if (!p->cur) {
		if (!p->bad_section)
			perr(p, line, "'%s' outside a [rule ID] section", key);
		return; /* inside a rejected section: already reported */
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcmp(key, keys[i].name)) {
			keys[i].set(p, line, key, value);
			return;
		}
	}
	perr(p, line,
	     "rule '%s': unknown key '%s' (class, priority, "
	     "match, exclude, exclusion, literal, exit, signal, state, "
	     "oom_kill, caseless, fallback, fatal, echo_of, ignored_after, "
	     "yields_to, hint)",
	     p->cur->id, key);
}

static int on_ini(void *ctx, unsigned line, char *name, char *value)
{
	struct parser *p = ctx;

	if (!name) {
		p->errors++; /* reported by the reader */
		if (!value) {
			finish_section(p);
			p->bad_section = true; /* its keys: not reported */
		}
	} else if (!value)
		parse_section(p, line, name);
	else
		parse_key(p, line, name, value);
	return 0;
}

int ga_rulefile_parse(const char *file, const char *text, struct ga_draft *d,
                      struct ga_diag *diag)
{
	struct parser p = {.file = file, .diag = diag, .draft = d};
	int rc;

	rc = ga_ini_parse(file, text, strlen(text), on_ini, &p, diag);
	if (rc < 0) {
		ga_diag_error(diag, file, 0, "out of memory");
		p.errors++;
	}
	finish_section(&p);
	for (size_t i = 0; i < p.n_seen; i++)
		free(p.seen[i]);
	free(p.seen);
	for (size_t i = 0; i < p.n_seen_exclusions; i++)
		free(p.seen_exclusions[i]);
	free(p.seen_exclusions);
	return p.errors;
}
