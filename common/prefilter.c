/* SPDX-License-Identifier: MIT */
#include "prefilter.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* Every literal has a "fingerprint", FP consecutive bytes of it, and is
 * put in one of BANKS * 8 buckets.  For each text position, the FP bytes
 * there select bucket masks from tables indexed by their low and high
 * nibbles (AVX2 PSHUFB: 32 positions in a few instructions per byte of
 * fingerprint, the "Teddy" method of Hyperscan and Rust's aho-corasick);
 * only a position whose masks share a bucket goes on, to a bit table of
 * the 4-byte words (fingerprint and next byte) that some literal can
 * hold there, then to a perfect hash of the fingerprints, and from there
 * to the literals with the fingerprint it holds.  On the logs of
 * tests/bench (24 MB, four draws of each mix, tuned to their first
 * 64 KiB) the buckets accept 1.4 to 2.0 % (plain) and 4.8 to 5.5 %
 * (noisy) of the positions, the bit table 22 to 30 % of those; the
 * ruleset's own tables accept 6.3 and 8.4 to 8.5 %, and their bit table
 * keeps 32 and 37 % of those (tests/bench/bench-prefilter.sh counts
 * them).  Which literal goes where is decided greedily, so one literal
 * more or less can move the others: dropping a literal that
 * another of its rule already covers once cost the own tables 7 % more
 * accepted positions.  Check the counts after any change of literals.
 * Without AVX2 the same test uses a byte table per fingerprint byte, and
 * no bit table.
 *
 * The nibble tables accept every combination of the nibbles a bucket
 * holds, not only its fingerprints, so the choice of fingerprint and
 * bucket decides the cost: each literal takes the window and bucket that
 * add the fewest accepted positions, the costliest literals first, so
 * that the outcome does not depend on where a rule stands in the rule
 * files (placement_order()).  That is counted on a sample of the
 * log when there is one (ga_prefilter_tune: "INFO" is on every line of
 * one log, absent from another), else estimated from typical byte
 * frequencies.  A fingerprint that log noise triggers costs a comparison
 * per line; one that neither the noise nor the ordinary lines trigger
 * costs nothing but the vector instructions.
 *
 * The tables hold bytes as they are: a letter of a literal that ignores
 * case puts both its cases in, one that keeps its case only itself.  The
 * capitals of "CUDA" or "NCCL WARN" then stay clear of the small letters
 * of log noise ("UserWarning", "warnings.warn(").
 *
 * (Before this: Wu-Manber, then trigram anchors probed at every second
 * position through a hash bitmap.  Short literals such as " nan" cap any
 * skip, and a scalar probe per position or two costs more than the
 * vector test of 32.) */

#define FP 3 /* fingerprint bytes: GA_PREFILTER_MIN_LITERAL at most */
_Static_assert(FP == 3, "bucket_cost() estimates three-byte fingerprints");
#define BANKS 2
#define BUCKETS 8     /* per bank: a byte of mask */
#define COUNT_BITS 16 /* gram counts when tuning */
#define WINDOWS 4     /* fingerprints tried per literal */
#define CHUNK 8192    /* text searched between two flushes */
#define FOLD4 0x20202020u
#define FOLD3 (FOLD4 >> (8 * (4 - FP)))

struct literal {
	unsigned char *text; /* folded */
	unsigned char *raw;  /* as given: GA_PREFILTER_CASE compares it */
	size_t len;
	size_t anchor; /* offset of the fingerprint */
	unsigned flags;
	uint32_t twin; /* the first literal identical to this one */
	/* Its first bytes (up to 8) as a word that 8 bytes of text, OR
	 * fold, AND mask, equal where it starts there: most candidates
	 * differ early, and one comparison costs less than a loop that
	 * stops at a different byte each time. */
	uint64_t head, fold, mask;
};

/* Set L's head, fold and mask from its text. */
static void set_head(struct literal *l)
{
	l->head = l->fold = l->mask = 0;
	for (size_t k = 0; k < l->len && k < 8; k++) {
		unsigned char c = (l->flags & GA_PREFILTER_CASE) ? l->raw[k]
		                                                 : l->text[k];
		uint64_t f = !(l->flags & GA_PREFILTER_CASE) && c >= 'a' &&
		                             c <= 'z'
		                     ? 0x20
		                     : 0;

		l->head |= (uint64_t)c << (8 * k);
		l->fold |= f << (8 * k);
		l->mask |= (uint64_t)0xff << (8 * k);
	}
}

/* The literals that share a fingerprint. */
struct group {
	uint32_t fp;
	/* What the 4 bytes at a position, read as a word, must hold for a
	 * literal of the group to start there: (word | fold) & mask == key,
	 * and, with after set, the fourth byte is no word character: what
	 * all of the group's literals agree on (probe_of(), merge_probe()).
	 */
	uint32_t key, fold, mask, after;
	uint32_t first, end; /* in ids */
};

struct bank {
	uint8_t nib[FP][2][16]; /* [byte][low, high nibble][nibble] */
	uint8_t table[FP][256]; /* [byte][byte] */
};

struct ga_prefilter {
	struct literal *lits;
	size_t n_lits;
	int simd;
	struct bank banks[BANKS];
	uint32_t *ids; /* literals by fingerprint, twins next to each other */
	struct group *groups; /* [0]: none, a fingerprint no text has */
	size_t n_groups;
	size_t back; /* largest fingerprint offset */
	/* A perfect hash of the fingerprints: slot[hash] is the group of the
	 * fingerprint with that hash, if any, else 0.  Most positions the
	 * buckets accept hold only a combination of their nibbles: one look
	 * here rejects them, and a fingerprint that is there leads straight
	 * to its literals (a bucket holds some twenty, and log noise holds
	 * some fingerprints on every line). */
	uint32_t *slot;
	unsigned slot_bits;
	uint32_t mult;
	/* A bit for each 4-byte word that some group accepts (first 3 bytes
	 * folded, the fourth as it is), by hash: one load and no branch
	 * reject most positions the buckets accept before the table of
	 * fingerprints is read, and the fourth byte rejects "INFO" for
	 * " inf\b" there too. */
	uint64_t *bits;
	unsigned bits_shift;
	uint8_t word[256]; /* is_word() of each byte */
	/* no window has a byte >= 0x80: the low-nibble lookup needs no mask
	 * (PSHUFB gives 0 for an index with the top bit set, and such a
	 * byte matches no window) */
	bool ascii;
};

static int portable_only;

void ga_prefilter_force_portable(int on)
{
	portable_only = on;
}

/* The vector path also uses BMI1/BMI2 (BLSR, TZCNT, SHRX: fewer
 * instructions per listed position).  Every CPU with AVX2 so far has
 * them, but a hypervisor may hide some: all three are asked for. */
static int cpu_has_avx2(void)
{
#ifdef HAVE_AVX2_PATH
	unsigned f = ga_cpu_features();

	return !portable_only && (f & GA_CPU_AVX2) && (f & GA_CPU_BMI);
#else
	return 0;
#endif
}

/* The fingerprint at P, folded.  Built in a register: a memcpy() of
 * three bytes into a zeroed word went through the stack, and reading the
 * word back waited for the stores to drain (store forwarding fails on
 * a load that spans several stores), for every accepted position. */
static inline uint32_t loadfp(const unsigned char *p)
{
	uint32_t x = 0;

	for (int k = 0; k < FP; k++)
		x |= (uint32_t)p[k] << (8 * k);
	return x | FOLD3;
}

/* The fingerprint-sized gram at P as it is, for literals that keep their
 * case. */
static inline uint32_t loadraw(const unsigned char *p)
{
	uint32_t x = 0;

	for (int k = 0; k < FP; k++)
		x |= (uint32_t)p[k] << (8 * k);
	return x;
}

/* PCRE2's \w in byte mode without UCP. */
static inline int is_word(unsigned char c)
{
	unsigned char f = (unsigned char)(c | 0x20);

	return (f >= 'a' && f <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static inline uint32_t hash(uint32_t gram, unsigned bits)
{
	return (gram * 0x9e3779b1u) >> (32 - bits);
}

/* Rough byte frequencies in training logs (per mille; capitals an
 * eighth of their small letter), for estimating before any text has
 * been seen. */
static unsigned byte_weight(unsigned char c)
{
	static const char common[] = "etaoinsrl";
	static const char middle[] = "hdcump";
	static const char fewer[] = "fgwybv";

	if (c >= 'A' && c <= 'Z')
		return (byte_weight(ga_fold(c)) + 7) / 8;
	if (c == ' ')
		return 150;
	if (c >= '0' && c <= '9')
		return 35;
	if (c && strchr(common, c))
		return 70;
	if (c && strchr(middle, c))
		return 35;
	if (c && strchr(fewer, c))
		return 18;
	if (c == 'k')
		return 9;
	if (c == 'x' || c == 'j' || c == 'q' || c == 'z')
		return 2;
	if (c == '.' || c == ':' || c == '=' || c == ',' || c == '/' ||
	    c == '-' || c == '_' || c == '|' || c == '\t')
		return 20;
	if (c == '[' || c == ']' || c == '(' || c == ')' || c == '\'' ||
	    c == '"')
		return 8;
	return 3;
}

void ga_prefilter_destroy(struct ga_prefilter *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; pf->lits && i < pf->n_lits; i++) {
		free(pf->lits[i].text);
		free(pf->lits[i].raw);
	}
	free(pf->lits);
	free(pf->ids);
	free(pf->groups);
	free(pf->slot);
	free(pf->bits);
	free(pf);
}

/* What a sample says: counts of its fingerprint-sized grams by hash,
 * folded and as they are, of its byte pairs, and of its bytes.  The
 * pairs are of the bytes seen, numbered 0..n_seen - 1 (index): some 90
 * in a log, so that the tables are an eighth of 256 x 256 and stay in
 * cache; n_seen stands for a byte never seen, its row and column 0. */
struct counts {
	uint32_t *grams; /* folded; NULL: no sample, estimate from freq */
	uint32_t *raw;   /* as they are */
	float *pairs;    /* [first][second], by index, (n_seen + 1)^2; NULL:
	                  * bytes independent, no sample */
	float *into;     /* the same, [second][first]: rows for bucket_cost */
	double freq[256];
	double len;
	uint16_t seen[16]; /* [high nibble]: low nibbles of bytes counted */
	uint16_t index[256];
	size_t n_seen;
	double inv[257];  /* by index: 1 / (freq * len), 0 for n_seen */
	double prob[257]; /* by index: freq */
};

/* The bytes whose low nibble is in LO and high nibble in HI, that are
 * not already accepted by OLO/OHI and that the counts have seen, into
 * OUT by index; returns how many. */
static size_t added(const struct counts *cnt, unsigned lo, unsigned hi,
                    unsigned olo, unsigned ohi, uint16_t *out)
{
	size_t n = 0;

	for (unsigned h = hi; h; h &= h - 1) {
		unsigned nh = (unsigned)__builtin_ctz(h);
		unsigned l = lo & cnt->seen[nh];

		if (ohi >> nh & 1)
			l &= ~olo;
		for (; l; l &= l - 1)
			out[n++] = cnt->index[nh << 4 |
			                      (unsigned)__builtin_ctz(l)];
	}
	return n;
}

/* Buckets being filled: their nibble masks, what they let through, and
 * for each middle byte x1 the sums over the bucket's first and last
 * bytes that bucket_cost() needs (so that trying a window costs only
 * the bytes it adds). */
struct filling {
	uint16_t lo[BANKS * BUCKETS][FP], hi[BANKS * BUCKETS][FP];
	double cost[BANKS * BUCKETS];
	double left[BANKS * BUCKETS][257], right[BANKS * BUCKETS][257];
	double prob[BANKS * BUCKETS][FP]; /* without pairs: sum of freq */
	uint32_t *where;                  /* literal -> bucket, or NONE */
	/* literal -> the windows worth trying (candidates()), chosen once:
	 * placing a literal, ordering and placing it again try the same */
	uint32_t (*cand)[WINDOWS];
	uint8_t *n_cand;
};

/* How many positions of the text bucket B would accept with nibble masks
 * LO/HI, a superset of its own.  The masks accept every combination of
 * the nibbles they hold, not only the fingerprints put in, and text is
 * far from random ("epo" and "och" follow each other), so: a Markov
 * estimate from the sample's byte pairs, sum over x1 of
 * n(x0 x1) * n(x1 x2) / n(x1); without a sample, bytes taken as
 * independent with typical frequencies.  The sums over x0 and x2 of the
 * bucket as it is are kept in F: only the bytes the masks add are
 * summed here. */
static double bucket_cost(const struct counts *cnt, const struct filling *f,
                          size_t b, const uint16_t lo[FP],
                          const uint16_t hi[FP])
{
	/* padded to a multiple of 4 with the index of no byte, and whole
	 * rounds of 4 spare the branch predictor an exit at every length */
	uint16_t a[FP][256 + 4];
	size_t n[FP];
	double total = 0;

	if (!cnt->pairs) {
		/* independent bytes: the product of their frequencies */
		total = 1;
		for (int j = 0; j < FP; j++) {
			double sum = f->prob[b][j];

			n[j] = added(cnt, lo[j], hi[j], f->lo[b][j],
			             f->hi[b][j], a[j]);
			for (size_t i = 0; i < n[j]; i++)
				sum += cnt->prob[a[j][i]];
			total *= sum;
		}
		return total;
	}
	for (int j = 0; j < FP; j++) {
		/* the first and last bytes: only what the bucket lacks */
		unsigned olo = j == 1 ? 0 : f->lo[b][j],
		         ohi = j == 1 ? 0 : f->hi[b][j];

		n[j] = added(cnt, lo[j], hi[j], olo, ohi, a[j]);
		if (!n[j] && j == 1)
			return 0;
		for (int k = 0; k < 4; k++)
			a[j][n[j] + (size_t)k] = (uint16_t)cnt->n_seen;
		n[j] = (n[j] + 3) & ~(size_t)3;
	}
	for (size_t m = 0; m < n[1]; m++) {
		unsigned x1 = a[1][m];
		double left = f->left[b][x1], right = f->right[b][x1];
		const float *to = cnt->into + x1 * (cnt->n_seen + 1),
		            *from = cnt->pairs + x1 * (cnt->n_seen + 1);

		for (size_t i = 0; i < n[0]; i += 4)
#pragma GCC unroll 4
			for (size_t k = 0; k < 4; k++)
				left += to[a[0][i + k]];
		for (size_t i = 0; i < n[2]; i += 4)
#pragma GCC unroll 4
			for (size_t k = 0; k < 4; k++)
				right += from[a[2][i + k]];
		total += left * right * cnt->inv[x1];
	}
	return total;
}

/* No more than bucket_cost(CNT, F, B, LO, HI) - F->cost[B]: what the
 * middle bytes that LO/HI add let through with the bucket's first and
 * last bytes as they are (the bytes added there only add more).  A
 * tenth of the work, and most buckets cost more than the best so far
 * by this alone. */
static double at_least(const struct counts *cnt, const struct filling *f,
                       size_t b, const uint16_t lo[FP], const uint16_t hi[FP])
{
	uint16_t a[256];
	size_t n;
	double sum = 0;

	if (!cnt->pairs)
		return 0;
	n = added(cnt, lo[1], hi[1], f->lo[b][1], f->hi[b][1], a);
	for (size_t i = 0; i < n; i++)
		sum += f->left[b][a[i]] * f->right[b][a[i]] * cnt->inv[a[i]];
	return sum;
}

/* Give bucket B the masks LO/HI: its sums change by the first and last
 * bytes that come and go, and its cost is computed again. */
static void bucket_set(const struct counts *cnt, struct filling *f, size_t b,
                       const uint16_t lo[FP], const uint16_t hi[FP])
{
	uint16_t in0[256], in2[256], out0[256], out2[256];
	size_t n_in0 = added(cnt, lo[0], hi[0], f->lo[b][0], f->hi[b][0], in0),
	       n_in2 = added(cnt, lo[2], hi[2], f->lo[b][2], f->hi[b][2], in2),
	       n_out0 = added(cnt, f->lo[b][0], f->hi[b][0], lo[0], hi[0],
	                      out0),
	       n_out2 = added(cnt, f->lo[b][2], f->hi[b][2], lo[2], hi[2],
	                      out2);

	for (size_t x1 = 0; cnt->pairs && x1 < cnt->n_seen; x1++) {
		const float *to = cnt->into + x1 * (cnt->n_seen + 1),
		            *from = cnt->pairs + x1 * (cnt->n_seen + 1);
		double left = f->left[b][x1], right = f->right[b][x1];

		for (size_t i = 0; i < n_in0; i++)
			left += to[in0[i]];
		for (size_t i = 0; i < n_out0; i++)
			left -= to[out0[i]];
		for (size_t i = 0; i < n_in2; i++)
			right += from[in2[i]];
		for (size_t i = 0; i < n_out2; i++)
			right -= from[out2[i]];
		f->left[b][x1] = left;
		f->right[b][x1] = right;
	}
	memcpy(f->lo[b], lo, sizeof(f->lo[b]));
	memcpy(f->hi[b], hi, sizeof(f->hi[b]));
	if (!cnt->pairs) {
		f->cost[b] = 1;
		for (int j = 0; j < FP; j++) {
			n_in0 = added(cnt, lo[j], hi[j], 0, 0, in0);
			f->prob[b][j] = 0;
			for (size_t i = 0; i < n_in0; i++)
				f->prob[b][j] += cnt->prob[in0[i]];
			f->cost[b] *= f->prob[b][j];
		}
		return;
	}
	n_in0 = added(cnt, lo[1], hi[1], 0, 0, in0);
	f->cost[b] = 0;
	for (size_t i = 0; i < n_in0; i++)
		f->cost[b] += f->left[b][in0[i]] * f->right[b][in0[i]] *
		              cnt->inv[in0[i]];
}

/* The bytes that byte K of literal L matches, into OUT; returns how
 * many: a letter of a literal without GA_PREFILTER_CASE matches both its
 * cases, anything else only itself. */
static size_t spellings(const struct literal *l, size_t k, unsigned char *out)
{
	unsigned char c = l->raw[k];

	if (l->flags & GA_PREFILTER_CASE)
		out[0] = c;
	else
		out[0] = l->text[k];
	if ((l->flags & GA_PREFILTER_CASE) || out[0] < 'a' || out[0] > 'z')
		return 1;
	out[1] = (unsigned char)(out[0] - 32);
	return 2;
}

/* How often the window at K of literal L occurs in the sample. */
static double own_count(const struct counts *cnt, const struct literal *l,
                        size_t k)
{
	if (!cnt->grams)
		return 0;
	if (l->flags & GA_PREFILTER_CASE)
		return cnt->raw[hash(loadraw(l->raw + k), COUNT_BITS)];
	return cnt->grams[hash(loadfp(l->text + k), COUNT_BITS)];
}

/* How often the window at K of literal L occurs by itself: the sample's
 * count, then (a fraction below one, for ties) the byte frequencies. */
static double window_weight(const struct counts *cnt, const struct literal *l,
                            size_t k)
{
	double w = 1;

	for (int j = 0; j < FP; j++) {
		unsigned char b[2];
		size_t n = spellings(l, k + (size_t)j, b);
		double f = 0;

		for (size_t m = 0; m < n; m++)
			f += cnt->freq[b[m]];
		w *= f;
	}
	return own_count(cnt, l, k) + (w < 1 ? w : 0.999);
}

#define NONE UINT32_MAX

/* Add the window at K of literal L to nibble masks LO/HI. */
static void add_masks(uint16_t *lo, uint16_t *hi, const struct literal *l,
                      size_t k)
{
	for (int j = 0; j < FP; j++) {
		unsigned char b[2];
		size_t n = spellings(l, k + (size_t)j, b);

		for (size_t m = 0; m < n; m++) {
			lo[j] = (uint16_t)(lo[j] | 1u << (b[m] & 15));
			hi[j] = (uint16_t)(hi[j] | 1u << (b[m] >> 4));
		}
	}
}

/* The windows of literal L worth trying, into CAND, those that occur
 * least by themselves first (then those with the rarest bytes); returns
 * how many (WINDOWS at most: trying every window of a long literal in
 * every bucket costs more than it finds). */
static size_t candidates(const struct counts *cnt, const struct literal *l,
                         uint32_t cand[WINDOWS])
{
	size_t n_cand = 0;

	for (size_t k = 0; k + FP <= l->len; k++) {
		double w = window_weight(cnt, l, k);
		size_t at = n_cand < WINDOWS ? n_cand++ : WINDOWS;

		while (at > 0 && window_weight(cnt, l, cand[at - 1]) > w) {
			if (at < WINDOWS)
				cand[at] = cand[at - 1];
			at--;
		}
		if (at < WINDOWS)
			cand[at] = (uint32_t)k;
	}
	return n_cand;
}

/* What literal I costs at the least in a bucket of its own (its window's
 * own occurrences and what the bucket lets through), which orders the
 * placement.  F holds no literal yet. */
static double alone(const struct ga_prefilter *pf, const struct counts *cnt,
                    const struct filling *f, size_t i)
{
	const struct literal *l = &pf->lits[i];
	const uint32_t *cand = f->cand[i];
	double c_best = HUGE_VAL;

	for (size_t ci = 0; ci < f->n_cand[i]; ci++) {
		uint16_t wl[FP] = {0}, wh[FP] = {0};
		double c;

		add_masks(wl, wh, l, cand[ci]);
		c = own_count(cnt, l, cand[ci]) +
		    bucket_cost(cnt, f, 0, wl, wh);
		if (c < c_best)
			c_best = c;
	}
	return c_best;
}

/* Put literal I where it adds the least: the fingerprint's own
 * occurrences plus what the bucket then lets through in addition. */
static void place(struct ga_prefilter *pf, const struct counts *cnt,
                  struct filling *f, size_t i)
{
	struct literal *l = &pf->lits[i];
	const uint32_t *cand = f->cand[i];
	size_t b_best = 0;
	double c_best = HUGE_VAL;

	for (size_t ci = 0; ci < f->n_cand[i]; ci++) {
		size_t k = cand[ci];
		double own = own_count(cnt, l, k);
		uint16_t wl[FP] = {0}, wh[FP] = {0};

		/* A bucket adds nothing or more; candidates come by own
		 * count: none from here on can do better. */
		if (own >= c_best)
			break;
		add_masks(wl, wh, l, k);
		for (size_t b = 0; b < BANKS * BUCKETS; b++) {
			uint16_t tl[FP], th[FP];
			double p, c;

			for (int j = 0; j < FP; j++) {
				tl[j] = f->lo[b][j] | wl[j];
				th[j] = f->hi[b][j] | wh[j];
			}
			/* a window whose nibbles the bucket has adds nothing */
			if (!memcmp(tl, f->lo[b], sizeof(tl)) &&
			    !memcmp(th, f->hi[b], sizeof(th)))
				p = f->cost[b];
			else if (at_least(cnt, f, b, tl, th) + own >
			         c_best * (1 + 1e-9))
				continue;
			else
				p = bucket_cost(cnt, f, b, tl, th);
			c = p - f->cost[b] + own;
			if (c < c_best) {
				c_best = c;
				b_best = b;
				l->anchor = k;
			}
		}
	}
	{
		uint16_t tl[FP], th[FP];

		memcpy(tl, f->lo[b_best], sizeof(tl));
		memcpy(th, f->hi[b_best], sizeof(th));
		add_masks(tl, th, l, l->anchor);
		bucket_set(cnt, f, b_best, tl, th);
	}
	f->where[i] = (uint32_t)b_best;
}

/* Take literal I out of its bucket again. */
static void unplace(struct ga_prefilter *pf, const struct counts *cnt,
                    struct filling *f, size_t i)
{
	uint32_t b = f->where[i];
	uint16_t lo[FP] = {0}, hi[FP] = {0};

	f->where[i] = NONE;
	for (size_t o = 0; o < pf->n_lits; o++)
		if (f->where[o] == b)
			add_masks(lo, hi, &pf->lits[o], pf->lits[o].anchor);
	bucket_set(cnt, f, b, lo, hi);
}

/* A literal to place, and what it costs alone. */
struct to_place {
	double cost;
	const struct literal *l;
	uint32_t id;
};

/* The costliest first; the same literals in the same order whatever
 * their order in the rule files. */
static int cmp_to_place(const void *a, const void *b)
{
	const struct to_place *x = a, *y = b;
	size_t n = x->l->len < y->l->len ? x->l->len : y->l->len;
	int c;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	c = memcmp(x->l->raw, y->l->raw, n);
	if (c)
		return c;
	if (x->l->len != y->l->len)
		return x->l->len < y->l->len ? -1 : 1;
	if (x->l->flags != y->l->flags)
		return x->l->flags < y->l->flags ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

/* The literals to place (twins stand for theirs), into a new array of
 * *N ids: those that cost the most in a bucket of their own come first,
 * and the cheap ones fill in around them.  In the rule files' order, the
 * outcome was a lottery of that order: one literal more anywhere moved
 * dozens of others, and a sample could accept a third more or less
 * positions depending on where a rule happened to stand.  F holds no
 * literal yet. */
static uint32_t *placement_order(const struct ga_prefilter *pf,
                                 const struct counts *cnt,
                                 const struct filling *f, size_t *n)
{
	struct to_place *tp = malloc((pf->n_lits + 1) * sizeof(*tp));
	uint32_t *order = malloc((pf->n_lits + 1) * sizeof(*order));
	size_t m = 0;

	if (!tp || !order) {
		free(tp);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < pf->n_lits; i++) {
		if (pf->lits[i].twin != i)
			continue;
		tp[m].cost = alone(pf, cnt, f, i);
		tp[m].l = &pf->lits[i];
		tp[m].id = (uint32_t)i;
		m++;
	}
	qsort(tp, m, sizeof(*tp), cmp_to_place);
	for (size_t k = 0; k < m; k++)
		order[k] = tp[k].id;
	free(tp);
	*n = m;
	return order;
}

/* Literals in the order of their fingerprints, twins next to each
 * other. */
struct entry {
	uint32_t fp, twin, id;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->fp != y->fp)
		return x->fp < y->fp ? -1 : 1;
	if (x->twin != y->twin)
		return x->twin < y->twin ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static inline uint32_t slot_of(const struct ga_prefilter *pf, uint32_t fp)
{
	return (fp * pf->mult) >> (32 - pf->slot_bits);
}

/* Find a multiplier that gives every group a slot of its own, in a table
 * at most an eighth full (larger when none does).  Returns -1 on
 * ENOMEM. */
static int build_slots(struct ga_prefilter *pf)
{
	uint32_t seed = 0x9e3779b1u;
	size_t size = 2048;

	while (size < 8 * pf->n_groups)
		size *= 2;
	for (int tries = 0;; tries++) {
		bool clash = false;

		if (tries == 32) {
			tries = 0;
			size *= 2;
		}
		free(pf->slot);
		pf->slot = calloc(size, sizeof(*pf->slot));
		if (!pf->slot)
			return -1;
		pf->slot_bits = (unsigned)__builtin_ctzl(size);
		pf->mult = seed | 1;
		seed = seed * 1664525u + 1013904223u;
		for (size_t g = 1; g <= pf->n_groups && !clash; g++) {
			uint32_t *sl = &pf->slot[slot_of(pf, pf->groups[g].fp)];

			clash = *sl != 0;
			*sl = (uint32_t)g;
		}
		if (!clash)
			return 0;
	}
}

#define BITS_MULT 0x9e3779b1u

/* The bit of the 4-byte word RAW in a bit table of 2^(32 - SHIFT) bits. */
static inline uint32_t bits_of(uint32_t raw, unsigned shift)
{
	return ((raw | FOLD3) * BITS_MULT) >> shift;
}

/* Whether the bit table BITS holds RAW: the vector scan's second test,
 * and what ga_prefilter_cost counts of it. */
static inline unsigned bits_hold(const uint64_t *bits, unsigned shift,
                                 uint32_t raw)
{
	uint32_t h = bits_of(raw, shift);

	return (bits[h >> 6] >> (h & 63)) & 1;
}

/* The fourth bytes that group G accepts, into OUT; returns how many. */
static size_t fourth_bytes(const struct ga_prefilter *pf, const struct group *g,
                           unsigned char *out)
{
	uint32_t key = g->key >> 24, fold = g->fold >> 24, mask = g->mask >> 24;
	size_t n = 0;

	for (unsigned c = 0; c < 256; c++)
		if (((c | fold) & mask) == key && !(g->after && pf->word[c]))
			out[n++] = (unsigned char)c;
	return n;
}

/* Fill the bit table: every word a group accepts, at least 16 bits per
 * word (at most a sixteenth of the bits set), 16 KiB at most.  Returns
 * -1 on ENOMEM. */
static int build_bits(struct ga_prefilter *pf)
{
	unsigned char c4[256];
	size_t words = 0, size = 1u << 12;

	for (size_t g = 1; g <= pf->n_groups; g++)
		words += fourth_bytes(pf, &pf->groups[g], c4);
	while (size < 16 * words && size < (1u << 17))
		size *= 2;
	free(pf->bits);
	pf->bits = calloc(size / 64, sizeof(*pf->bits));
	if (!pf->bits)
		return -1;
	pf->bits_shift = 32 - (unsigned)__builtin_ctzl(size);
	for (size_t g = 1; g <= pf->n_groups; g++) {
		size_t n = fourth_bytes(pf, &pf->groups[g], c4);

		for (size_t i = 0; i < n; i++) {
			uint32_t h = bits_of((pf->groups[g].fp & 0xffffffu) |
			                             (uint32_t)c4[i] << 24,
			                     pf->bits_shift);

			pf->bits[h >> 6] |= UINT64_C(1) << (h & 63);
		}
	}
	return 0;
}

/* What a position must hold for literal L to start L->anchor bytes
 * before it, as struct group has it: the fingerprint, as it is when L
 * keeps its case, and the byte after it, or, where the fingerprint ends
 * L and L ends a word, no word character there.  "inf" is in the
 * "INFO" of every NCCL line; " inf\b" is not. */
static void probe_of(const struct literal *l, struct group *g)
{
	bool cased = l->flags & GA_PREFILTER_CASE;
	size_t a = l->anchor;

	g->fold = cased ? 0 : FOLD3;
	g->key = cased ? loadraw(l->raw + a) : loadfp(l->text + a);
	g->mask = 0xffffffu >> (8 * (3 - FP));
	g->after = 0;
	if (FP == 3 && a + FP < l->len) {
		uint32_t f = cased ? 0 : 0x20;
		unsigned char c = cased ? l->raw[a + FP] : l->text[a + FP];

		g->fold |= f << 24;
		g->key |= (uint32_t)(c | f) << 24;
		g->mask = UINT32_MAX;
	} else if (FP == 3 && (l->flags & GA_PREFILTER_WORD_END)) {
		g->after = 1;
	}
}

/* Make group G accept what it accepted and what MINE accepts: each byte
 * where both check one stays checked, as it is if they agree, else
 * without its case bit if that makes them agree ("found inf" ignores
 * case, " completed in " does not: both want an "n" after "d i"). */
static void merge_probe(struct group *g, const struct group *mine)
{
	uint32_t key = 0, fold = 0, mask = 0;

	for (unsigned i = 0; i < 4; i++) {
		uint32_t m = 0xffu << (8 * i), f = (g->fold | mine->fold) & m;

		if (!(g->mask & mine->mask & m))
			continue;
		if (((g->key | f) & m) != ((mine->key | f) & m)) {
			f |= 0x20u << (8 * i);
			if (((g->key | f) & m) != ((mine->key | f) & m))
				continue;
		}
		fold |= f;
		mask |= m;
		key |= (g->key | f) & m;
	}
	g->key = key;
	g->fold = fold;
	g->mask = mask;
	g->after = g->after && mine->after;
}

/* Group the literals by fingerprint (groups 1..n_groups) and fill the
 * table that finds a group from a text position. */
static int build_groups(struct ga_prefilter *pf)
{
	struct entry *e = malloc(pf->n_lits * sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i < pf->n_lits; i++) {
		e[i].fp = loadfp(pf->lits[i].text + pf->lits[i].anchor);
		e[i].twin = pf->lits[i].twin;
		e[i].id = (uint32_t)i;
	}
	qsort(e, pf->n_lits, sizeof(*e), cmp_entry);
	/* loadfp() leaves the top byte 0: no text has this one, read
	 * with any mask */
	memset(&pf->groups[0], 0, sizeof(pf->groups[0]));
	pf->groups[0].fp = pf->groups[0].key = UINT32_MAX;
	pf->groups[0].mask = 0xffffffu >> (8 * (3 - FP));
	pf->n_groups = 0;
	for (size_t k = 0; k < pf->n_lits; k++) {
		const struct literal *l = &pf->lits[e[k].id];
		struct group *g = &pf->groups[pf->n_groups], mine;

		probe_of(l, &mine);
		if (k == 0 || e[k].fp != e[k - 1].fp) {
			g = &pf->groups[++pf->n_groups];
			*g = mine;
			g->fp = e[k].fp;
			g->first = (uint32_t)k;
		} else {
			merge_probe(g, &mine);
		}
		g->end = (uint32_t)k + 1;
		pf->ids[k] = e[k].id;
	}
	free(e);
	if (build_slots(pf) < 0)
		return -1;
	return build_bits(pf);
}

/* Choose every literal's fingerprint and bucket, and build the tables.
 *
 * A bucket accepts a position when each of its FP bytes has both nibbles
 * in the bucket's masks, and each costs a look at the bucket
 * (bucket_cost).  Every literal also costs a comparison wherever its
 * fingerprint occurs, and those are not independent at all ("INF" in a
 * log of INFO lines): they come from the sample's counts.  Each literal,
 * in turn, takes the window and bucket that add the least, the costliest
 * first (placement_order()).  With a sample, each is then taken out and
 * placed again, which undoes the worst choices of the first pass (made
 * before the later literals were known); the prefilter without one only
 * serves the sample.  Twins (the same literal for several rules) take
 * their first's place: they are compared once. */
static int build(struct ga_prefilter *pf, const struct counts *cnt)
{
	struct filling *f = calloc(1, sizeof(*f));
	uint32_t *order = NULL;
	size_t n_order = 0;
	int rc = -1;

	if (f) {
		f->where = malloc((pf->n_lits + 1) * sizeof(*f->where));
		f->cand = malloc((pf->n_lits + 1) * sizeof(*f->cand));
		f->n_cand = malloc(pf->n_lits + 1);
	}
	if (!f || !f->where || !f->cand || !f->n_cand)
		goto out;
	pf->simd = cpu_has_avx2();
	for (size_t i = 0; i < pf->n_lits; i++) {
		f->where[i] = NONE;
		if (pf->lits[i].twin == i)
			f->n_cand[i] = (uint8_t)candidates(cnt, &pf->lits[i],
			                                   f->cand[i]);
	}
	order = placement_order(pf, cnt, f, &n_order);
	if (!order)
		goto out;
	for (size_t k = 0; k < n_order; k++)
		place(pf, cnt, f, order[k]);
	for (int pass = 0; cnt->grams && pass < 1; pass++) {
		for (size_t k = 0; k < n_order; k++) {
			unplace(pf, cnt, f, order[k]);
			place(pf, cnt, f, order[k]);
		}
	}
	for (size_t i = 0; i < pf->n_lits; i++) {
		uint32_t t = pf->lits[i].twin;

		f->where[i] = f->where[t];
		pf->lits[i].anchor = pf->lits[t].anchor;
	}
	memset(pf->banks, 0, sizeof(pf->banks));
	pf->back = 0;
	pf->ascii = true;
	for (size_t i = 0; i < pf->n_lits; i++) {
		const struct literal *l = &pf->lits[i];
		struct bank *bk = &pf->banks[f->where[i] / BUCKETS];
		uint8_t bit = (uint8_t)(1u << (f->where[i] % BUCKETS));

		for (int j = 0; j < FP; j++) {
			unsigned char x[2];
			size_t n = spellings(l, l->anchor + (size_t)j, x);

			for (size_t m = 0; m < n; m++) {
				if (x[m] >= 0x80)
					pf->ascii = false;
				bk->nib[j][0][x[m] & 15] |= bit;
				bk->nib[j][1][x[m] >> 4] |= bit;
				bk->table[j][x[m]] |= bit;
			}
		}
		if (l->anchor > pf->back)
			pf->back = l->anchor;
	}
	rc = build_groups(pf);
out:
	if (f) {
		free(f->where);
		free(f->cand);
		free(f->n_cand);
	}
	free(f);
	free(order);
	return rc;
}

static int cmp_twin(const void *a, const void *b)
{
	const struct literal *x = *(const struct literal *const *)a;
	const struct literal *y = *(const struct literal *const *)b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	c = memcmp((x->flags & GA_PREFILTER_CASE) ? x->raw : x->text,
	           (y->flags & GA_PREFILTER_CASE) ? y->raw : y->text, x->len);
	if (c)
		return c;
	return x < y ? -1 : (x > y);
}

/* Find each literal's twin: the first literal that finds exactly what it
 * finds (sorted by address last, a run starts with the first). */
static int find_twins(struct ga_prefilter *pf)
{
	const struct literal **v = malloc(pf->n_lits * sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < pf->n_lits; i++)
		v[i] = &pf->lits[i];
	qsort(v, pf->n_lits, sizeof(*v), cmp_twin);
	for (size_t k = 0, first = 0; k < pf->n_lits; k++) {
		const struct literal *a = v[first], *b = v[k];

		if (a->len != b->len || a->flags != b->flags ||
		    memcmp((a->flags & GA_PREFILTER_CASE) ? a->raw : a->text,
		           (b->flags & GA_PREFILTER_CASE) ? b->raw : b->text,
		           a->len) != 0)
			first = k;
		pf->lits[v[k] - pf->lits].twin = (uint32_t)(v[first] -
		                                            pf->lits);
	}
	free(v);
	return 0;
}

static struct ga_prefilter *alloc(size_t n)
{
	struct ga_prefilter *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->lits = calloc(n, sizeof(*pf->lits));
	pf->ids = calloc(n, sizeof(*pf->ids));
	pf->groups = calloc(n + 1, sizeof(*pf->groups));
	if (!pf->lits || !pf->ids || !pf->groups) {
		ga_prefilter_destroy(pf);
		return NULL;
	}
	for (unsigned c = 0; c < 256; c++)
		pf->word[c] = (uint8_t)is_word((unsigned char)c);
	return pf;
}

/* Number the bytes CNT has seen (freq and len set) and, with PAIRS, make
 * room for their pairs, zeroed.  Returns -1 on ENOMEM. */
static int see(struct counts *cnt, bool pairs)
{
	size_t m = 0, side;

	memset(cnt->seen, 0, sizeof(cnt->seen));
	for (unsigned x = 0; x < 256; x++)
		if (cnt->freq[x] > 0) {
			cnt->seen[x >> 4] = (uint16_t)(cnt->seen[x >> 4] |
			                               1u << (x & 15));
			cnt->inv[m] = 1 / (cnt->freq[x] * cnt->len);
			cnt->prob[m] = cnt->freq[x];
			cnt->index[x] = (uint16_t)m++;
		}
	for (unsigned x = 0; x < 256; x++)
		if (cnt->freq[x] <= 0)
			cnt->index[x] = (uint16_t)m;
	cnt->inv[m] = cnt->prob[m] = 0;
	cnt->n_seen = m;
	if (!pairs)
		return 0;
	side = m + 1;
	cnt->pairs = calloc(side * side, sizeof(*cnt->pairs));
	cnt->into = calloc(side * side, sizeof(*cnt->into));
	return cnt->pairs && cnt->into ? 0 : -1;
}

/* Fill CNT's into from its pairs. */
static void transpose(struct counts *cnt)
{
	size_t side = cnt->n_seen + 1;

	for (size_t a = 0; a < side; a++)
		for (size_t b = 0; b < side; b++)
			cnt->into[b * side + a] = cnt->pairs[a * side + b];
}

/* Typical byte frequencies, for a prefilter without a sample.  Control
 * bytes and bytes above ASCII are taken as absent: a log is text, and
 * fewer bytes to weigh make the estimate quicker. */
static int static_counts(struct counts *cnt)
{
	double sum = 0;

	memset(cnt, 0, sizeof(*cnt));
	for (unsigned x = 0; x < 256; x++)
		if ((x >= 0x20 && x < 0x7f) || x == '\t')
			sum += byte_weight((unsigned char)x);
	for (unsigned x = 0; x < 256; x++)
		if ((x >= 0x20 && x < 0x7f) || x == '\t')
			cnt->freq[x] = byte_weight((unsigned char)x) / sum;
	cnt->len = 1;
	return see(cnt, false);
}

struct ga_prefilter *ga_prefilter_create_flags(const char *const *lits,
                                               const size_t *lens,
                                               const unsigned *flags, size_t n)
{
	struct counts none = {.pairs = NULL, .into = NULL};
	struct ga_prefilter *pf;

	if (n == 0 || n > UINT32_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < GA_PREFILTER_MIN_LITERAL ||
		    lens[i] > UINT32_MAX / 2 ||
		    (flags && (flags[i] &
		               ~(GA_PREFILTER_WORD_START |
		                 GA_PREFILTER_WORD_END | GA_PREFILTER_CASE)))) {
			errno = EINVAL;
			return NULL;
		}
	}
	pf = alloc(n);
	if (!pf)
		goto nomem;
	pf->n_lits = n;
	for (size_t i = 0; i < n; i++) {
		pf->lits[i].text = malloc(lens[i]);
		pf->lits[i].raw = malloc(lens[i]);
		if (!pf->lits[i].text || !pf->lits[i].raw)
			goto nomem;
		memcpy(pf->lits[i].raw, lits[i], lens[i]);
		for (size_t k = 0; k < lens[i]; k++)
			pf->lits[i].text[k] = ga_fold(
			        (unsigned char)lits[i][k]);
		pf->lits[i].len = lens[i];
		pf->lits[i].flags = flags ? flags[i] : 0;
		set_head(&pf->lits[i]);
	}
	if (static_counts(&none) < 0 || find_twins(pf) < 0 ||
	    build(pf, &none) < 0)
		goto nomem;
	free(none.pairs);
	free(none.into);
	return pf;
nomem:
	free(none.pairs);
	free(none.into);
	ga_prefilter_destroy(pf);
	errno = ENOMEM;
	return NULL;
}

struct ga_prefilter *ga_prefilter_create(const char *const *lits,
                                         const size_t *lens, size_t n)
{
	return ga_prefilter_create_flags(lits, lens, NULL, n);
}

struct ga_prefilter *ga_prefilter_tune(const struct ga_prefilter *pf,
                                       const char *sample, size_t len)
{
	const unsigned char *s = (const unsigned char *)sample;
	struct ga_prefilter *t = alloc(pf->n_lits);
	struct counts cnt;
	uint64_t hist[256] = {0};

	memset(&cnt, 0, sizeof(cnt));
	cnt.grams = calloc(1u << COUNT_BITS, sizeof(*cnt.grams));
	cnt.raw = calloc(1u << COUNT_BITS, sizeof(*cnt.raw));
	if (!t || !cnt.grams || !cnt.raw)
		goto nomem;
	t->n_lits = pf->n_lits;
	for (size_t i = 0; i < pf->n_lits; i++) {
		t->lits[i].len = pf->lits[i].len;
		t->lits[i].flags = pf->lits[i].flags;
		t->lits[i].twin = pf->lits[i].twin;
		t->lits[i].text = malloc(pf->lits[i].len);
		t->lits[i].raw = malloc(pf->lits[i].len);
		if (!t->lits[i].text || !t->lits[i].raw)
			goto nomem;
		memcpy(t->lits[i].text, pf->lits[i].text, pf->lits[i].len);
		memcpy(t->lits[i].raw, pf->lits[i].raw, pf->lits[i].len);
		set_head(&t->lits[i]);
	}
	for (size_t i = 0; i + FP <= len; i++) {
		uint32_t *c = &cnt.grams[hash(loadfp(s + i), COUNT_BITS)];
		uint32_t *r = &cnt.raw[hash(loadraw(s + i), COUNT_BITS)];

		if (*c < UINT32_MAX)
			(*c)++;
		if (*r < UINT32_MAX)
			(*r)++;
	}
	for (size_t i = 0; i < len; i++)
		hist[s[i]]++;
	for (unsigned x = 0; x < 256; x++)
		cnt.freq[x] = len ? (double)hist[x] / (double)len : 0;
	cnt.len = (double)len;
	if (see(&cnt, true) < 0)
		goto nomem;
	for (size_t i = 0; i + 1 < len; i++)
		cnt.pairs[cnt.index[s[i]] * (cnt.n_seen + 1) +
		          cnt.index[s[i + 1]]]++;
	transpose(&cnt);
	if (build(t, &cnt) < 0)
		goto nomem;
	free(cnt.grams);
	free(cnt.raw);
	free(cnt.pairs);
	free(cnt.into);
	return t;
nomem:
	free(cnt.grams);
	free(cnt.raw);
	free(cnt.pairs);
	free(cnt.into);
	ga_prefilter_destroy(t);
	errno = ENOMEM;
	return NULL;
}

struct ga_prefilter_cost ga_prefilter_cost(const struct ga_prefilter *pf,
                                           const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)data;
	struct ga_prefilter_cost cost = {0, 0};

	for (size_t p = 0; p + FP <= len; p++) {
		unsigned any = 0;
		uint32_t raw;

		for (int b = 0; b < BANKS; b++) {
			unsigned m = 0xff;

			for (int j = 0; j < FP; j++)
				m &= (unsigned)pf->banks[b]
				             .nib[j][0][s[p + j] & 15] &
				     pf->banks[b].nib[j][1][s[p + j] >> 4];
			any |= m;
		}
		if (!any)
			continue;
		cost.buckets++;
		/* the scan reads the word past the end too; counted as kept */
		if (p + sizeof(raw) > len) {
			cost.words++;
			continue;
		}
		memcpy(&raw, s + p, sizeof(raw));
		cost.words += bits_hold(pf->bits, pf->bits_shift, raw);
	}
	return cost;
}

/* Hits found but not reported yet: the search meets literals in the
 * order of their fingerprints, callers want them in the order of their
 * starts. */
struct pending {
	struct {
		size_t start, lit;
	} * v;
	size_t n, cap;
};

static int pending_add(struct pending *p, size_t start, size_t lit)
{
	size_t i;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void *tmp = realloc(p->v, cap * sizeof(*p->v));

		if (!tmp)
			return -1;
		p->v = tmp;
		p->cap = cap;
	}
	/* insertion keeps (start, lit) order; the list stays short */
	for (i = p->n;
	     i > 0 && (p->v[i - 1].start > start ||
	               (p->v[i - 1].start == start && p->v[i - 1].lit > lit));
	     i--)
		p->v[i] = p->v[i - 1];
	p->v[i].start = start;
	p->v[i].lit = lit;
	p->n++;
	return 0;
}

