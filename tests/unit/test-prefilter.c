/* The multi-literal prefilter against a naive search. */
#include "prefilter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tap.h"

struct hits {
	struct ga_buf b; /* "pos:lit," for every hit */
	size_t count;
};

static size_t on_hit(void *ctx, size_t pos, size_t lit)
{
	struct hits *h = ctx;

	ga_buf_printf(&h->b, "%zu:%zu,", pos, lit);
	h->count++;
	return pos + 1;
}

/* Every occurrence, by start offset, then by literal index. */
static void naive(char **lits, const size_t *lens, size_t n, const char *text,
                  size_t len, struct hits *h)
{
	for (size_t pos = 0; pos < len; pos++) {
		for (size_t k = 0; k < n; k++) {
			size_t j;

			if (lens[k] > len - pos)
				continue;
			for (j = 0; j < lens[k]; j++)
				if (ga_fold((unsigned char)text[pos + j]) !=
				    ga_fold((unsigned char)lits[k][j]))
					break;
			if (j == lens[k]) {
				ga_buf_printf(&h->b, "%zu:%zu,", pos, k);
				h->count++;
			}
		}
	}
}

/* Within one start offset the prefilter may report literals in another
 * order: sort each "pos:" group. */
static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static char *canonical(const char *s)
{
	struct ga_buf out;
	size_t pairs[2048][2], n = 0;

	ga_buf_init(&out);
	while (*s && n < 2048) {
		char *end;

		pairs[n][0] = strtoul(s, &end, 10);
		pairs[n][1] = strtoul(end + 1, &end, 10);
		s = end + 1;
		n++;
	}
	/* sort by (pos, lit): pos is already increasing */
	for (size_t i = 0; i < n;) {
		size_t j = i, lits[2048], m = 0;

		while (j < n && pairs[j][0] == pairs[i][0])
			lits[m++] = pairs[j++][1];
		qsort(lits, m, sizeof(lits[0]), cmp_size);
		for (size_t k = 0; k < m; k++)
			ga_buf_printf(&out, "%zu:%zu,", pairs[i][0], lits[k]);
		i = j;
	}
	if (*s)
		ga_buf_puts(&out, "TRUNCATED");
	return ga_buf_steal(&out);
}

static void test_basics(void)
{
	const char *lits[] = {"abcd", "BCDEF", "xyz!"};
	size_t lens[] = {4, 5, 4};
	struct ga_prefilter *pf;
	struct hits h;

	errno = 0;
	ok(ga_prefilter_create(lits, lens, 0) == NULL && errno == EINVAL,
	   "no literals: EINVAL");
	lens[2] = 3;
	errno = 0;
	ok(ga_prefilter_create(lits, lens, 3) == NULL && errno == EINVAL,
	   "a literal shorter than 4: EINVAL");
	lens[2] = 4;
	pf = ga_prefilter_create(lits, lens, 3);
	ok(pf != NULL, "create");
	if (!pf)
		return;
	ga_buf_init(&h.b);
	h.count = 0;
	ga_prefilter_scan(pf, "xxABCDEFyz xyz! abc", 19, on_hit, &h);
	is_str(h.b.data, "2:0,3:1,11:2,", "hits in order, case folded");
	ga_buf_reset(&h.b);
	ga_prefilter_scan(pf, "abc", 3, on_hit, &h);
	ga_prefilter_scan(pf, "", 0, on_hit, &h);
	ga_prefilter_scan(pf, "abcdabcd", 7, on_hit, &h);
	is_str(h.b.data ? h.b.data : "", "0:0,", "never across LEN");
	ga_buf_finish(&h.b);
	ga_prefilter_destroy(pf);
	ga_prefilter_destroy(NULL);
}

/* Skipping ahead from the callback. */
static size_t skip_to(void *ctx, size_t pos, size_t lit)
{
	struct hits *h = ctx;

	ga_buf_printf(&h->b, "%zu:%zu,", pos, lit);
	return pos + 4;
}

/* Resume one byte before the end: the scan must not read past it. */
static size_t to_last_byte(void *ctx, size_t pos, size_t lit)
{
	struct hits *h = ctx;

	ga_buf_printf(&h->b, "%zu:%zu,", pos, lit);
	return h->count; /* the text length minus one, set by caller */
}

static size_t stop_now(void *ctx, size_t pos, size_t lit)
{
	struct hits *h = ctx;

	ga_buf_printf(&h->b, "%zu:%zu,", pos, lit);
	return SIZE_MAX;
}

