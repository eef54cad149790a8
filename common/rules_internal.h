/* SPDX-License-Identifier: MIT */
/* Internals shared by the rule modules: rulefile.c parses rule files into
 * a draft, rules.c compiles a draft into a ruleset and answers queries.
 * Not for other modules: they see struct ga_rule as opaque (rules.h). */
#ifndef GPUALERT_COMMON_RULES_INTERNAL_H
#define GPUALERT_COMMON_RULES_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"

#define LITERALS_MAX 64 /* "literal =" lines, or literals of a pattern */
/* Rules named by one rule's "echo_of =" (or "ignored_after =", "yields_to =")
 * lines. */
#define RULE_REFS_MAX 64

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
	unsigned tries; /* matches run interpreted, until JIT_AFTER */
	/* copied from an [exclusion] the rule names: its source line and
	 * any warning about it belong to the exclusion, not to the rule */
	bool shared;
};

/* A named list of exclude patterns, "[exclusion ID]", that rules take with
 * "exclusion = ID": the lines that several rules must not count (an
 * optional library's harmless "cannot open shared object file") are
 * written once.  Rules name it by id; the names are resolved when the
 * whole set of files has been read, so a later file's [exclusion] with the
 * same id replaces it for every rule that names it. */
struct exclusion {
	char *id;
	char *file;
	unsigned line;
	struct pattern *exclude;
	size_t n_exclude;
	bool named; /* some rule names it */
};

/* Other rules that a rule names ("echo_of =", "ignored_after =",
 * "yields_to ="): the ids as written, and once the set is compiled the
 * ones found, as indices. */
struct rule_refs {
	char **id;
	size_t n_id;
	uint32_t *at;
	size_t n;
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
	struct rule_refs echo_of;
	struct rule_refs ignored_after;
	struct rule_refs yields_to;
	struct rule_refs exclusions; /* "exclusion =": ids only */
};

/* A list of rules while files are being applied, with the exclusions
 * they may name. */
struct ga_draft {
	struct ga_rule **rules;
	size_t n;
	size_t next_order;
	struct exclusion **exclusions;
	size_t n_exclusions;
};

/* Free R and everything it owns (NULL: nothing). */
void ga_rule_destroy(struct ga_rule *r);

/* Free E and everything it owns (NULL: nothing). */
void ga_exclusion_destroy(struct exclusion *e);

/* The index of the exclusion ID in D, or -1. */
ssize_t ga_draft_find_exclusion(const struct ga_draft *d, const char *id);

/* Destroy D's rules and exclusions and empty it. */
void ga_draft_finish(struct ga_draft *d);

/* The index of the rule ID in D, or -1. */
ssize_t ga_draft_find(const struct ga_draft *d, const char *id);

#endif
