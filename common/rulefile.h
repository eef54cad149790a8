/* SPDX-License-Identifier: MIT */
/* Rule files: the text format of rules/README.md (the INI dialect of
 * ini.h, shared with gpualert.conf) parsed into a draft list of rules,
 * which rules.c compiles into a ruleset.  Internal to the rule modules. */
#ifndef GPUALERT_COMMON_RULEFILE_H
#define GPUALERT_COMMON_RULEFILE_H

#include "diag.h"

struct ga_draft;

/* Parse one file's TEXT (NUL-terminated; FILE names it in diagnostics)
 * into D: new rules are appended, a rule with an existing id replaces it,
 * "[disable ID]" removes one.  Every problem is reported to DIAG (may be
 * NULL) as "FILE:LINE: ...".  Returns the number of errors. */
int ga_rulefile_parse(const char *file, const char *text, struct ga_draft *d,
                      struct ga_diag *diag);

/* A literal as a rule writes it: "\b" at its start or end asks for a
 * word boundary there (PCRE2's \b, which needs a letter, digit or '_'
 * on the literal's side); "\t" is a tab.  Sets *BODY (allocated) to the
 * text without the boundaries, tabs in place, and *FLAGS to
 * GA_PREFILTER_WORD_*.  Returns 0, -EINVAL when a
 * "\b" is next to another character, or -ENOMEM (*BODY NULL then). */
int ga_rulefile_literal_body(const char *v, char **body, unsigned *flags);

#endif
