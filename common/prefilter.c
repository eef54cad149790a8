#include "prefilter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Anchor-pair filtering.  Every literal gets one "anchor": the byte pair
 * inside it that is rarest in typical logs (by a static frequency
 * estimate).  The scan tests every position of the text against a bitmap
 * of the anchors' byte pairs (64 Kibit, all case variants set), 16
 * positions at a time without branches; only positions whose pair is in
 * the bitmap are verified against the literals anchored there.
 *
 * This beats a skip-based search (Wu-Manber) here: the nan rules' literals
 * are 4 bytes, which caps every skip at 3, and each skip waits on the
 * previous table lookup.  The bitmap tests are independent of each other,
 * so the CPU overlaps them. */

#define BLOCK 16

struct literal {
	unsigned char *text;    /* folded */
	size_t len;
	size_t anchor;          /* offset of the anchor pair */
};

struct entry {
	uint32_t lit;
	uint32_t anchor;
};

struct ga_prefilter {
	struct literal *lits;
	size_t n_lits;
	size_t max_anchor;
	uint8_t bits[65536 / 8];        /* raw pair (b[i] | b[i+1] << 8) */
	uint32_t start[65537];          /* CSR by folded pair */
	struct entry *entries;
};

/* Rough byte frequencies in training logs, case folded (per mille):
 * numbers, blanks and common letters dominate; capitals fold onto their
 * lower case. */
static unsigned byte_weight(unsigned char c)
{
	static const char common[] = "etaoinsr";
	static const char middle[] = "hldcum";
	static const char fewer[] = "fpgwyb";

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
	if (c == 'v' || c == 'k')
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

static inline unsigned pair(unsigned char lo, unsigned char hi)
{
	return (unsigned)lo | ((unsigned)hi << 8);
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

static void set_variants(struct ga_prefilter *pf, unsigned char a,
			 unsigned char b)
{
	unsigned char va[2] = { a, a }, vb[2] = { b, b };

	if (a >= 'a' && a <= 'z')
		va[1] = (unsigned char)(a - 32);
	if (b >= 'a' && b <= 'z')
		vb[1] = (unsigned char)(b - 32);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			unsigned p = pair(va[i], vb[j]);

			pf->bits[p >> 3] |= (uint8_t)(1u << (p & 7));
		}
}

struct ga_prefilter *ga_prefilter_create(const char *const *lits,
					 const size_t *lens, size_t n)
{
	struct ga_prefilter *pf;
	uint32_t *fill = NULL;

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
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		goto nomem;
	pf->lits = calloc(n, sizeof(*pf->lits));
	pf->entries = calloc(n, sizeof(*pf->entries));
	fill = calloc(65536, sizeof(*fill));
	if (!pf->lits || !pf->entries || !fill)
		goto nomem;
	pf->n_lits = n;
	for (size_t i = 0; i < n; i++) {
		struct literal *l = &pf->lits[i];
		unsigned long best = ~0ul;

		l->text = malloc(lens[i]);
		if (!l->text)
			goto nomem;
		for (size_t k = 0; k < lens[i]; k++)
			l->text[k] = ga_fold((unsigned char)lits[i][k]);
		l->len = lens[i];
		for (size_t k = 0; k + 1 < l->len; k++) {
			unsigned long w = (unsigned long)byte_weight(l->text[k]) *
					  byte_weight(l->text[k + 1]);

			if (w < best) {
				best = w;
				l->anchor = k;
			}
		}
		if (l->anchor > pf->max_anchor)
			pf->max_anchor = l->anchor;
		set_variants(pf, l->text[l->anchor], l->text[l->anchor + 1]);
		pf->start[pair(l->text[l->anchor], l->text[l->anchor + 1]) + 1]++;
	}
	for (size_t p = 0; p < 65536; p++)
		pf->start[p + 1] += pf->start[p];
	for (size_t i = 0; i < n; i++) {
		const struct literal *l = &pf->lits[i];
		unsigned p = pair(l->text[l->anchor], l->text[l->anchor + 1]);

		pf->entries[pf->start[p] + fill[p]].lit = (uint32_t)i;
		pf->entries[pf->start[p] + fill[p]].anchor = (uint32_t)l->anchor;
		fill[p]++;
	}
	free(fill);
	return pf;
nomem:
	free(fill);
	ga_prefilter_destroy(pf);
	errno = ENOMEM;
	return NULL;
}

/* Hits found but not reported yet: the scan meets literals in the order
 * of their anchors, callers want them in the order of their starts. */
struct pending {
	struct { size_t start, lit; } *v;
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
	for (i = p->n; i > 0 && (p->v[i - 1].start > start ||
				 (p->v[i - 1].start == start &&
				  p->v[i - 1].lit > lit)); i--)
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
	size_t floor;           /* hits starting before this are dropped */
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

	while (done < sc->pend.n && sc->pend.v[done].start < limit && !sc->stop) {
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
	memmove(sc->pend.v, sc->pend.v + done,
		(sc->pend.n - done) * sizeof(*sc->pend.v));
	sc->pend.n -= done;
}

/* Verify the literals anchored at text offset I. */
static void verify(struct scan *sc, size_t i)
{
	const struct ga_prefilter *pf = sc->pf;
	unsigned fp = pair(ga_fold(sc->s[i]), ga_fold(sc->s[i + 1]));

	for (uint32_t e = pf->start[fp]; e < pf->start[fp + 1]; e++) {
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
			if (pending_add(&sc->pend, start, pf->entries[e].lit) < 0)
				sc->stop = 1;
		}
	}
}

static inline unsigned bit(const uint8_t *bits, const unsigned char *p)
{
	unsigned v = pair(p[0], p[1]);

	return (bits[v >> 3] >> (v & 7)) & 1u;
}

void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
		       size_t len, ga_prefilter_hit_fn on_hit, void *ctx)
{
	struct scan sc = { pf, (const unsigned char *)data, len, on_hit, ctx,
			   { NULL, 0, 0 }, 0, 0 };
	const uint8_t *bits = pf->bits;
	size_t i = 0;

	if (len < GA_PREFILTER_MIN_LITERAL)
		return;
	while (i + 1 < len && !sc.stop) {
		if (sc.floor > i)
			i = sc.floor;
		if (i + BLOCK + 1 <= len) {
			const unsigned char *p = sc.s + i;
			unsigned mask = 0;

			for (unsigned j = 0; j < BLOCK; j++)
				mask |= bit(bits, p + j) << j;
			while (mask && !sc.stop) {
				verify(&sc, i + (unsigned)__builtin_ctz(mask));
				mask &= mask - 1;
			}
			i += BLOCK;
		} else {
			if (bit(bits, sc.s + i))
				verify(&sc, i);
			i++;
		}
		/* Hits starting before i - max_anchor can no longer be
		 * preceded by one found later. */
		if (sc.pend.n && i > pf->max_anchor)
			flush(&sc, i - pf->max_anchor);
	}
	flush(&sc, SIZE_MAX);
	free(sc.pend.v);
}