struct scan {
	const struct ga_prefilter *pf;
	const unsigned char *s;
	size_t len;
	ga_prefilter_hit_fn on_hit;
	void *ctx;
	struct pending pend;
	size_t floor; /* hits starting before this are dropped */
	int stop;
};

/* Report the pending hits that start before LIMIT. */
static void flush(struct scan *sc, size_t limit)
{
	size_t done = 0;

	while (done < sc->pend.n && sc->pend.v[done].start < limit &&
	       !sc->stop) {
		size_t start = sc->pend.v[done].start, r;

		done++;
		if (start < sc->floor)
			continue;
		r = sc->on_hit(sc->ctx, start, sc->pend.v[done - 1].lit);
		if (r >= sc->len)
			sc->stop = 1;
		else if (r > start + 1 && r > sc->floor)
			sc->floor = r;
	}
	if (done == 0)
		return; /* also: nothing pending, v may be NULL */
	memmove(sc->pend.v, sc->pend.v + done,
	        (sc->pend.n - done) * sizeof(*sc->pend.v));
	sc->pend.n -= done;
}

/* Does literal L occur at START? */
static int occurs(const struct scan *sc, const struct literal *l, size_t start)
{
	const unsigned char *t = sc->s + start;

	if (start < sc->floor || l->len > sc->len - start)
		return 0;
	if (sc->len - start >= 8) {
		uint64_t w;

		memcpy(&w, t, sizeof(w));
		if (((w | l->fold) & l->mask) != l->head)
			return 0;
	}
	/* Then the boundaries: a byte each, and what rejects " inf\b" in
	 * the " INFO" of every log line. */
	if ((l->flags & GA_PREFILTER_WORD_START) && start > 0 && is_word(t[-1]))
		return 0;
	if ((l->flags & GA_PREFILTER_WORD_END) && start + l->len < sc->len &&
	    is_word(t[l->len]))
		return 0;
	if (l->flags & GA_PREFILTER_CASE) {
		/* literals are short: no call */
		for (size_t k = 0; k < l->len; k++)
			if (t[k] != l->raw[k])
				return 0;
	} else {
		for (size_t k = 0; k < l->len; k++)
			if (ga_fold(t[k]) != l->text[k])
				return 0;
	}
	return 1;
}