static void test_resume(void)
{
	const char *lits[] = {"aaaa"};
	size_t lens[] = {4};
	struct ga_prefilter *pf = ga_prefilter_create(lits, lens, 1);
	struct hits h;

	ga_buf_init(&h.b);
	ga_prefilter_scan(pf, "aaaaaaaaaa", 10, skip_to, &h);
	is_str(h.b.data, "0:0,4:0,", "resume past the hit");
	ga_buf_reset(&h.b);
	ga_prefilter_scan(pf, "aaaaaaaaaa", 10, stop_now, &h);
	is_str(h.b.data, "0:0,", "stop");
	ga_buf_reset(&h.b);
	ga_prefilter_scan(pf, "aaaaaa", 6, on_hit, &h);
	is_str(h.b.data, "0:0,1:0,2:0,", "overlapping occurrences");
	ga_buf_reset(&h.b);
	{
		/* exactly sized heap copy, so ASan sees any overread */
		char *t = strdup("aaaaxyzw");

		h.count = 7;
		ga_prefilter_scan(pf, t, 8, to_last_byte, &h);
		is_str(h.b.data, "0:0,",
		       "resume at the last byte: no overread");
		free(t);
	}
	ga_buf_finish(&h.b);
	ga_prefilter_destroy(pf);
}

/* Random literal sets over small alphabets (so that they occur), random
 * texts, compared with the naive search.  Fixed seed. */
static void test_property(void)
{
	struct tap_rng rng = {20240611};
	static const char alpha[] = "abAB \x01\xff\x80-zZ";
	int bad = 0, cases = 0;
	size_t total_hits = 0;

	for (int round = 0; round < 3000; round++) {
		size_t n = 1 + tap_below(&rng, round % 10 == 0 ? 60 : 6);
		size_t asz = 2 + tap_below(&rng, sizeof(alpha) - 3);
		char *lits[64];
		size_t lens[64];
		char text[600];
		size_t len = tap_below(&rng, sizeof(text));
		struct ga_prefilter *pf;
		struct hits got, want;
		char *cg, *cw;

		for (size_t k = 0; k < n; k++) {
			lens[k] = GA_PREFILTER_MIN_LITERAL +
			          tap_below(&rng, round % 7 == 0 ? 300 : 6);
			lits[k] = malloc(lens[k]);
			for (size_t j = 0; j < lens[k]; j++)
				lits[k][j] = alpha[tap_below(&rng, asz)];
		}
		for (size_t j = 0; j < len; j++)
			text[j] = alpha[tap_below(&rng, asz)];
		/* plant some literals, in random case */
		for (int p = 0; p < 3 && len; p++) {
			size_t k = tap_below(&rng, n),
			       at = tap_below(&rng, len);

			for (size_t j = 0; j < lens[k] && at + j < len; j++) {
				char c = lits[k][j];

				if (tap_below(&rng, 2) && c >= 'a' && c <= 'z')
					c = (char)(c - 32);
				else if (tap_below(&rng, 2) && c >= 'A' &&
				         c <= 'Z')
					c = (char)(c + 32);
				text[at + j] = c;
			}
		}
		pf = ga_prefilter_create((const char *const *)lits, lens, n);
		ga_buf_init(&got.b);
		ga_buf_init(&want.b);
		got.count = want.count = 0;
		if (pf)
			ga_prefilter_scan(pf, text, len, on_hit, &got);
		naive(lits, lens, n, text, len, &want);
		cg = canonical(got.b.data ? got.b.data : "");
		cw = canonical(want.b.data ? want.b.data : "");
		cases++;
		total_hits += want.count;
		if (!pf || strcmp(cg, cw)) {
			if (bad++ < 3)
				is_str(cg, cw,
				       "round %d: %zu literals, %zu bytes",
				       round, n, len);
		}
		free(cg);
		free(cw);
		ga_buf_finish(&got.b);
		ga_buf_finish(&want.b);
		ga_prefilter_destroy(pf);
		for (size_t k = 0; k < n; k++)
			free(lits[k]);
	}
	is_int(bad, 0, "%d random cases agree with the naive search", cases);
	ok(total_hits > 10000, "... and they have hits (%zu)", total_hits);
}

int main(void)
{
	test_basics();
	test_resume();
	test_property();
	return tap_done();
}
