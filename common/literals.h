/* SPDX-License-Identifier: MIT */
/* Literal extraction: the plain text that every match of a PCRE2 pattern
 * must contain, which the prefilter searches for so that PCRE2 only sees
 * the lines that hold it. */
#ifndef GPUALERT_COMMON_LITERALS_H
#define GPUALERT_COMMON_LITERALS_H

#include <stdbool.h>
#include <stddef.h>

/* The literal that the prefilter would use for PATTERN: the longest run
 * of plain characters that every match must contain.  Returns the number
 * of alternatives' literals written to OUT (each heap-allocated; caller
 * frees), or 0 when some alternative has none of at least
 * GA_PREFILTER_MIN_LITERAL bytes.  At most MAX are written. */
size_t ga_literals_extract(const char *pattern, char **out, size_t max);

/* Whether PATTERN may turn on caseless matching itself: an option
 * setting with 'i' ("(?i)", "(?si:", also "(?-i)": a guess on the safe
 * side).  Without it and without PCRE2_CASELESS, a literal of the
 * pattern occurs in the case it is written. */
bool ga_literals_caseless(const char *pattern);

/* Whether every match of PATTERN holds one of the N strings LITS (ASCII
 * case ignored, except for a literal whose EXACT[i] is true: the
 * prefilter finds it in its case only; EXACT may be NULL), judged from the
 * pattern's text: each choice of its alternations, optional parts ("x?")
 * and small character classes is spelled out, blanks ("\s*") read as one
 * space or none, and text the pattern does not fix (".", "\d+", "x*")
 * separates the pieces.  Returns 1 when every choice holds one, 0 when one
 * does not (*WITNESS: that choice, heap, '~' for unfixed text), -1 when
 * the pattern is beyond this check (too many choices, extended mode,
 * verbs). */
int ga_literals_cover(const char *pattern, const char *const *lits,
                      const bool *exact, size_t n, char **witness);

#endif
