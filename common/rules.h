/* SPDX-License-Identifier: MIT */
/* Rules: the admin-tunable knowledge of what failure messages look like.
 *
 * A rule names a class of the taxonomy, PCRE2 patterns that recognise its
 * evidence in a log line, optional exclusions, conditions on how the job
 * ended, a hint for the user, and a priority.  The file format is
 * documented in rules/README.md.  A ruleset is the built-in rules (compiled
 * into the binary from the rules directory) with an admin's directory layered on
 * top: later files add rules, replace them by id, or disable them.
 *
 * A loaded ruleset is immutable and may be shared between threads; the
 * per-thread match state lives in a struct ga_matcher.
 */
#ifndef GPUALERT_COMMON_RULES_H
#define GPUALERT_COMMON_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "status.h"
#include "taxonomy.h"

struct ga_rule;
struct ga_ruleset;
struct ga_matcher;
struct ga_prefilter;

/* An in-memory rules file. */
struct ga_rules_source {
	const char *name; /* for diagnostics: "10-gpu.rules" */
	const char *text; /* NUL-terminated */
};

/* The rules compiled into the binary, in load order. */
extern const struct ga_rules_source ga_builtin_rules[];
extern const size_t ga_builtin_rules_count;

/* Load the built-in rules, then every "*.rules" file of DIR in name order
 * (DIR NULL or "": built-ins only; a missing DIR is not an error).
 * Every problem is reported to DIAG (may be NULL) as "file:LINE: ...".
 * If DIR has any error, the whole directory is ignored and the built-in
 * rules are returned, with *FELL_BACK (may be NULL) set to true: a broken
 * admin file never stops a classification.  Returns NULL only when memory
 * runs out or the built-in rules themselves fail (a build bug).  Destroy
 * with ga_ruleset_destroy(). */
struct ga_ruleset *ga_rules_load(const char *dir, struct ga_diag *diag,
                                 bool *fell_back);

/* Load exactly SOURCES (after the built-ins if WITH_BUILTIN).  Returns NULL
 * on any error (reported to DIAG), with no fallback: for checking rule
 * files and for tests, so with the checks of ga_rules_check_dir. */
struct ga_ruleset *ga_rules_load_sources(const struct ga_rules_source *sources,
                                         size_t n, bool with_builtin,
                                         struct ga_diag *diag);

/* Like ga_rules_load, but with no fallback: NULL if DIR has any error,
 * and with the checks a load skips for speed (a pattern that its rule's
 * own literals hide from the prefilter is warned about).  For `gpualert
 * rules check`. */
struct ga_ruleset *ga_rules_check_dir(const char *dir, struct ga_diag *diag);

void ga_ruleset_destroy(struct ga_ruleset *rs);

/* Rules in priority order (highest first; ties in load order).  The
 * pointers live as long as RS. */
size_t ga_ruleset_size(const struct ga_ruleset *rs);
const struct ga_rule *ga_ruleset_rule(const struct ga_ruleset *rs, size_t i);

/* The prefilter over every rule's literals (NULL when no rule has one),
 * and which rules own literal LIT (indices into ga_ruleset_rule()). */
const struct ga_prefilter *ga_ruleset_prefilter(const struct ga_ruleset *rs);
void ga_ruleset_literal_owners(const struct ga_ruleset *rs, size_t lit,
                               const uint32_t **rules, size_t *n);

/* Rules with patterns but no literal: they must see every line. */
size_t ga_ruleset_unfiltered(const struct ga_ruleset *rs,
                             const uint32_t **rules);

const char *ga_rule_id(const struct ga_rule *r);
enum ga_class ga_rule_class(const struct ga_rule *r);
int ga_rule_priority(const struct ga_rule *r);
/* The rule's hint, or its class's default hint. */
const char *ga_rule_hint(const struct ga_rule *r);
/* False for a status rule: one that tests only how the job ended. */
bool ga_rule_has_patterns(const struct ga_rule *r);
/* A fallback rule's match counts only on lines no other rule matched
 * ("fallback = yes": the generic exception rule, so that "RuntimeError:
 * NCCL error ..." is evidence of nccl, not of code_error). */
bool ga_rule_is_fallback(const struct ga_rule *r);
/* The rules (indices into ga_ruleset_rule()) whose lines R's lines echo
 * ("echo_of ="): a line of R that comes after a line of one of them does
 * not count.  Returns how many; *RULES is valid while R is. */
size_t ga_rule_echo_of(const struct ga_rule *r, const uint32_t **rules);
/* The rules whose lines announce that the next line of R is not an error
 * ("ignored_after ="): Python's "Exception ignored in: ..." before the
 * traceback of an exception it swallowed.  The first line of R after a
 * line of one of them (within a traceback's reach) does not count. */
size_t ga_rule_ignored_after(const struct ga_rule *r, const uint32_t **rules);
/* The rules that R gives way to ("yields_to ="): R does not decide when a
 * line of one of them counts anywhere in the log, before or after R's
 * own (Slurm reports a job's oom-kill events when its batch step ends,
 * after the cancellation that ended it, though the kills came first). */
size_t ga_rule_yields_to(const struct ga_rule *r, const uint32_t **rules);
/* A fatal rule's match proves the job failed even if it exited 0
 * ("fatal = yes": a shell reporting its child killed, an oom-kill). */
bool ga_rule_is_fatal(const struct ga_rule *r);
/* Where the rule was defined ("10-gpu.rules", line). */
const char *ga_rule_file(const struct ga_rule *r);
unsigned ga_rule_line(const struct ga_rule *r);

/* Per-thread match state.  NULL on ENOMEM. */
struct ga_matcher *ga_matcher_create(void);
void ga_matcher_destroy(struct ga_matcher *m);

/* Does line S (LEN bytes, no terminator) match one of R's patterns and
 * none of its exclusions?  Returns 1 or 0, or -1 when PCRE2 gave up (match
 * limit): the line then counts as not matching. */
int ga_rule_match(const struct ga_rule *r, struct ga_matcher *m, const char *s,
                  size_t len);

/* Do R's conditions on how the job ended hold for ST?  With an unknown
 * status, exit conditions count as met and signal/state/oom conditions
 * as not met. */
bool ga_rule_status_ok(const struct ga_rule *r, const struct ga_status *st);

/* Describe, for a status rule, the fact that makes it hold for ST
 * ("terminated by SIGSEGV").  Appends to OUT. */
void ga_rule_describe_status(const struct ga_rule *r,
                             const struct ga_status *st, struct ga_buf *out);

/* Append R in rule-file syntax to OUT (for `gpualert rules list`). */
void ga_rule_format(const struct ga_rule *r, struct ga_buf *out);

#endif
