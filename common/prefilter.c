#include "prefilter.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* Two searches share the work, and each costs little per byte of text.
 *
 * Short literals (4-7 bytes) limit how far any search can skip, so they
 * get their own: every literal has a "fingerprint", three consecutive
 * bytes of it, and a literal of 8 buckets.  For each text position, the
 * three bytes there select bucket masks from tables indexed by their low
 * and high nibbles (AVX2 PSHUFB: 32 positions in a few instructions, the
 * "Teddy" method of Hyperscan and Rust's aho-corasick), and only a
 * position whose masks share a bucket is verified against that bucket's
 * literals.  Without AVX2 the same test uses a byte table per position.
 *
 * Long literals (8 bytes and more) are found by probing one position in
 * every STRIDE (the shortest long literal's length - 3, so at least 5):
 * each literal has STRIDE consecutive four-byte "anchors", so one of them
 * is under a probe wherever the literal occurs, and a probe tests the hash
 * of the (loosely folded) four bytes in a 32 KiB bitmap.  Only where the
 * bitmap says so are the literals anchored there verified.
 *
 * Both choose, per literal, the fingerprint or anchors that are rarest:
 * by static byte weights, or by counts in a sample of the log
 * (ga_prefilter_tune).  A filter that triggers on every "INFO" costs a
 * verification per line; one that triggers on neither the log's noise nor
 * its ordinary lines costs nothing but the probes. */

#define SHORT_MAX 7 /* literals up to this length: the fingerprint search */
#define FP 3        /* fingerprint bytes */
#define BUCKETS 8
#define Q 4 /* anchor bytes */
#define STRIDE_MAX 16
#define FILTER_BITS 18 /* a bit per hash: 32 KiB */
#define BUCKET_BITS 12 /* verification buckets of the long search */
#define COUNT_BITS 16  /* gram counts when tuning */
#define CHUNK 2048     /* text searched between two flushes */
#define FOLD4 0x20202020u

struct literal {
	unsigned char *text; /* folded */
	size_t len;
	size_t anchor; /* offset of the fingerprint, or of the first anchor */
	unsigned flags;
};

struct entry {
	uint32_t lit;
	uint32_t anchor;
};

struct ga_prefilter {
	struct literal *lits;
	size_t n_lits;
	int simd;
	/* short literals, by bucket */
	uint32_t *short_ids;
	size_t n_short;
	uint32_t bstart[BUCKETS + 1];
	uint8_t nib[FP][2][16]; /* [byte][low, high nibble][nibble] */
	uint8_t table[FP][256]; /* [byte][folded byte] */
	size_t short_back;      /* largest fingerprint offset */
	/* long literals */
	size_t n_long;
	size_t stride;
	size_t long_back; /* largest offset of a probed anchor */
	uint8_t bits[(1u << (FILTER_BITS - 3)) + 4]; /* + 4: vector loads */
	uint32_t start[(1u << BUCKET_BITS) + 1];     /* CSR by bucket */
	struct entry *entries;
};

static int portable_only;

void ga_prefilter_force_portable(int on)
{
	portable_only = on;
}

static int cpu_has_avx2(void)
{
#ifdef HAVE_AVX2_PATH
	__builtin_cpu_init();
	return !portable_only && __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

static inline uint32_t load3(const unsigned char *p)
{
	return ((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	        ((uint32_t)p[2] << 16)) |
	       0x202020u;
}

/* The four bytes at P, folded by setting bit 5 of each byte: exact for
 * ASCII letters, and a superset elsewhere ('[' and '{' collide), which is
 * all a filter needs: verification is exact. */
static inline uint32_t load4(const unsigned char *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x));
	return x | FOLD4;
}

static inline uint32_t hash(uint32_t gram, unsigned bits)
{
	return (gram * 0x9e3779b1u) >> (32 - bits);
}

/* Rough byte frequencies in training logs, case folded (per mille), for
 * choosing before any text has been seen. */
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

static uint64_t static_score(const unsigned char *t, size_t n)
{
	uint64_t s = 1;

	for (size_t i = 0; i < n; i++)
		s *= byte_weight(t[i]);
	return s;
}

void ga_prefilter_destroy(struct ga_prefilter *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->n_lits; i++)
		free(pf->lits[i].text);
	free(pf->lits);
	free(pf->short_ids);
	free(pf->entries);
	free(pf);
}

/* Counts of the folded 3- and 4-byte grams of a sample, by hash. */
struct counts {
	uint32_t *c3, *c4;
	double freq[256]; /* share of each folded byte */
	double len;       /* of the sample */
};

static uint64_t count_of(const uint32_t *c, uint32_t gram)
{
	return c ? c[hash(gram, COUNT_BITS)] : 0;
}

/* How many positions of the sample a bucket with nibble masks LO/HI
 * accepts: the sample's counts of every trigram the masks let through
 * (they accept every combination of the nibbles they hold, not only the
 * fingerprints put in).  Without a sample, or with too many combinations,
 * an estimate from byte frequencies, as if bytes were independent. */
static double bucket_cost(const struct counts *cnt, const uint16_t lo[FP],
                          const uint16_t hi[FP])
{
	unsigned char acc[FP][128];
	size_t n[FP];
	double p = 1;

	for (int j = 0; j < FP; j++) {
		double q = 0;

		n[j] = 0;
		/* input bytes are folded with bit 5 set */
		for (unsigned x = 0x20; x < 256; x = (x + 1) | 0x20) {
			if ((lo[j] >> (x & 15) & 1) &&
			    (hi[j] >> (x >> 4) & 1)) {
				acc[j][n[j]++] = (unsigned char)x;
				q += cnt->freq[x];
			}
		}
		p *= q;
	}
	if (cnt->c3 && n[0] * n[1] * n[2] <= 4096) {
		double sum = 0;

		for (size_t a = 0; a < n[0]; a++)
			for (size_t b = 0; b < n[1]; b++)
				for (size_t c = 0; c < n[2]; c++)
					sum += cnt->c3[hash(
					        (uint32_t)acc[0][a] |
					                ((uint32_t)acc[1][b]
					                 << 8) |
					                ((uint32_t)acc[2][c]
					                 << 16),
					        COUNT_BITS)];
		/* plus a little for the breadth: what the sample missed */
		return sum + p * cnt->len * 0.1;
	}
	return p * (cnt->c3 ? cnt->len : 1.0);
}

/* Choose the short literals' fingerprints and buckets. */
static int build_short(struct ga_prefilter *pf, const struct counts *cnt)
{
	uint16_t lo[BUCKETS][FP], hi[BUCKETS][FP];
	uint32_t *bucket_of;
	uint32_t fill[BUCKETS] = {0};

	memset(lo, 0, sizeof(lo));
	memset(hi, 0, sizeof(hi));
	memset(pf->nib, 0, sizeof(pf->nib));
	memset(pf->table, 0, sizeof(pf->table));
	memset(pf->bstart, 0, sizeof(pf->bstart));
	pf->short_back = 0;
	pf->n_short = 0;
	bucket_of = calloc(pf->n_lits + 1, sizeof(*bucket_of));
	if (!bucket_of)
		return -1;
	for (size_t i = 0; i < pf->n_lits; i++) {
		struct literal *l = &pf->lits[i];
		size_t b_best = 0;
		double c_best = HUGE_VAL;

		if (l->len > SHORT_MAX)
			continue;
		/* The fingerprint and bucket that let the fewest positions
		 * through: its own occurrences, and those of the nibble
		 * combinations it adds to the bucket. */
		for (size_t k = 0; k + FP <= l->len; k++) {
			for (size_t b = 0; b < BUCKETS; b++) {
				uint16_t tl[FP], th[FP];
				double c;

				for (int j = 0; j < FP; j++) {
					unsigned x = l->text[k + (size_t)j] |
					             0x20u;

					tl[j] = (uint16_t)(lo[b][j] |
					                   (1u << (x & 15)));
					th[j] = (uint16_t)(hi[b][j] |
					                   (1u << (x >> 4)));
				}
				c = bucket_cost(cnt, tl, th) -
				    bucket_cost(cnt, lo[b], hi[b]);
				if (c < c_best) {
					c_best = c;
					b_best = b;
					l->anchor = k;
				}
			}
		}
		if (l->anchor > pf->short_back)
			pf->short_back = l->anchor;
		for (int j = 0; j < FP; j++) {
			unsigned char x =
			        (unsigned char)(l->text[l->anchor + (size_t)j] |
			                        0x20);

			lo[b_best][j] = (uint16_t)(lo[b_best][j] |
			                           (1u << (x & 15)));
			hi[b_best][j] = (uint16_t)(hi[b_best][j] |
			                           (1u << (x >> 4)));
			pf->nib[j][0][x & 15] |= (uint8_t)(1u << b_best);
			pf->nib[j][1][x >> 4] |= (uint8_t)(1u << b_best);
			pf->table[j][x] |= (uint8_t)(1u << b_best);
		}
		bucket_of[i] = (uint32_t)b_best;
		pf->bstart[b_best + 1]++;
		pf->n_short++;
	}
	for (size_t b = 0; b < BUCKETS; b++)
		pf->bstart[b + 1] += pf->bstart[b];
	for (size_t i = 0; i < pf->n_lits; i++) {
		uint32_t b = bucket_of[i];

		if (pf->lits[i].len <= SHORT_MAX)
			pf->short_ids[pf->bstart[b] + fill[b]++] = (uint32_t)i;
	}
	free(bucket_of);
	return 0;
}

/* Choose the long literals' anchors and build the bitmap and buckets. */
static void build_long(struct ga_prefilter *pf, const struct counts *cnt)
{
	uint32_t fill[1u << BUCKET_BITS];
	size_t shortest = SIZE_MAX;

	memset(pf->bits, 0, sizeof(pf->bits));
	memset(pf->start, 0, sizeof(pf->start));
	memset(fill, 0, sizeof(fill));
	pf->long_back = 0;
	for (size_t i = 0; i < pf->n_lits; i++)
		if (pf->lits[i].len > SHORT_MAX && pf->lits[i].len < shortest)
			shortest = pf->lits[i].len;
	pf->n_long = 0;
	if (shortest == SIZE_MAX)
		return;
	pf->stride = shortest - Q + 1;
	if (pf->stride > STRIDE_MAX)
		pf->stride = STRIDE_MAX;
	for (size_t i = 0; i < pf->n_lits; i++) {
		struct literal *l = &pf->lits[i];
		uint64_t best = UINT64_MAX;

		if (l->len <= SHORT_MAX)
			continue;
		/* the window of STRIDE anchors with the lowest total score */
		for (size_t k = 0; k + Q + pf->stride - 1 <= l->len; k++) {
			uint64_t score = 0;

			for (size_t o = k; o < k + pf->stride; o++)
				score += static_score(l->text + o, Q) +
				         (count_of(cnt->c4, load4(l->text + o))
				          << 32);
			if (score < best) {
				best = score;
				l->anchor = k;
			}
		}
		if (l->anchor + pf->stride - 1 > pf->long_back)
			pf->long_back = l->anchor + pf->stride - 1;
		for (size_t o = l->anchor; o < l->anchor + pf->stride; o++) {
			uint32_t h = hash(load4(l->text + o), FILTER_BITS);

			pf->bits[h >> 3] |= (uint8_t)(1u << (h & 7));
			pf->start[(h >> (FILTER_BITS - BUCKET_BITS)) + 1]++;
		}
		pf->n_long++;
	}
	for (size_t b = 0; b < (1u << BUCKET_BITS); b++)
		pf->start[b + 1] += pf->start[b];
	for (size_t i = 0; i < pf->n_lits; i++) {
		const struct literal *l = &pf->lits[i];

		if (l->len <= SHORT_MAX)
			continue;
		for (size_t o = l->anchor; o < l->anchor + pf->stride; o++) {
			uint32_t b = hash(load4(l->text + o), FILTER_BITS) >>
			             (FILTER_BITS - BUCKET_BITS);
			struct entry *e =
			        &pf->entries[pf->start[b] + fill[b]++];

			e->lit = (uint32_t)i;
			e->anchor = (uint32_t)o;
		}
	}
}

static int build(struct ga_prefilter *pf, const struct counts *cnt)
{
	pf->simd = cpu_has_avx2();
	if (build_short(pf, cnt) < 0)
		return -1;
	build_long(pf, cnt);
	return 0;
}

static struct ga_prefilter *alloc(size_t n)
{
	struct ga_prefilter *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->lits = calloc(n, sizeof(*pf->lits));
	pf->short_ids = calloc(n, sizeof(*pf->short_ids));
	pf->entries = calloc(n * STRIDE_MAX, sizeof(*pf->entries));
	if (!pf->lits || !pf->short_ids || !pf->entries) {
		ga_prefilter_destroy(pf);
		return NULL;
	}
	return pf;
}

struct ga_prefilter *ga_prefilter_create_flags(const char *const *lits,
                                               const size_t *lens,
                                               const unsigned *flags, size_t n)
{
	static struct counts none;
	struct ga_prefilter *pf;

	if (n == 0 || n > UINT32_MAX / STRIDE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < GA_PREFILTER_MIN_LITERAL ||
		    lens[i] > UINT32_MAX / 2 ||
		    (flags && (flags[i] & ~(GA_PREFILTER_WORD_START |
		                            GA_PREFILTER_WORD_END)))) {
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
		pf->lits[i].flags = flags ? flags[i] : 0;
	}
	if (!none.freq[' ']) {
		double sum = 0;

		for (unsigned x = 0; x < 256; x++)
			sum += byte_weight((unsigned char)x);
		for (unsigned x = 0; x < 256; x++)
			none.freq[x | 0x20] += byte_weight((unsigned char)x) /
			                       sum;
	}
	if (build(pf, &none) < 0)
		goto nomem;
	return pf;
nomem:
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

	cnt.c3 = calloc(1u << COUNT_BITS, sizeof(*cnt.c3));
	cnt.c4 = calloc(1u << COUNT_BITS, sizeof(*cnt.c4));
	if (!t || !cnt.c3 || !cnt.c4)
		goto nomem;
	t->n_lits = pf->n_lits;
	for (size_t i = 0; i < pf->n_lits; i++) {
		t->lits[i].len = pf->lits[i].len;
		t->lits[i].flags = pf->lits[i].flags;
		t->lits[i].text = malloc(pf->lits[i].len);
		if (!t->lits[i].text)
			goto nomem;
		memcpy(t->lits[i].text, pf->lits[i].text, pf->lits[i].len);
	}
	for (size_t i = 0; i + Q <= len; i++) {
		uint32_t *c3 = &cnt.c3[hash(load3(s + i), COUNT_BITS)];
		uint32_t *c4 = &cnt.c4[hash(load4(s + i), COUNT_BITS)];

		if (*c3 < UINT32_MAX)
			(*c3)++;
		if (*c4 < UINT32_MAX)
			(*c4)++;
	}
	for (size_t i = 0; i < len; i++)
		hist[s[i] | 0x20]++;
	for (unsigned x = 0; x < 256; x++)
		cnt.freq[x] = len ? (double)hist[x] / (double)len : 0;
	cnt.len = (double)len;
	if (build(t, &cnt) < 0)
		goto nomem;
	free(cnt.c3);
	free(cnt.c4);
	return t;
nomem:
	free(cnt.c3);
	free(cnt.c4);
	ga_prefilter_destroy(t);
	errno = ENOMEM;
	return NULL;
}

/* Hits found but not reported yet: the searches meet literals in the
 * order of their fingerprints and anchors, callers want them in the order
 * of their starts. */
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

/* PCRE2's \w in byte mode without UCP. */
static inline int is_word(unsigned char c)
{
	unsigned char f = (unsigned char)(c | 0x20);

	return (f >= 'a' && f <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Literal I at START: verify it and queue the hit. */
static void accept(struct scan *sc, uint32_t i, size_t start)
{
	const struct literal *l = &sc->pf->lits[i];
	const unsigned char *t = sc->s + start;

	if (start < sc->floor || l->len > sc->len - start)
		return;
	for (size_t k = 0; k < l->len; k++)
		if (ga_fold(t[k]) != l->text[k])
			return;
	if ((l->flags & GA_PREFILTER_WORD_START) && start > 0 && is_word(t[-1]))
		return;
	if ((l->flags & GA_PREFILTER_WORD_END) && start + l->len < sc->len &&
	    is_word(t[l->len]))
		return;
	if (pending_add(&sc->pend, start, i) < 0) {
		/* Out of memory: report what we have, in order. */
		flush(sc, SIZE_MAX);
		if (pending_add(&sc->pend, start, i) < 0)
			sc->stop = 1;
	}
}

/* The short literals of the buckets in BUCKETS whose fingerprint may be
 * at text offset P. */
static void verify_short(struct scan *sc, size_t p, unsigned buckets)
{
	const struct ga_prefilter *pf = sc->pf;

	while (buckets) {
		unsigned b = (unsigned)__builtin_ctz(buckets);

		buckets &= buckets - 1;
		for (uint32_t e = pf->bstart[b]; e < pf->bstart[b + 1]; e++) {
			uint32_t i = pf->short_ids[e];
			size_t k = pf->lits[i].anchor;

			if (p >= k)
				accept(sc, i, p - k);
		}
	}
}

/* The long literals whose anchor hash matches the text at offset P. */
static void verify_long(struct scan *sc, size_t p)
{
	const struct ga_prefilter *pf = sc->pf;
	uint32_t b = hash(load4(sc->s + p), FILTER_BITS) >>
	             (FILTER_BITS - BUCKET_BITS);

	for (uint32_t e = pf->start[b]; e < pf->start[b + 1]; e++) {
		size_t anchor = pf->entries[e].anchor;

		if (p >= anchor)
			accept(sc, pf->entries[e].lit, p - anchor);
	}
}

#ifdef HAVE_AVX2_PATH
/* Fingerprint positions P.. before TO, 32 at a time while 34 bytes can be
 * read; returns where it stopped. */
__attribute__((target("avx2"))) static size_t short_avx2(struct scan *sc,
                                                         size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const __m256i low = _mm256_set1_epi8(0x0f),
	              fold = _mm256_set1_epi8(0x20);
	__m256i m[FP][2];

	for (int j = 0; j < FP; j++)
		for (int h = 0; h < 2; h++)
			m[j][h] = _mm256_broadcastsi128_si256(_mm_loadu_si128(
			        (const __m128i *)pf->nib[j][h]));
	while (p < to && p + 32 + FP - 1 <= sc->len && !sc->stop) {
		__m256i r = _mm256_set1_epi8(-1);
		uint32_t mask;

		for (int j = 0; j < FP; j++) {
			__m256i x = _mm256_or_si256(
			        _mm256_loadu_si256(
			                (const __m256i *)(sc->s + p +
			                                  (size_t)j)),
			        fold);
			__m256i lo = _mm256_and_si256(x, low);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4),
			                              low);

			r = _mm256_and_si256(
			        r, _mm256_and_si256(
			                   _mm256_shuffle_epi8(m[j][0], lo),
			                   _mm256_shuffle_epi8(m[j][1], hi)));
		}
		mask = ~(uint32_t)_mm256_movemask_epi8(
		        _mm256_cmpeq_epi8(r, _mm256_setzero_si256()));
		if (to - p < 32)
			mask &= (1u << (to - p)) - 1;
		if (mask) {
			uint8_t v[32];

			_mm256_storeu_si256((__m256i *)v, r);
			while (mask) {
				unsigned j = (unsigned)__builtin_ctz(mask);

				mask &= mask - 1;
				verify_short(sc, p + j, v[j]);
			}
		}
		p += 32;
	}
	return p < to ? p : to;
}
#endif

/* Fingerprint positions P.. before TO. */
static void scan_short(struct scan *sc, size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const unsigned char *s = sc->s;

#ifdef HAVE_AVX2_PATH
	if (pf->simd)
		p = short_avx2(sc, p, to);
#endif
	for (; p < to && p + FP <= sc->len; p++) {
		unsigned r = pf->table[0][s[p] | 0x20] &
		             pf->table[1][s[p + 1] | 0x20] &
		             pf->table[2][s[p + 2] | 0x20];

		if (r)
			verify_short(sc, p, r);
	}
}

/* Nonzero when the bitmap has the hash of the four bytes at P.  No
 * variable shift: those cost several cycles on some CPUs. */
static inline unsigned probe(const uint8_t *bits, const unsigned char *p)
{
	static const uint8_t bit[8] = {1, 2, 4, 8, 16, 32, 64, 128};
	uint32_t h = hash(load4(p), FILTER_BITS);

	return bits[h >> 3] & bit[h & 7];
}

#ifdef HAVE_AVX2_PATH
/* Eight probes at a time with AVX2 gathers, while they fit before the
 * text's end; returns where it stopped. */
__attribute__((target("avx2"))) static size_t long_avx2(struct scan *sc,
                                                        size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const int st = (int)pf->stride;
	const __m256i idx = _mm256_setr_epi32(0, st, 2 * st, 3 * st, 4 * st,
	                                      5 * st, 6 * st, 7 * st);
	const __m256i fold = _mm256_set1_epi32((int)FOLD4),
	              mul = _mm256_set1_epi32((int)0x9e3779b1u),
	              seven = _mm256_set1_epi32(7);

	while (p < to && p + 7 * pf->stride + Q <= sc->len && !sc->stop) {
		__m256i g = _mm256_or_si256(
		        _mm256_i32gather_epi32((const int *)(sc->s + p), idx,
		                               1),
		        fold);
		__m256i h = _mm256_srli_epi32(_mm256_mullo_epi32(g, mul),
		                              32 - FILTER_BITS);
		__m256i w = _mm256_i32gather_epi32((const int *)pf->bits,
		                                   _mm256_srli_epi32(h, 3), 1);
		__m256i bit = _mm256_slli_epi32(
		        _mm256_srlv_epi32(w, _mm256_and_si256(h, seven)), 31);
		unsigned mask = (unsigned)_mm256_movemask_ps(
		        _mm256_castsi256_ps(bit));

		while (mask) {
			unsigned j = (unsigned)__builtin_ctz(mask);

			mask &= mask - 1;
			verify_long(sc, p + j * pf->stride);
		}
		p += 8 * pf->stride;
	}
	return p;
}
#endif

/* Probe positions P, P + stride, ... until TO; returns the next probe
 * position, or the text's length when no probe fits any more. */
static size_t scan_long(struct scan *sc, size_t p, size_t to)
{
	const struct ga_prefilter *pf = sc->pf;
	const size_t st = pf->stride;

#ifdef HAVE_AVX2_PATH
	if (pf->simd)
		p = long_avx2(sc, p, to);
#endif

	/* Eight probes at a time: they are independent, so the CPU overlaps
	 * their loads. */
	while (p < to && p + 7 * st + Q <= sc->len) {
		const unsigned char *b = sc->s + p;
		unsigned mask = 0;

#pragma GCC unroll 8
		for (unsigned j = 0; j < 8; j++)
			mask |= (unsigned)(probe(pf->bits, b + j * st) != 0)
			        << j;
		while (mask) {
			unsigned j = (unsigned)__builtin_ctz(mask);

			mask &= mask - 1;
			verify_long(sc, p + j * st);
		}
		p += 8 * st;
	}
	for (; p < to && p + Q <= sc->len; p += st)
		if (probe(pf->bits, sc->s + p))
			verify_long(sc, p);
	return p + Q <= sc->len ? p : sc->len;
}

void ga_prefilter_scan(const struct ga_prefilter *pf, const char *data,
                       size_t len, ga_prefilter_hit_fn on_hit, void *ctx)
{
	struct scan sc = {pf,  (const unsigned char *)data,
	                  len, on_hit,
	                  ctx, {NULL, 0, 0},
	                  0,   0};
	size_t back = pf->short_back > pf->long_back ? pf->short_back
	                                             : pf->long_back;
	/* the next position each search looks at */
	size_t at_short = pf->n_short ? 0 : len, at_long = pf->n_long ? 0 : len;

	if (len < GA_PREFILTER_MIN_LITERAL)
		return;
	while (!sc.stop) {
		size_t lo = at_short < at_long ? at_short : at_long, end;

		if (lo >= len)
			break;
		end = len - lo > CHUNK ? lo + CHUNK : len;
		if (at_short < end) {
			scan_short(&sc, at_short, end);
			at_short = end;
		}
		if (at_long < end)
			at_long = scan_long(&sc, at_long, end);
		/* Every hit starting before lo - back has been found. */
		lo = at_short < at_long ? at_short : at_long;
		if (sc.pend.n && lo > back)
			flush(&sc, lo - back);
		if (sc.floor > at_short)
			at_short = sc.floor;
		if (sc.floor > at_long)
			at_long = sc.floor;
	}
	flush(&sc, SIZE_MAX);
	free(sc.pend.v);
}