/* Queue a hit of literal I at START. */
static void queue(struct scan *sc, uint32_t i, size_t start)
{
	if (pending_add(&sc->pend, start, i) < 0) {
		/* Out of memory: report what we have, in order. */
		flush(sc, SIZE_MAX);
		if (pending_add(&sc->pend, start, i) < 0)
			sc->stop = 1;
	}
}

/* The literals of group G, whose fingerprint is at text offset P: each
 * twin compared once. */
static void verify(struct scan *sc, size_t p, uint32_t g)
{
	const struct ga_prefilter *pf = sc->pf;
	const struct group *gr = &pf->groups[g];
	uint32_t twin = NONE;
	int found = 0;

	for (uint32_t e = gr->first; e < gr->end; e++) {
		uint32_t i = pf->ids[e];
		const struct literal *l = &pf->lits[i];

		if (l->twin != twin) {
			twin = l->twin;
			found = p >= l->anchor && occurs(sc, l, p - l->anchor);
		}
		if (found)
			queue(sc, i, p - l->anchor);
	}
}

#ifdef HAVE_AVX2_PATH
/* Which of the 32 positions at T a bucket accepts: a bit each.  The
 * tables hold both cases where a literal ignores case: no folding. */
__attribute__((target("avx2,bmi,bmi2"), always_inline)) static inline uint32_t
accepts32(const unsigned char *t, const __m256i m[BANKS][FP][2], bool ascii)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	__m256i any = _mm256_setzero_si256();

