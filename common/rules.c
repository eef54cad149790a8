/* SPDX-License-Identifier: MIT */
#include "rules.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "literals.h"
#include "log.h"
#include "prefilter.h"
#include "rulefile.h"
#include "rules_internal.h"

#define RULE_FILE_MAX (1 << 20)
#define MATCH_LIMIT 100000 /* PCRE2 backtracking bound per line */
#define DEPTH_LIMIT 1000

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

static void refs_free(struct rule_refs *refs)
{
	for (size_t i = 0; i < refs->n_id; i++)
		free(refs->id[i]);
	free(refs->id);
	free(refs->at);
}

void ga_rule_destroy(struct ga_rule *r)
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
	refs_free(&r->echo_of);
	refs_free(&r->ignored_after);
	refs_free(&r->yields_to);
	refs_free(&r->exclusions);
	free(r);
}

void ga_exclusion_destroy(struct exclusion *e)
{
	if (!e)
		return;
	free(e->id);
	free(e->file);
	pattern_free(e->exclude, e->n_exclude);
	free(e);
}

void ga_ruleset_destroy(struct ga_ruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		ga_rule_destroy(rs->rules[i]);
	free(rs->rules);
	ga_prefilter_destroy(rs->prefilter);
	free(rs->owner_start);
	free(rs->owners);
	free(rs->unfiltered);
	free(rs);
}

void ga_draft_finish(struct ga_draft *d)
{
	for (size_t i = 0; i < d->n; i++)
		ga_rule_destroy(d->rules[i]);
	free(d->rules);
	for (size_t i = 0; i < d->n_exclusions; i++)
		ga_exclusion_destroy(d->exclusions[i]);
	free(d->exclusions);
	memset(d, 0, sizeof(*d));
}

/* The index of the rule ID among the N RULES, or -1. */
static ssize_t find_id(struct ga_rule *const *rules, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rules[i]->id, id) == 0)
			return (ssize_t)i;
	return -1;
}

ssize_t ga_draft_find(const struct ga_draft *d, const char *id)
{
	return find_id(d->rules, d->n, id);
}

ssize_t ga_draft_find_exclusion(const struct ga_draft *d, const char *id)
{
	for (size_t i = 0; i < d->n_exclusions; i++)
		if (strcmp(d->exclusions[i]->id, id) == 0)
			return (ssize_t)i;
	return -1;
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

/* Compile the N patterns V of OWNER ("rule", "exclusion") ID, written in
 * FILE; errors and warnings are reported at their lines there, except for
 * a pattern copied from an exclusion, which its own compilation reported. */
static int compile_patterns(const char *owner, const char *id, const char *file,
                            bool caseless, struct pattern *v, size_t n,
                            struct ga_diag *diag)
{
	int errors = 0;

	for (size_t i = 0; i < n; i++) {
		int err;
		PCRE2_SIZE off;
		uint32_t opts = caseless ? PCRE2_CASELESS : 0;

		/* Byte mode on purpose: logs hold invalid UTF-8 and NUL bytes,
		 * and the patterns are ASCII. */
		v[i].code = pcre2_compile((PCRE2_SPTR)v[i].src,
		                          PCRE2_ZERO_TERMINATED, opts, &err,
		                          &off, NULL);
		if (!v[i].code && v[i].shared)
			continue; /* the exclusion's own compilation reported it */
		if (!v[i].code) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(err, msg, sizeof(msg));
			ga_diag_error(diag, file, v[i].line,
			              "%s '%s': %s at offset %zu", owner, id,
			              (const char *)msg, (size_t)off);
			errors++;
			continue;
		}
		if (!v[i].shared && nested_unbounded(v[i].src))
			ga_diag_warn(
			        diag, file, v[i].line,
			        "%s '%s': a group with an unbounded "
			        "quantifier is itself repeated without bound: "
			        "backtracking can cost every line up to the "
			        "match limit; make the inner quantifier "
			        "possessive (a++) or the group atomic (?>...)",
			        owner, id);
	}
	return errors;
}

/* Append to R's exclude patterns those of every exclusion it names; an
 * exclusion that no file defines is an error (at the rule's header). */
static int expand_exclusions(struct ga_draft *d, struct ga_rule *r,
                             struct ga_diag *diag)
{
	int errors = 0;

