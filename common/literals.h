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

#endif