#pragma GCC unroll 4
	for (int b = 0; b < BANKS; b++) {
		__m256i r = _mm256_set1_epi8(-1);

#pragma GCC unroll 4
		for (int j = 0; j < FP; j++) {
			__m256i x = _mm256_loadu_si256(
			        (const __m256i *)(const void *)(t + j));
			__m256i lo = ascii ? x : _mm256_and_si256(x, low);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4),
			                              low);

			r = _mm256_and_si256(
			        r,
			        _mm256_and_si256(
			                _mm256_shuffle_epi8(m[b][j][0], lo),
			                _mm256_shuffle_epi8(m[b][j][1], hi)));
		}
		any = _mm256_or_si256(any, r);
	}
	return ~(uint32_t)_mm256_movemask_epi8(
	        _mm256_cmpeq_epi8(any, _mm256_setzero_si256()));
}

/* Append P + the offset of each bit of MASK to OUT; returns how many.
 * The first four without a branch: most blocks of 64 positions that the
 * buckets accept hold one to three, and whether a block holds any is no
 * pattern a branch predictor learns. */
static inline size_t positions(uint16_t *out, uint64_t mask, size_t p)
{
	size_t n = (size_t)__builtin_popcountll(mask);

	/* the top bit keeps ctz defined; what lands past n is dropped */
#pragma GCC unroll 4
	for (int k = 0; k < 4; k++) {
		out[k] = (uint16_t)(p + (unsigned)__builtin_ctzll(
		                                mask | UINT64_C(1) << 63));
		mask &= mask - 1;
	}
	for (size_t k = 4; k < n; k++) {
		out[k] = (uint16_t)(p + (unsigned)__builtin_ctzll(mask));
		mask &= mask - 1;
	}
	return n;
}

