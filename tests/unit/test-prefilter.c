/* SPDX-License-Identifier: MIT */
/* The multi-literal prefilter against a naive search, and the classifier
 * with its prefilter against matching every line, on random rule sets. */
#include "prefilter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "classifier.h"
#include "log.h"
#include "rules.h"
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

static int word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* Every occurrence, by start offset, then by literal index; FLAGS (may be
 * NULL) as ga_prefilter_create_flags takes them. */
static void naive(char **lits, const size_t *lens, const unsigned *flags,
                  size_t n, const char *text, size_t len, struct hits *h)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t pos = 0; pos < len; pos++) {
		for (size_t k = 0; k < n; k++) {
			size_t j;

			if (lens[k] > len - pos)
				continue;
			for (j = 0; j < lens[k]; j++)
				if (flags && (flags[k] & GA_PREFILTER_CASE)
				            ? s[pos + j] !=
				                      (unsigned char)lits[k][j]
				            : ga_fold(s[pos + j]) !=
				                      ga_fold((unsigned char)
				                                      lits[k]
				                                          [j]))
					break;
			if (j < lens[k])
				continue;
			if (flags && (flags[k] & GA_PREFILTER_WORD_START) &&
			    pos > 0 && word(s[pos - 1]))
				continue;
			if (flags && (flags[k] & GA_PREFILTER_WORD_END) &&
			    pos + lens[k] < len && word(s[pos + lens[k]]))
				continue;
			ga_buf_printf(&h->b, "%zu:%zu,", pos, k);
			h->count++;
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
	static size_t pairs[16384][2];
	size_t n = 0;

	ga_buf_init(&out);
	while (*s && n < 16384) {
		char *end;

		pairs[n][0] = strtoul(s, &end, 10);
		pairs[n][1] = strtoul(end + 1, &end, 10);
		s = end + 1;
		n++;
	}
	/* sort by (pos, lit): pos is already increasing */
	for (size_t i = 0; i < n;) {
		size_t j = i, m = 0;
		static size_t lits[16384];

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

/* Search TEXT with PF, then with PF tuned on SAMPLE, each with the
 * vector code and with the portable code; returns the first result that
 * differs from WANT (allocated), or NULL. */
static char *search_all(const struct ga_prefilter *pf, const char *text,
                        size_t len, const char *sample, size_t slen,
                        const char *want, const char **which)
{
	static const char *const names[] = {"vector", "portable",
	                                    "tuned, vector", "tuned, portable"};

	for (int v = 0; v < 4; v++) {
		struct ga_prefilter *tuned = NULL;
		const struct ga_prefilter *use = pf;
		struct hits got;
		char *cg;

		ga_prefilter_force_portable(v & 1);
		if (v >= 2) {
			tuned = ga_prefilter_tune(pf, sample, slen);
			use = tuned;
		} else if (v == 1) {
			/* the portable code reads the choice made at build */
			tuned = ga_prefilter_tune(pf, "", 0);
			use = tuned;
		}
		ga_buf_init(&got.b);
		got.count = 0;
		if (use)
			ga_prefilter_scan(use, text, len, on_hit, &got);
		cg = canonical(got.b.data ? got.b.data : "");
		ga_buf_finish(&got.b);
		ga_prefilter_destroy(tuned);
		if (!use || strcmp(cg, want)) {
			ga_prefilter_force_portable(0);
			*which = names[v];
			return cg;
		}
		free(cg);
	}
	ga_prefilter_force_portable(0);
	return NULL;
}

/* Random literal sets over small alphabets (so that they occur), random
 * texts (some long, across the search's internal chunks), random word
 * boundary and case flags, twins; compared with the naive search, by every code path.
 * Fixed seed. */
static void test_property(void)
{
	struct tap_rng rng = {20240611};
	static const char alpha[] = "abAB \x01\xff\x80-zZ_9";
	int bad = 0, cases = 0;
	size_t total_hits = 0, bounded = 0;
	/* more than the 8 KiB the vector search takes between flushes */
	static char text[20000];

	for (int round = 0; round < 3000; round++) {
		size_t n = 1 + tap_below(&rng, round % 10 == 0 ? 60 : 6);
		size_t asz = 2 + tap_below(&rng, sizeof(alpha) - 3);
		char *lits[64];
		size_t lens[64];
		unsigned flags[64];
		size_t len = tap_below(&rng,
		                       round % 50 == 0 ? sizeof(text) : 600);
		struct ga_prefilter *pf;
		struct hits want;
		char *cw, *cg;
		const char *which = "";
		bool with_flags = round % 3 == 0;

		for (size_t k = 0; k < n; k++) {
			lens[k] = GA_PREFILTER_MIN_LITERAL +
			          tap_below(&rng, round % 7 == 0 ? 300 : 6);
			lits[k] = malloc(lens[k]);
			for (size_t j = 0; j < lens[k]; j++)
				lits[k][j] = alpha[tap_below(&rng, asz)];
			flags[k] = with_flags ? (unsigned)tap_below(&rng, 8)
			                      : 0;
			/* twins: the same literal for another rule, with the
			 * same flags or others */
			if (k > 0 && tap_below(&rng, 4) == 0) {
				size_t o = tap_below(&rng, k);

				free(lits[k]);
				lens[k] = lens[o];
				lits[k] = malloc(lens[k]);
				memcpy(lits[k], lits[o], lens[k]);
				if (tap_below(&rng, 2))
					flags[k] = flags[o];
			}
		}
		for (size_t j = 0; j < len; j++)
			text[j] = alpha[tap_below(&rng, asz)];
		/* plant some literals, in random case */
		for (int p = 0; p < 3 + (int)(len / 200) && len; p++) {
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
		pf = ga_prefilter_create_flags((const char *const *)lits, lens,
		                               with_flags ? flags : NULL, n);
		ga_buf_init(&want.b);
		want.count = 0;
		naive(lits, lens, with_flags ? flags : NULL, n, text, len,
		      &want);
		cw = canonical(want.b.data ? want.b.data : "");
		/* tuned on the text itself, or on a part of it */
		cg = search_all(pf, text, len, text + len / 3, len - len / 3,
		                cw, &which);
		cases++;
		total_hits += want.count;
		if (with_flags)
			bounded += want.count;
		if (cg) {
			if (bad++ < 3)
				is_str(cg, cw,
				       "round %d: %zu literals, %zu bytes, %s",
				       round, n, len, which);
			free(cg);
		}
		free(cw);
		ga_buf_finish(&want.b);
		ga_prefilter_destroy(pf);
		for (size_t k = 0; k < n; k++)
			free(lits[k]);
	}
	is_int(bad, 0,
	       "%d random cases agree with the naive search (vector, "
	       "portable, tuned)",
	       cases);
	ok(total_hits > 10000, "... and they have hits (%zu)", total_hits);
	ok(bounded > 1000, "... %zu of them with word boundaries", bounded);
	{
		const char *lits[] = {"abcd"};
		size_t lens[] = {4};
		unsigned bad_flag[] = {8};

		errno = 0;
		ok(ga_prefilter_create_flags(lits, lens, bad_flag, 1) == NULL &&
		           errno == EINVAL,
		   "an unknown flag: EINVAL");
	}
}

/* ---- the classifier's prefilter never drops a line a rule matches ---- */

static const char *const vocab[] = {
        "loss", "nan",      "inf",  "INFO",      "Error",   "error",
        "grad", "norm",     "NCCL", "WARN",      "timeout", "Killed",
        "ab",   "cdefg",    "xyz",  "exception", "found",   "rank0",
        "step", "Detected", "OOM",  "memory",    "out",     "of"};
static const char *const seps[] = {" ",  ": ", "=", "(",  "_", "",
                                   "\t", ", ", "'", " -", ":", ""};

/* A random rule over the vocabulary, into RULE: a pattern, and for some
 * shapes "literal =" lines that every match provably contains. */
static void random_rule(struct tap_rng *rng, struct ga_buf *rule, int id)
{
	const char *a = vocab[tap_below(rng, 24)],
	           *b = vocab[tap_below(rng, 24)],
	           *c = vocab[tap_below(rng, 24)];
	const char *ci = tap_below(rng, 2) ? "(?i)" : "";

	ga_buf_printf(rule, "[rule r%d]\nclass = %s\npriority = %d\n", id,
	              tap_below(rng, 2) ? "nan" : "code_error",
	              (int)tap_below(rng, 100));
	switch (tap_below(rng, 9)) {
	case 0: /* a phrase: the literal is derived */
		ga_buf_printf(rule, "match = %s%s %s\n", ci, a, b);
		break;
	case 1: /* alternation: one literal per branch */
		ga_buf_printf(rule, "match = %s%s %s|%s%s\n", ci, a, c, b, a);
		break;
	case 2: /* short branches: no literal of 4 bytes, or a derived one
	         * after the group */
		ga_buf_printf(rule, "match = %s(ab|of|%s)%s\n", ci, a, b);
		break;
	case 3: /* word boundaries in the pattern */
		ga_buf_printf(rule, "match = %s\\b%s\\b.*%s\n", ci, a, c);
		break;
	case 4: /* the nan.loss shape, with boundary literals */
		ga_buf_printf(rule,
		              "match = %s(loss|grad)['\"]?\\s*[:=]?\\s*\\(?"
		              "(nan|inf)\\b\n",
		              ci);
		ga_buf_puts(rule, "literal = \"loss\"\nliteral = grad\n");
		break;
	case 5: /* explicit literals with \b on both ends */
		ga_buf_printf(rule, "match = %s\\b(loss|grad) (nan|inf)\\b\n",
		              ci);
		ga_buf_puts(rule, "literal = \\bloss nan\\b\n"
		                  "literal = \\bloss inf\\b\n"
		                  "literal = \\bgrad nan\\b\n"
		                  "literal = \\bgrad inf\\b\n");
		break;
	case 6: /* a caseless rule given by key, a short literal */
		ga_buf_printf(rule, "caseless = yes\nmatch = %s\\d*%s\n", a, b);
		break;
	case 7: /* a classic: the literal in the middle of the pattern */
		ga_buf_printf(rule, "match = ^.*%s[^ ]*%s\n", a, b);
		break;
	default: /* explicit literal: the detected shape */
		ga_buf_printf(rule, "match = (?i)(detected|found) (nan|inf) "
		                    "(in|at)\n");
		ga_buf_puts(rule, "literal = detected nan\n"
		                  "literal = detected inf\n"
		                  "literal = found nan\nliteral = found inf\n");
		break;
	}
	ga_buf_puts(rule, "exit = any\n");
}

static char *state_of(const struct ga_ruleset *rs, const char *log, size_t len,
                      bool expect)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	struct ga_buf out;

	ga_buf_init(&out);
	/* a known length under the tuning threshold: the ruleset's own
	 * literals all the way */
	if (expect)
		ga_classifier_expect(c, len);
	/* in pieces, as a pipe delivers it */
	for (size_t off = 0; off < len; off += 70000)
		ga_classifier_feed(c, log + off,
		                   len - off < 70000 ? len - off : 70000);
	ga_classifier_write_state(c, &out);
	ga_classifier_destroy(c);
	return ga_buf_steal(&out);
}

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

/* How many segments (text between '\n' and '\r') of LOG rule I of RS
 * matches, by PCRE2 on every segment. */
static uint64_t reference_count(const struct ga_ruleset *rs, size_t i,
                                struct ga_matcher *m, const char *log,
                                size_t len)
{
	uint64_t n = 0;

	for (size_t s = 0; s < len;) {
		size_t e = s;

		while (e < len && log[e] != '\n' && log[e] != '\r')
			e++;
		n += ga_rule_match(ga_ruleset_rule(rs, i), m, log + s, e - s) ==
		     1;
		s = e + 1;
	}
	return n;
}

/* The buckets a literal lands in must not depend on where it stands in
 * the rule files: the same literals in another order accept the same
 * positions, tuned to a sample and untuned. */
static void test_order(void)
{
	struct tap_rng rng = {20261205};
	static const char alpha[] =
	        "abcdefghijklmnopqrstuvwxyzCDEINORU _:.0123";
	enum { N = 120, LEN = 1 << 16 };
	static char text[LEN];
	char *lits[N], *perm[N];
	size_t lens[N], plens[N], idx[N];
	unsigned flags[N], pflags[N];
	struct ga_prefilter_cost untuned0 = {0, 0}, tuned0 = {0, 0};
	int differ = 0;

	for (size_t k = 0; k < N; k++) {
		lens[k] = GA_PREFILTER_MIN_LITERAL + tap_below(&rng, 10);
		lits[k] = malloc(lens[k]);
		for (size_t j = 0; j < lens[k]; j++)
			lits[k][j] = alpha[tap_below(&rng, sizeof(alpha) - 1)];
		flags[k] = (unsigned)tap_below(&rng, 8);
		if (k > 0 && tap_below(&rng, 8) == 0) { /* a twin */
			size_t o = tap_below(&rng, k);

			free(lits[k]);
			lens[k] = lens[o];
			lits[k] = malloc(lens[k]);
			memcpy(lits[k], lits[o], lens[k]);
			flags[k] = flags[o];
		}
	}
	/* log-like text: words from a small vocabulary, so that some
	 * three-byte windows are common and others rare, between random
	 * bytes of the literals' alphabet */
	for (size_t j = 0; j < LEN;) {
		static const char *const line_words[] = {
		        "INFO ",  "step ",   "loss ",     "0.123 ", "NCCL ",
		        "epoch ", "rank0: ", "Warning: ", "cuda ",  "\n"};
		const char *w = line_words[tap_below(&rng, 10)];

		for (; *w && j < LEN; w++)
			text[j++] = *w;
		for (size_t r = tap_below(&rng, 6); r > 0 && j < LEN; r--)
			text[j++] = alpha[tap_below(&rng, sizeof(alpha) - 1)];
	}
	for (int round = 0; round < 6; round++) {
		struct ga_prefilter *pf, *tuned;
		struct ga_prefilter_cost untuned_n, tuned_n;

		/* round 0: as generated; then shuffled */
		for (size_t k = 0; k < N; k++)
			idx[k] = k;
		for (size_t k = N - 1; round > 0 && k > 0; k--) {
			size_t o = tap_below(&rng, k + 1), t = idx[k];

			idx[k] = idx[o];
			idx[o] = t;
		}
		for (size_t k = 0; k < N; k++) {
			perm[k] = lits[idx[k]];
			plens[k] = lens[idx[k]];
			pflags[k] = flags[idx[k]];
		}
		pf = ga_prefilter_create_flags((const char *const *)perm, plens,
		                               pflags, N);
		tuned = pf ? ga_prefilter_tune(pf, text, LEN / 4) : NULL;
		if (!tuned) {
			ok(0, "prefilter for the order test");
			ga_prefilter_destroy(pf);
			break;
		}
		untuned_n = ga_prefilter_cost(pf, text, LEN);
		tuned_n = ga_prefilter_cost(tuned, text, LEN);
		if (round == 0) {
			untuned0 = untuned_n;
			tuned0 = tuned_n;
		} else if (untuned_n.buckets != untuned0.buckets ||
		           untuned_n.words != untuned0.words ||
		           tuned_n.buckets != tuned0.buckets ||
		           tuned_n.words != tuned0.words) {
			differ++;
			diag("order %d: untuned %zu/%zu (first %zu/%zu), "
			     "tuned %zu/%zu (first %zu/%zu)",
			     round, untuned_n.buckets, untuned_n.words,
			     untuned0.buckets, untuned0.words, tuned_n.buckets,
			     tuned_n.words, tuned0.buckets, tuned0.words);
		}
		ga_prefilter_destroy(tuned);
		ga_prefilter_destroy(pf);
	}
	is_int(differ, 0,
	       "%d literals in 6 orders: the same positions accepted by the "
	       "buckets and kept by the bit table (untuned %zu/%zu, tuned "
	       "%zu/%zu of %d)",
	       N, untuned0.buckets, untuned0.words, tuned0.buckets,
	       tuned0.words, LEN);
	ok(tuned0.buckets < untuned0.buckets,
	   "... and tuning to the text accepts fewer");
	ok(tuned0.words <= tuned0.buckets && untuned0.words <= untuned0.buckets,
	   "... and the bit table keeps at most what the buckets accept");
	for (size_t k = 0; k < N; k++)
		free(lits[k]);
}

/* Random rule sets (derived and explicit literals, alternations, (?i),
 * caseless, short literals, \b) classify random logs exactly as PCRE2 run
 * on every line: the same number of matching lines for every rule.  Logs
 * over 64 KiB make the classifier tune its prefilter, unless it was told
 * their (short) length first, as every eighth is. */
static void test_rules_property(void)
{
	struct tap_rng rng = {77};
	struct ga_matcher *m = ga_matcher_create();
	int bad = 0, sets = 0;
	uint64_t matched = 0;

	ga_log_set_sink(quiet, NULL);
	for (int round = 0; round < 80; round++) {
		struct ga_buf rules, log;
		struct ga_rules_source src;
		struct ga_ruleset *rs;
		size_t n_rules = 1 + tap_below(&rng, 12);
		size_t n_lines = round % 4 == 0 ? 3000 : 300;
		char *state;

		ga_buf_init(&rules);
		for (size_t i = 0; i < n_rules; i++)
			random_rule(&rng, &rules, (int)i);
		src.name = "r.rules";
		src.text = rules.data;
		rs = ga_rules_load_sources(&src, 1, false, NULL);
		/* no rank prefixes or control characters: the classifier
		 * would match the line without them */
		ga_buf_init(&log);
		for (size_t l = 0; l < n_lines; l++) {
			size_t words = 1 + tap_below(&rng, 8);

			for (size_t w = 0; w < words; w++) {
				const char *v = vocab[tap_below(&rng, 24)];

				ga_buf_puts(&log, seps[tap_below(&rng, 12)]);
				if (tap_below(&rng, 4) == 0) {
					/* in another case */
					for (const char *p = v; *p; p++)
						ga_buf_putc(
						        &log,
						        (char)(*p ^
						               (((*p | 32) >=
						                         'a' &&
						                 (*p | 32) <=
						                         'z')
						                        ? 32
						                        : 0)));
				} else {
					ga_buf_puts(&log, v);
				}
				if (tap_below(&rng, 6) == 0)
					ga_buf_printf(&log, "%d",
					              (int)tap_below(&rng, 99));
			}
			ga_buf_putc(&log, tap_below(&rng, 10) ? '\n' : '\r');
		}
		if (!rs || !m) {
			ok(false, "round %d: rules load", round);
			diag("%s", rules.data);
			bad++;
			goto next;
		}
		state = state_of(rs, log.data, log.len, round % 8 == 4);
		sets++;
		for (size_t i = 0; i < ga_ruleset_size(rs); i++) {
			const char *id = ga_rule_id(ga_ruleset_rule(rs, i));
			uint64_t want = reference_count(rs, i, m, log.data,
			                                log.len),
			         got = 0;
			char key[80];
			const char *at;

			snprintf(key, sizeof(key),
			         "{\"id\":\"%s\",\"count\":", id);
			at = strstr(state, key);
			if (at)
				got = strtoull(at + strlen(key), NULL, 10);
			matched += want;
			if (got != want && bad++ < 3) {
				is_int((long long)got, (long long)want,
				       "round %d, rule %s: lines matched",
				       round, id);
				diag("%s", rules.data);
			}
		}
		free(state);
	next:
		ga_ruleset_destroy(rs);
		ga_buf_finish(&rules);
		ga_buf_finish(&log);
	}
	ga_matcher_destroy(m);
	is_int(bad, 0,
	       "%d random rule sets: every line a rule matches is found", sets);
	ok(matched > 500, "... and the rules matched (%llu lines)",
	   (unsigned long long)matched);
}

int main(void)
{
	test_basics();
	test_resume();
	test_property();
	test_order();
	test_rules_property();
	return tap_done();
}
