#include "prefilter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Wu & Manber, "A fast algorithm for multi-pattern searching" (1994), with
 * block size B = 2 and the pair itself as hash, so no hash collisions.
 * m is the shortest literal's length; only the first m bytes of every
 * literal take part in the shift table, the rest is verified. */

struct literal {
	unsigned char *text;    /* folded */
	size_t len;
};

struct ga_prefilter {
	size_t m;
	struct literal *lits;
	size_t n_lits;
	/* shift[raw pair] for the window ending with that pair; case
	 * variants are expanded so the hot loop needs no folding */
	uint8_t shift[65536];
	/* literals whose m-prefix ends with a folded pair, CSR layout */
	uint32_t bucket_start[65537];
	uint32_t *bucket;
};

static inline unsigned pair(unsigned char a, unsigned char b)
{
	return ((unsigned)a << 8) | b;
}

static void destroy_literals(struct literal *lits, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lits[i].text);
	free(lits);
}

void ga_prefilter_destroy(struct ga_prefilter *pf)
{
	if (!pf)
		return;
	destroy_literals(pf->lits, pf->n_lits);
	free(pf->bucket);
	free(pf);
}

struct ga_prefilter *ga_prefilter_create(const char *const *lits,
					 const size_t *lens, size_t n)
{
	struct ga_prefilter *pf = NULL;
	uint8_t *fshift = NULL;
	uint32_t *fill = NULL;
	size_t m = SIZE_MAX;

	if (n == 0 || n > UINT32_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < GA_PREFILTER_MIN_LITERAL) {
			errno = EINVAL;
			return NULL;
		}
		if (lens[i] < m)
			m = lens[i];
	}
	if (m > 255)
		m = 255;

	pf = calloc(1, sizeof(*pf));
	fshift = malloc(65536);
	if (!pf || !fshift)
		goto nomem;
	pf->m = m;
	pf->lits = calloc(n, sizeof(*pf->lits));
	if (!pf->lits)
		goto nomem;
	pf->n_lits = n;
	for (size_t i = 0; i < n; i++) {
		pf->lits[i].text = malloc(lens[i]);
		if (!pf->lits[i].text)
			goto nomem;
		for (size_t k = 0; k < lens[i]; k++)
			pf->lits[i].text[k] = ga_fold((unsigned char)lits[i][k]);
		pf->lits[i].len = lens[i];
	}

	/* Shift over folded pairs: a pair ending at index j of a literal's
	 * m-prefix lets the window move m-1-j bytes. */
	memset(fshift, (int)(m - 1), 65536);
	for (size_t i = 0; i < n; i++) {
		const unsigned char *t = pf->lits[i].text;
		for (size_t j = 1; j < m; j++) {
			unsigned p = pair(t[j - 1], t[j]);
			if (fshift[p] > m - 1 - j)
				fshift[p] = (uint8_t)(m - 1 - j);
		}
	}
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			pf->shift[pair((unsigned char)a, (unsigned char)b)] =
				fshift[pair(ga_fold((unsigned char)a),
					    ga_fold((unsigned char)b))];

	/* Buckets: literal i sits in the bucket of its m-prefix's last pair. */
	for (size_t i = 0; i < n; i++) {
		const unsigned char *t = pf->lits[i].text;
		pf->bucket_start[pair(t[m - 2], t[m - 1]) + 1]++;
	}
	for (size_t p = 0; p < 65536; p++)
		pf->bucket_start[p + 1] += pf->bucket_start[p];
	pf->bucket = malloc(n * sizeof(*pf->bucket));
	fill = calloc(65536, sizeof(*fill));
	if (!pf->bucket || !fill)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *t = pf->lits[i].text;
		unsigned p = pair(t[m - 2], t[m - 1]);
		pf->bucket[pf->bucket_start[p] + fill[p]++] = (uint32_t)i;
	}
	free(fill);
	free(fshift);
	return pf;
nomem:
	free(fill);
	free(fshift);
	ga_prefilter_destroy(pf);
	errno = ENOMEM;
	return NULL;
}

static inline int folded_equal(const unsigned char *text,
			       const unsigned char *lit, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (ga_fold(text[k]) != lit[k])
			return 0;
	return 1;
}

void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
		       size_t len, ga_prefilter_hit_fn on_hit, void *ctx)
{
	const unsigned char *s = (const unsigned char *)data;
	const size_t m = pf->m;
	size_t pos; /* index of the window's last byte */

	if (len < m)
		return;
	pos = m - 1;
	while (pos < len) {
		unsigned sh = pf->shift[pair(s[pos - 1], s[pos])];
		size_t start, resume;
		unsigned fp;

		if (sh) {
			pos += sh;
			continue;
		}
		start = pos + 1 - m;
		resume = start + 1;
		fp = pair(ga_fold(s[pos - 1]), ga_fold(s[pos]));
		for (uint32_t k = pf->bucket_start[fp];
		     k < pf->bucket_start[fp + 1]; k++) {
			const struct literal *l = &pf->lits[pf->bucket[k]];
			size_t r;

			if (l->len > len - start ||
			    !folded_equal(s + start, l->text, l->len))
				continue;
			r = on_hit(ctx, start, pf->bucket[k]);
			if (r > start + 1) {
				resume = r;
				break;
			}
		}
		if (resume >= len || resume > SIZE_MAX - m)
			return;
		pos = resume + m - 1;
	}
}