/* List the positions Q.. before END (offsets from S) that a bucket
 * accepts into AT, 64 at a time while 64 + FP bytes can be read (AVAIL
 * from S), then 32; *N gets how many, and the offset where it stopped
 * is returned.  ASCII: pf->ascii, a constant where this is inlined.
 *
 * The blocks that some bucket accepts a position of are kept first,
 * without a branch, and their positions listed after: about half the
 * blocks of a log have none, and listing costs the same for all. */
__attribute__((target("avx2,bmi,bmi2"), always_inline)) static inline size_t
list_avx2(const unsigned char *s, size_t end, size_t avail,
          const __m256i m[BANKS][FP][2], bool ascii, uint16_t *at, size_t *n)
{
	uint64_t masks[CHUNK / 32 + 1];
	uint16_t base[CHUNK / 32 + 1];
	size_t q = 0, k = 0, blocks = 0;

	for (; q < end && q + 64 + FP <= avail; q += 64) {
		uint64_t mask = accepts32(s + q, m, ascii) |
		                (uint64_t)accepts32(s + q + 32, m, ascii) << 32;

		if (end - q < 64)
			mask &= (UINT64_C(1) << (end - q)) - 1;
		masks[blocks] = mask;
		base[blocks] = (uint16_t)q;
		blocks += mask != 0;
	}
	if (q < end && q + 32 + FP <= avail) {
		uint64_t mask = accepts32(s + q, m, ascii);

		if (end - q < 32)
			mask &= (UINT64_C(1) << (end - q)) - 1;
		masks[blocks] = mask;
		base[blocks] = (uint16_t)q;
		blocks += mask != 0;
		q += 32;
	}
	for (size_t b = 0; b < blocks; b++)
		k += positions(at + k, masks[b], base[b]);
	*n = k;
	return q;
}

