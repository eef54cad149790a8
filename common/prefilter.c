#include "prefilter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Anchor-trigram filtering with a stride of two.  Every literal gets an
 * anchor: two consecutive trigrams of it (offsets k and k+1), chosen where
 * they are rarest.  Any occurrence of the literal then has one of them at
 * an even text offset, so the scan only hashes the (loosely case folded)
 * trigram at every second position and tests a table of anchor hashes, 16
 * positions at a time without branches; only where the table says so are
 * the literals anchored there verified.  (Literals are at least 4 bytes:
 * 3 + STRIDE - 1, which is what makes the stride safe.)
 *
 * This beats a skip-based search (Wu-Manber) on logs: the nan rules'
 * literals are 4 bytes, which caps every skip at 3, and each skip waits on
 * the previous table lookup, while the bitmap tests are independent and
 * the CPU overlaps them.  Trigrams rather than pairs because pairs are
 * common in any text and every false alarm costs a verification. */

#define BLOCK 16
#define STRIDE 2
#define FILTER_BITS 15 /* a byte per hash: 32 KiB, in L1 */
#define BUCKET_BITS 12 /* verification buckets */
#define COUNT_BITS 16  /* trigram counts when tuning */

struct literal {
	unsigned char *text; /* folded */
	size_t len;
	size_t anchor; /* offset of the anchor trigram */
};

struct entry {
	uint32_t lit;
	uint32_t anchor;
};

struct ga_prefilter {
	struct literal *lits;
	size_t n_lits;
	size_t max_anchor;
	uint8_t table[1u << FILTER_BITS];
	uint32_t start[(1u << BUCKET_BITS) + 1]; /* CSR by bucket */
	struct entry *entries;
};

/* The trigram at P, folded by setting bit 5 of each byte: exact for ASCII
 * letters, and a superset elsewhere ('[' and '{' collide), which is all a
 * filter needs: verification is exact. */
