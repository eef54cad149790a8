/* SPDX-License-Identifier: MIT */
/* Multi-literal prefilter: finds, case-insensitively (ASCII) unless a
 * literal asks for its case, where any of a set of literal strings occurs
 * in a buffer.
 *
 * The classifier runs it over whole regions of a log so that PCRE2 only
 * ever sees the few lines that can match a rule.  Every literal has a
 * three-byte "fingerprint" and one of 16 buckets; each text position is
 * tested against all buckets at once (AVX2 shuffles, 64 positions per
 * branch, or byte tables without AVX2), and a position some bucket
 * accepts is looked up in a bit table of the words that can start
 * there, then in a perfect hash of the fingerprints, which leads to the
 * literals that have its fingerprint.  Which fingerprints are rare
 * depends on the log ("INFO" is on every line of one, absent from
 * another), so a classifier re-chooses them from the first part of its
 * input (ga_prefilter_tune).
 */
#ifndef GPUALERT_COMMON_PREFILTER_H
#define GPUALERT_COMMON_PREFILTER_H

#include <stddef.h>

/* The shortest literal the prefilter accepts.  Shorter literals would make
 * every window a candidate. */
#define GA_PREFILTER_MIN_LITERAL 4

/* Flags of a literal: an occurrence counts only where the byte before it
 * (WORD_START) or after it (WORD_END) is not a word character
 * ([A-Za-z0-9_]), or where the buffer starts or ends there: PCRE2's \b
 * next to a literal's first or last byte when that byte is a word
 * character. */
#define GA_PREFILTER_WORD_START 1u
#define GA_PREFILTER_WORD_END 2u
/* An occurrence counts only with the same case as the literal (a literal
 * of a pattern compiled without PCRE2_CASELESS and without "(?i)"):
 * "Error" is then not found in the "error" of every warning. */
#define GA_PREFILTER_CASE 4u

struct ga_prefilter;

/* Build a prefilter over N literals (LITS[i] of LENS[i] bytes, each at
 * least GA_PREFILTER_MIN_LITERAL long) with FLAGS[i] (FLAGS may be NULL:
 * no flags).  The strings are copied.  Returns NULL with errno = EINVAL
 * (a literal too short, an unknown flag, or N == 0) or ENOMEM. */
struct ga_prefilter *ga_prefilter_create_flags(const char *const *lits,
                                               const size_t *lens,
                                               const unsigned *flags, size_t n);

/* ga_prefilter_create_flags without flags. */
struct ga_prefilter *ga_prefilter_create(const char *const *lits,
                                         const size_t *lens, size_t n);
void ga_prefilter_destroy(struct ga_prefilter *pf);

/* Called for each occurrence of literal LIT starting at offset POS.
 * Return the offset where the search resumes: POS + 1 to see every
 * occurrence (other literals at the same POS included), a larger value to
 * skip ahead (no further literal at POS is reported then), or a value
 * >= the buffer length to stop. */
typedef size_t (*ga_prefilter_hit_fn)(void *ctx, size_t pos, size_t lit);

/* A copy of PF whose fingerprints and buckets are chosen for SAMPLE (LEN
 * bytes of the text to come).  Finds exactly what PF finds, faster when
 * the sample is representative.  Costs about 10 ms for 330 literals.
 * NULL on ENOMEM. */
struct ga_prefilter *ga_prefilter_tune(const struct ga_prefilter *pf,
                                       const char *sample, size_t len);

/* Search DATA[0..LEN) and call ON_HIT for occurrences in order of their
 * start offset.  Literals never match across LEN. */
void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
                       size_t len, ga_prefilter_hit_fn on_hit, void *ctx);

/* What the placement of the literals costs on DATA[0..LEN): the
 * positions some bucket accepts (every byte of the fingerprint there has
 * both its nibbles in the bucket's masks), and how many of those the bit
 * table of words keeps (the vector scan's second test; the portable scan
 * has none).  What the bit table keeps goes on to the table of
 * fingerprints.  For tests and measurements (tests/bench/prefilter-cost). */
struct ga_prefilter_cost {
	size_t buckets;
	size_t words;
};
struct ga_prefilter_cost ga_prefilter_cost(const struct ga_prefilter *pf,
                                           const char *data, size_t len);

/* ON: prefilters created or tuned from now on use only the portable
 * scan, not the CPU's vector instructions (for tests comparing the two).
 * Not thread-safe. */
void ga_prefilter_force_portable(int on);

/* ASCII lower-casing, the folding the prefilter uses. */
static inline unsigned char ga_fold(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

#endif