/* Positions P.. before TO (at most CHUNK), 64 at a time while 64 + FP
 * bytes can be read, then 32; returns where it stopped.  Four passes:
 * the buckets' test lists the positions they accept, the bit table of
 * words keeps those whose word some group accepts, the table of
 * fingerprints those that really hold one, and their literals are
 * compared.  Each pass is a loop without a branch on the text, where
 * one pass interleaving them mispredicted a branch or two per block of
 * 64. */
__attribute__((target("avx2,bmi,bmi2"))) static size_t scan_avx2(
        struct scan *sc, size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const unsigned char *s = sc->s + p;
	const uint32_t *slot = pf->slot, mult = pf->mult,
	               shift = 32 - pf->slot_bits;
	const uint64_t *bits = pf->bits;
	const unsigned bits_shift = pf->bits_shift;
	const struct group *groups = pf->groups;
	const uint8_t *word = pf->word;
	/* offsets from p: CHUNK fits 16 bits; 4 written past the last */
	uint16_t at[CHUNK + 4], hit_at[CHUNK + 4];
	uint32_t hit_grp[CHUNK + 4];
	/* + FP: the fingerprint is read as a word of 4 bytes */
	size_t n = 0, n_word = 0, n_hits = 0, q, end = to - p,
	       avail = sc->len - p;
	__m256i m[BANKS][FP][2];

	_Static_assert(CHUNK + 64 <= 65536, "offsets in 16 bits");
	for (int b = 0; b < BANKS; b++)
		for (int j = 0; j < FP; j++)
			for (int h = 0; h < 2; h++)
				m[b][j][h] = _mm256_broadcastsi128_si256(
				        _mm_loadu_si128(
				                (const __m128i *)pf->banks[b]
				                        .nib[j][h]));
	if (pf->ascii)
		q = list_avx2(s, end, avail, m, true, at, &n);
	else
		q = list_avx2(s, end, avail, m, false, at, &n);
	/* Most accepted positions hold only a combination of the buckets'
	 * nibbles: a bit each rejects them, kept in place. */
	for (size_t i = 0; i < n; i++) {
		uint32_t raw;

		memcpy(&raw, s + at[i], sizeof(raw));
		at[n_word] = at[i];
		n_word += bits_hold(bits, bits_shift, raw);
	}
	/* A literal's fingerprint is in its bucket: the table of
	 * fingerprints says which of those hold one, one look each and no
	 * branch on the answer. */
	for (size_t i = 0; i < n_word; i++) {
		uint32_t raw, g;

		memcpy(&raw, s + at[i], sizeof(raw));
		g = slot[(((raw & 0xffffffu >> (8 * (3 - FP))) | FOLD3) *
		          mult) >>
		         shift];
		hit_at[n_hits] = at[i];
		hit_grp[n_hits] = g;
		n_hits += (((raw | groups[g].fold) & groups[g].mask) ==
		           groups[g].key) &
		          !(groups[g].after & word[raw >> 24]);
	}
	for (size_t i = 0; i < n_hits && !sc->stop; i++)
		verify(sc, p + hit_at[i], hit_grp[i]);
	return q < end ? p + q : to;
}
#endif