static inline uint32_t trigram(const unsigned char *p)
{
	uint32_t x = (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	             ((uint32_t)p[2] << 16);

	return x | 0x202020u;
}

static inline uint32_t hash(uint32_t tri, unsigned bits)
{
	return (tri * 0x9e3779b1u) >> (32 - bits);
}

/* Rough byte frequencies in training logs, case folded (per mille), for
 * choosing anchors before any text has been seen. */
static unsigned byte_weight(unsigned char c)
{
	static const char common[] = "etaoinsrl";
	static const char middle[] = "hdcump";
	static const char fewer[] = "fgwybv";

	c = ga_fold(c);
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

static uint64_t static_score(const unsigned char *t)
{
	return (uint64_t)byte_weight(t[0]) * byte_weight(t[1]) *
	       byte_weight(t[2]);
}

void ga_prefilter_destroy(struct ga_prefilter *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->n_lits; i++)
		free(pf->lits[i].text);
	free(pf->lits);
	free(pf->entries);
	free(pf);
}

/* Choose every literal's anchor (by COUNTS of hashed trigrams in a sample
 * when given, else by static weights) and build the bitmap and buckets. */
static int build(struct ga_prefilter *pf, const uint32_t *counts)
{
	uint32_t fill[1u << BUCKET_BITS];

	memset(pf->table, 0, sizeof(pf->table));
	memset(pf->start, 0, sizeof(pf->start));
	memset(fill, 0, sizeof(fill));
	pf->max_anchor = 0;
	for (size_t i = 0; i < pf->n_lits; i++) {
		struct literal *l = &pf->lits[i];
		uint64_t best = UINT64_MAX;

		/* the window of STRIDE trigrams with the lowest total score */
		for (size_t k = 0; k + 3 + STRIDE - 1 <= l->len; k++) {
			uint64_t score = 0;

			for (size_t o = k; o < k + STRIDE; o++) {
				score += static_score(l->text + o);
				if (counts)
					score += (uint64_t)counts[hash(
					                 trigram(l->text + o),
					                 COUNT_BITS)]
					         << 32;
			}
			if (score < best) {
				best = score;
				l->anchor = k;
			}
		}
		if (l->anchor + STRIDE - 1 > pf->max_anchor)
			pf->max_anchor = l->anchor + STRIDE - 1;
		for (size_t o = l->anchor; o < l->anchor + STRIDE; o++) {
			uint32_t h = hash(trigram(l->text + o), FILTER_BITS);

			pf->table[h] = 1;
			pf->start[(h >> (FILTER_BITS - BUCKET_BITS)) + 1]++;
		}
	}
	for (size_t b = 0; b < (1u << BUCKET_BITS); b++)
		pf->start[b + 1] += pf->start[b];
	for (size_t i = 0; i < pf->n_lits; i++) {
		const struct literal *l = &pf->lits[i];

		for (size_t o = l->anchor; o < l->anchor + STRIDE; o++) {
			uint32_t b = hash(trigram(l->text + o), FILTER_BITS) >>
			             (FILTER_BITS - BUCKET_BITS);
			struct entry *e =
			        &pf->entries[pf->start[b] + fill[b]++];

			e->lit = (uint32_t)i;
			e->anchor = (uint32_t)o;
		}
	}
	return 0;
}

static struct ga_prefilter *alloc(size_t n)
{
	struct ga_prefilter *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->lits = calloc(n, sizeof(*pf->lits));
	pf->entries = calloc(n * STRIDE, sizeof(*pf->entries));
	if (!pf->lits || !pf->entries) {
		ga_prefilter_destroy(pf);
		return NULL;
	}
	return pf;
}

struct ga_prefilter *ga_prefilter_create(const char *const *lits,
                                         const size_t *lens, size_t n)
{
	struct ga_prefilter *pf;

	if (n == 0 || n > UINT32_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < GA_PREFILTER_MIN_LITERAL ||
		    lens[i] > UINT32_MAX / 2) {
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
		if (!pf->lits[i].text)
			goto nomem;
		for (size_t k = 0; k < lens[i]; k++)
			pf->lits[i].text[k] = ga_fold(
			        (unsigned char)lits[i][k]);
		pf->lits[i].len = lens[i];
	}
	build(pf, NULL);
	return pf;
nomem:
	ga_prefilter_destroy(pf);
	errno = ENOMEM;
	return NULL;
}

struct ga_prefilter *ga_prefilter_tune(const struct ga_prefilter *pf,
                                       const char *sample, size_t len)
{
	const unsigned char *s = (const unsigned char *)sample;
	struct ga_prefilter *t = alloc(pf->n_lits);
	uint32_t *counts = calloc(1u << COUNT_BITS, sizeof(*counts));

	if (!t || !counts)
		goto nomem;
	t->n_lits = pf->n_lits;
	for (size_t i = 0; i < pf->n_lits; i++) {
		t->lits[i].len = pf->lits[i].len;
		t->lits[i].text = malloc(pf->lits[i].len);
		if (!t->lits[i].text)
			goto nomem;
		memcpy(t->lits[i].text, pf->lits[i].text, pf->lits[i].len);
	}
	for (size_t i = 0; i + 3 <= len; i++) {
		uint32_t *c = &counts[hash(trigram(s + i), COUNT_BITS)];

		if (*c < UINT32_MAX)
			(*c)++;
	}
	build(t, counts);
	free(counts);
	return t;
nomem:
	free(counts);
	ga_prefilter_destroy(t);
	errno = ENOMEM;
	return NULL;
}

/* Hits found but not reported yet: the scan meets literals in the order
 * of their anchors, callers want them in the order of their starts. */
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

static inline int folded_equal(const unsigned char *text,
                               const unsigned char *lit, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (ga_fold(text[k]) != lit[k])
			return 0;
	return 1;
}

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

/* Verify the literals whose anchor hash matches the text at offset I. */
static void verify(struct scan *sc, size_t i)
{
	const struct ga_prefilter *pf = sc->pf;
	uint32_t b = hash(trigram(sc->s + i), FILTER_BITS) >>
	             (FILTER_BITS - BUCKET_BITS);

	for (uint32_t e = pf->start[b]; e < pf->start[b + 1]; e++) {
		const struct literal *l = &pf->lits[pf->entries[e].lit];
		size_t anchor = pf->entries[e].anchor, start;

		if (i < anchor)
			continue;
		start = i - anchor;
		if (start < sc->floor || l->len > sc->len - start ||
		    !folded_equal(sc->s + start, l->text, l->len))
			continue;
		if (pending_add(&sc->pend, start, pf->entries[e].lit) < 0) {
			/* Out of memory: report what we have, in order. */
			flush(sc, SIZE_MAX);
			if (pending_add(&sc->pend, start, pf->entries[e].lit) <
			    0)
				sc->stop = 1;
		}
	}
}

static inline unsigned probe(const uint8_t *table, const unsigned char *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x)); /* one unaligned load; byte 3 ignored */
	return table[hash((x & 0xffffffu) | 0x202020u, FILTER_BITS)];
}

void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
                       size_t len, ga_prefilter_hit_fn on_hit, void *ctx)
{
	struct scan sc = {pf,  (const unsigned char *)data,
	                  len, on_hit,
	                  ctx, {NULL, 0, 0},
	                  0,   0};
	const uint8_t *table = pf->table;
	size_t i = 0; /* always even */

	if (len < GA_PREFILTER_MIN_LITERAL)
		return;
	while (!sc.stop) {
		if (sc.floor > i)
			i = sc.floor & ~(size_t)(STRIDE - 1);
		if (i + 3 > len)
			break;
		/* a block probes BLOCK positions, reading 4 bytes at each */
		if (i + STRIDE * (BLOCK - 1) + 4 <= len) {
			const unsigned char *p = sc.s + i;
			unsigned mask = 0;

			/* Unrolled: the probes are independent, so the CPU
			 * overlaps their loads. */
#pragma GCC unroll 16
			for (unsigned j = 0; j < BLOCK; j++)
				mask |= probe(table, p + STRIDE * j) << j;
			while (mask && !sc.stop) {
				verify(&sc,
				       i + STRIDE * (unsigned)__builtin_ctz(
				                            mask));
				mask &= mask - 1;
			}
			i += STRIDE * BLOCK;
		} else {
			if (table[hash(trigram(sc.s + i), FILTER_BITS)])
				verify(&sc, i);
			i += STRIDE;
		}
		/* Hits starting before i - max_anchor can no longer be
		 * preceded by one found later. */
		if (sc.pend.n && i > pf->max_anchor)
			flush(&sc, i - pf->max_anchor);
	}
	flush(&sc, SIZE_MAX);
	free(sc.pend.v);
}