	for (size_t k = 0; k < r->exclusions.n_id; k++) {
		ssize_t at = ga_draft_find_exclusion(d, r->exclusions.id[k]);
		struct exclusion *e;
		struct pattern *tmp;

		if (at < 0) {
			ga_diag_error(diag, r->file, r->line,
			              "rule '%s': exclusion: there is no "
			              "[exclusion %s]",
			              r->id, r->exclusions.id[k]);
			errors++;
			continue;
		}
		e = d->exclusions[at];
		e->named = true;
		tmp = realloc(r->exclude,
		              (r->n_exclude + e->n_exclude) * sizeof(*tmp));
		if (!tmp)
			goto nomem;
		r->exclude = tmp;
		for (size_t i = 0; i < e->n_exclude; i++) {
			struct pattern *q = &r->exclude[r->n_exclude];

			*q = e->exclude[i];
			q->code = NULL;
			q->shared = true;
			if (!(q->src = strdup(e->exclude[i].src)))
				goto nomem;
			r->n_exclude++;
		}
	}
	return errors;
nomem:
	ga_diag_error(diag, r->file, r->line, "out of memory");
	return errors + 1;
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

/* TEXT as written in a rule when WRITTEN (see ga_rulefile_literal_body),
 * else as extracted from a pattern; found in its case only when EXACT. */
static void lit_add(struct lit_list *l, const char *text, bool written,
                    bool exact, uint32_t owner)
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
	} else if (ga_rulefile_literal_body(text, &l->text[l->n],
	                                    &l->flags[l->n]) < 0) {
		l->text[l->n] = NULL;
	}
	if (!l->text[l->n]) {
		l->failed = true;
		return;
	}
	if (exact)
		l->flags[l->n] |= GA_PREFILTER_CASE;
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

/* Whether R's patterns all match case-sensitively. */
static bool case_sensitive(const struct ga_rule *r)
{
	if (r->caseless)
		return false;
	for (size_t k = 0; k < r->n_match; k++)
		if (ga_literals_caseless(r->match[k].src))
			return false;
	return true;
}

/* Whether R's literal BODY is found in its case: when R's
 * patterns are case-sensitive and one of them has the literal's text as
 * it stands, "Error" in "(Error|Exception)".  A literal written in
 * another case than its pattern's, or only implied by it ("ncclSystemError"
 * for "nccl(System|Internal)Error"), stays caseless, as literals always
 * were. */
static bool body_exact(const struct ga_rule *r, const char *body)
{
	if (!case_sensitive(r))
		return false;
	for (size_t k = 0; k < r->n_match; k++)
		if (strstr(r->match[k].src, body))
			return true;
	return false;
}

/* body_exact of the literal LIT as a rule writes it. */
static bool literal_exact(const struct ga_rule *r, const char *lit)
{
	char *body;
	unsigned flags;
	bool exact;

	if (ga_rulefile_literal_body(lit, &body, &flags))
		return false;
	exact = body_exact(r, body);
	free(body);
	return exact;
}

/* A rule's own literals replace the ones its patterns imply, so a pattern
 * added later without a literal of its own is tried only on lines that
 * happen to hold another pattern's literal: in effect it never matches.
 * Warn for each pattern that can match a line holding none of them, with
 * each literal found as the prefilter finds it (body_exact): "Cannot
 * allocate memory" in its case only never reaches "cannot allocate memory
 * for thread-local data".  Only when rules are checked: spelling out
 * every pattern costs more than the rest of a load, which every job's
 * report process pays. */
static void warn_unreached(const struct ga_rule *r, struct ga_diag *diag)
{
	const char *body[LITERALS_MAX];
	char *owned[LITERALS_MAX];
	bool exact[LITERALS_MAX];
	size_t nb = 0;

	for (size_t k = 0; k < r->n_literal && nb < LITERALS_MAX; k++) {
		unsigned flags;

		if (ga_rulefile_literal_body(r->literal[k], &owned[nb],
		                             &flags) == 0) {
			body[nb] = owned[nb];
			exact[nb] = body_exact(r, owned[nb]);
			nb++;
		}
	}
	for (size_t k = 0; k < r->n_match; k++) {
		char *witness;

		if (ga_literals_cover(r->match[k].src, body, exact, nb,
		                      &witness) == 0)
			ga_diag_warn(diag, r->file, r->match[k].line,
			             "rule '%s': this pattern can match a line "
			             "that holds none of the rule's literals "
			             "(\"%s\", '~' for any text), and is never "
			             "tried on it: add a 'literal =' for it",
			             r->id, witness);
		free(witness);
	}
	for (size_t b = 0; b < nb; b++)
		free(owned[b]);
}

/* Collect each rule's literals: its own, or one per alternative of every
 * match pattern.  A rule left without any becomes "unfiltered".  A
 * literal of a case-sensitive pattern is found in its case only: then
 * "Error" does not send every "error" of a warning to PCRE2. */
