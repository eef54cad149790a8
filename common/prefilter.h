/* Multi-literal prefilter: finds, case-insensitively (ASCII), where any of a
 * set of literal strings occurs in a buffer.
 *
 * The classifier runs it over whole regions of a log so that PCRE2 only
 * ever sees the few lines that can match a rule.  Every literal has an
 * "anchor", the three bytes of it rarest in the text; the scan tests each
 * position against a bitmap of anchor hashes and verifies the literals
 * only where an anchor may start.  Which trigrams are rare depends on the
 * log ("val" is everywhere in one, absent in another), so a classifier
 * re-chooses the anchors from the first part of its input
 * (ga_prefilter_tune).
 */
#ifndef GPUALERT_COMMON_PREFILTER_H
#define GPUALERT_COMMON_PREFILTER_H

#include <stddef.h>

/* The shortest literal the prefilter accepts.  Shorter literals would make
 * every window a candidate. */
#define GA_PREFILTER_MIN_LITERAL 4

struct ga_prefilter;

/* Build a prefilter over N literals (LITS[i] of LENS[i] bytes, each at
 * least GA_PREFILTER_MIN_LITERAL long).  The strings are copied.  Returns
 * NULL with errno = EINVAL (a literal too short, or N == 0) or ENOMEM. */
struct ga_prefilter *ga_prefilter_create(const char *const *lits,
                                         const size_t *lens, size_t n);
void ga_prefilter_destroy(struct ga_prefilter *pf);

/* Called for each occurrence of literal LIT starting at offset POS.
 * Return the offset where the search resumes: POS + 1 to see every
 * occurrence (other literals at the same POS included), a larger value to
 * skip ahead (no further literal at POS is reported then), or a value
 * >= the buffer length to stop. */
typedef size_t (*ga_prefilter_hit_fn)(void *ctx, size_t pos, size_t lit);

/* A copy of PF whose anchors are the trigrams of each literal that are
 * rarest in SAMPLE (LEN bytes of the text to come).  Finds exactly what
 * PF finds, faster when the sample is representative.  NULL on ENOMEM. */
struct ga_prefilter *ga_prefilter_tune(const struct ga_prefilter *pf,
                                       const char *sample, size_t len);

/* Search DATA[0..LEN) and call ON_HIT for occurrences in order of their
 * start offset.  Literals never match across LEN. */
void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
                       size_t len, ga_prefilter_hit_fn on_hit, void *ctx);

/* ASCII lower-casing, the folding the prefilter uses. */
static inline unsigned char ga_fold(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

#endif