/* Positions P.. before TO. */
static void scan_range(struct scan *sc, size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const unsigned char *s = sc->s;

#ifdef HAVE_AVX2_PATH
	if (pf->simd)
		p = scan_avx2(sc, p, to);
#endif
	for (; p < to && p + FP <= sc->len && !sc->stop; p++) {
		unsigned any = 0;
		uint32_t fp, g;

		for (size_t b = 0; b < BANKS; b++) {
			const struct bank *bk = &pf->banks[b];
			unsigned r = bk->table[0][s[p]];

			for (int j = 1; j < FP; j++)
				r &= bk->table[j][s[p + (size_t)j]];
			any |= r;
		}
		if (!any)
			continue;
		/* the fingerprint only: the byte after may not be there */
		fp = loadraw(s + p);
		g = pf->slot[slot_of(pf, fp | FOLD3)];
		if ((((fp | pf->groups[g].fold) ^ pf->groups[g].key) &
		     pf->groups[g].mask & 0xffffffu >> (8 * (3 - FP))) == 0)
			verify(sc, p, g);
	}
}

void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
                       size_t len, ga_prefilter_hit_fn on_hit, void *ctx)
{
	struct scan sc = {pf,  (const unsigned char *)data,
	                  len, on_hit,
	                  ctx, {NULL, 0, 0},
	                  0,   0};
	size_t p = 0; /* the next fingerprint position */

	if (len < GA_PREFILTER_MIN_LITERAL)
		return;
	while (!sc.stop && p + FP <= len) {
		size_t end = len - p > CHUNK ? p + CHUNK : len;

		scan_range(&sc, p, end);
		p = end;
		/* Every hit starting before p - back has been found. */
		if (sc.pend.n && p > pf->back)
			flush(&sc, p - pf->back);
		if (sc.floor > p)
			p = sc.floor;
	}
	flush(&sc, SIZE_MAX);
	free(sc.pend.v);
}