static int build_prefilter(struct ga_ruleset *rs, bool lint,
                           struct ga_diag *diag)
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
			lit_add(&l, r->literal[k], true,
			        literal_exact(r, r->literal[k]), (uint32_t)i);
		if (r->n_literal) {
			if (lint)
				warn_unreached(r, diag);
			continue;
		}
		for (size_t k = 0; k < r->n_match && complete; k++) {
			char *found[LITERALS_MAX];
			size_t nf = ga_literals_extract(r->match[k].src, found,
			                                LITERALS_MAX);
			bool exact = !r->caseless &&
			             !ga_literals_caseless(r->match[k].src);

			if (nf == 0)
				complete = false;
			for (size_t j = 0; j < nf; j++) {
				lit_add(&l, found[j], false, exact,
				        (uint32_t)i);
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

/* Turn the ids of R's KEY ("echo_of", "ignored_after", "yields_to") into
 * indices of RS.  An id that names no rule (an admin disabled it) only
 * loses its effect: a warning. */
static int resolve_refs(const struct ga_ruleset *rs, const struct ga_rule *r,
                        const char *key, struct rule_refs *refs,
                        struct ga_diag *diag)
{
	if (!refs->n_id)
		return 0;
	refs->at = calloc(refs->n_id, sizeof(*refs->at));
	if (!refs->at)
		return -1;
	for (size_t k = 0; k < refs->n_id; k++) {
		ssize_t j = find_id(rs->rules, rs->n, refs->id[k]);

		if (j >= 0)
			refs->at[refs->n++] = (uint32_t)j;
		else
			ga_diag_warn(diag, r->file, r->line,
			             "rule '%s': %s: there is no rule '%s'; "
			             "ignored",
			             r->id, key, refs->id[k]);
	}
	return 0;
}

static int resolve_all_refs(struct ga_ruleset *rs, struct ga_diag *diag)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct ga_rule *r = rs->rules[i];

		if (resolve_refs(rs, r, "echo_of", &r->echo_of, diag) < 0 ||
		    resolve_refs(rs, r, "ignored_after", &r->ignored_after,
		                 diag) < 0 ||
		    resolve_refs(rs, r, "yields_to", &r->yields_to, diag) < 0)
			return -1;
	}
	return 0;
}

/* Turn a draft into a compiled ruleset; the draft's rules move into it. */
static struct ga_ruleset *compile_draft(struct ga_draft *d, bool lint,
                                        struct ga_diag *diag)
{
	struct ga_ruleset *rs;
	int errors = 0;

	for (size_t i = 0; i < d->n_exclusions; i++) {
		struct exclusion *e = d->exclusions[i];

		errors += compile_patterns("exclusion", e->id, e->file, false,
		                           e->exclude, e->n_exclude, diag);
	}
	for (size_t i = 0; i < d->n; i++) {
		struct ga_rule *r = d->rules[i];

		errors += expand_exclusions(d, r, diag);
		errors += compile_patterns("rule", r->id, r->file, r->caseless,
		                           r->match, r->n_match, diag);
		errors += compile_patterns("rule", r->id, r->file, r->caseless,
		                           r->exclude, r->n_exclude, diag);
	}
	/* An exclusion no rule names does nothing: most likely its id or a
	 * rule's "exclusion =" is misspelt (an admin's replacement of a
	 * built-in one would then change nothing). */
	for (size_t i = 0; i < d->n_exclusions; i++)
		if (!d->exclusions[i]->named)
			ga_diag_warn(diag, d->exclusions[i]->file,
			             d->exclusions[i]->line,
			             "exclusion '%s': no rule names it",
			             d->exclusions[i]->id);
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
	if (resolve_all_refs(rs, diag) < 0 ||
	    build_prefilter(rs, lint, diag) < 0) {
		ga_diag_error(diag, NULL, 0,
		              "out of memory compiling the rules");
		ga_ruleset_destroy(rs);
		return NULL;
	}
	return rs;
}

static int apply_builtin(struct ga_draft *d, struct ga_diag *diag)
{
	int errors = 0;

	for (size_t i = 0; i < ga_builtin_rules_count; i++)
		errors += ga_rulefile_parse(ga_builtin_rules[i].name,
		                            ga_builtin_rules[i].text, d, diag);
	return errors;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Apply every *.rules file of DIR in name order.  Returns the number of
 * errors; a missing directory is none. */
static int apply_dir(const char *dir, struct ga_draft *d, struct ga_diag *diag)
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
			errors += ga_rulefile_parse(path, text, d, diag);
		}
		free(text);
		free(names[i]);
	}
	free(names);
	return errors;
}

/* LINT: also the checks only `gpualert rules check` needs. */
static struct ga_ruleset *load(const char *dir,
                               const struct ga_rules_source *src, size_t n_src,
                               bool with_builtin, bool lint,
                               struct ga_diag *diag)
{
	struct ga_draft d = {0};
	struct ga_ruleset *rs = NULL;
	int errors = 0;

	if (with_builtin)
		errors += apply_builtin(&d, diag);
	if (dir && *dir)
		errors += apply_dir(dir, &d, diag);
	for (size_t i = 0; i < n_src; i++)
		errors += ga_rulefile_parse(src[i].name, src[i].text, &d, diag);
	if (!errors)
		rs = compile_draft(&d, lint, diag);
	ga_draft_finish(&d);
	return rs;
}

struct ga_ruleset *ga_rules_load_sources(const struct ga_rules_source *sources,
                                         size_t n, bool with_builtin,
                                         struct ga_diag *diag)
{
	return load(NULL, sources, n, with_builtin, true, diag);
}

struct ga_ruleset *ga_rules_check_dir(const char *dir, struct ga_diag *diag)
{
	return load(dir, NULL, 0, true, true, diag);
}

struct ga_ruleset *ga_rules_load(const char *dir, struct ga_diag *diag,
                                 bool *fell_back)
{
	struct ga_ruleset *rs;

	if (fell_back)
		*fell_back = false;
	rs = load(dir, NULL, 0, true, false, diag);
	if (rs || !dir || !*dir)
		return rs;
	ga_diag_error(diag, dir, 0,
	              "ignoring this rules directory because "
	              "of the errors above; using the built-in "
	              "rules");
	if (fell_back)
		*fell_back = true;
	return load(NULL, NULL, 0, true, false, diag);
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

size_t ga_rule_echo_of(const struct ga_rule *r, const uint32_t **rules)
{
	*rules = r->echo_of.at;
	return r->echo_of.n;
}

size_t ga_rule_ignored_after(const struct ga_rule *r, const uint32_t **rules)
{
	*rules = r->ignored_after.at;
	return r->ignored_after.n;
}

size_t ga_rule_yields_to(const struct ga_rule *r, const uint32_t **rules)
{
	*rules = r->yields_to.at;
	return r->yields_to.n;
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

/* A pattern is JIT-compiled once it has run this often.  The prefilter
 * sends few lines of a real log to PCRE2, and compiling every pattern
 * up front cost more CPU (about a third of loading the rules) than a
 * typical log's matches; a log whose lines keep reaching one pattern
 * gets it compiled after a handful, and pcre2_match() then uses it. */
#define JIT_AFTER 32

static void jit_when_busy(struct pattern *p)
{
	int err;

	if (p->tries > JIT_AFTER || ++p->tries <= JIT_AFTER)
		return;
	err = pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE);
	if (err < 0)
		ga_log(GA_LOG_DEBUG,
		       "gpualert: rules: pattern at line %u: no JIT (%d), "
		       "interpreting",
		       p->line, err);
}

/* 1 match, 0 none, -1 PCRE2 gave up. */
static int match_any(struct pattern *v, size_t n, struct ga_matcher *m,
                     const char *s, size_t len)
{
	int gave_up = 0;

	for (size_t i = 0; i < n; i++) {
		int rc;

		jit_when_busy(&v[i]);
		rc = pcre2_match(v[i].code, (PCRE2_SPTR)s, len, 0, 0, m->md,
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

/* "KEY = a, b" as written, if the rule names any. */
static void write_refs(struct ga_buf *out, const char *key,
                       const struct rule_refs *refs)
{
	if (!refs->n_id)
		return;
	ga_buf_printf(out, "%s = ", key);
	for (size_t i = 0; i < refs->n_id; i++)
		ga_buf_printf(out, "%s%s", i ? ", " : "", refs->id[i]);
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
		if (!r->exclude[i].shared)
			ga_buf_printf(out, "exclude = %s\n", r->exclude[i].src);
	/* What the exclusions it names add, as comments after their names:
	 * the list shows every line the rule does not count. */
	write_refs(out, "exclusion", &r->exclusions);
	for (size_t i = 0; i < r->n_exclude; i++)
		if (r->exclude[i].shared)
			ga_buf_printf(out, "; exclude = %s\n",
			              r->exclude[i].src);
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
	write_refs(out, "echo_of", &r->echo_of);
	write_refs(out, "ignored_after", &r->ignored_after);
	write_refs(out, "yields_to", &r->yields_to);
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
