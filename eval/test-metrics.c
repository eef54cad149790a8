/* SPDX-License-Identifier: MIT */
/* Unit tests (TAP) of the evaluation's metrics and baselines. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "log.h"
#include "util.h"

static int n_test, n_fail;

static void ok(int cond, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	if (!cond)
		n_fail++;
	printf("%sok %d - ", cond ? "" : "not ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-12;
}

static void add_n(struct ga_eval_confusion *cm, enum ga_class g,
                  enum ga_class p, int n)
{
	while (n-- > 0)
		ga_eval_confusion_add(cm, g, p);
}

/* Computed by hand:
 *
 *   gold \ pred   success cuda_oom nccl unknown | support
 *   success             3        1    .       . |   4
 *   cuda_oom            .        2    .       1 |   3
 *   nccl                2        .    .       . |   2
 *   predicted           5        3    0       1 |   9
 *
 *   success:  P 3/5, R 3/4, F1 = 2*3/(4+5) = 2/3
 *   cuda_oom: P 2/3, R 2/3, F1 = 2*2/(3+3) = 2/3
 *   nccl:     never predicted: P 0, R 0, F1 0
 *   unknown:  not in gold, so outside macro-F1 (P 0)
 *   macro-F1 = (2/3 + 2/3 + 0) / 3 = 4/9; accuracy 5/9.
 */
static void test_metrics(void)
{
	struct ga_eval_confusion cm;
	struct ga_eval_scores s;

	ga_eval_confusion_init(&cm);
	add_n(&cm, GA_CLASS_SUCCESS, GA_CLASS_SUCCESS, 3);
	add_n(&cm, GA_CLASS_SUCCESS, GA_CLASS_CUDA_OOM, 1);
	add_n(&cm, GA_CLASS_CUDA_OOM, GA_CLASS_CUDA_OOM, 2);
	add_n(&cm, GA_CLASS_CUDA_OOM, GA_CLASS_UNKNOWN, 1);
	add_n(&cm, GA_CLASS_NCCL, GA_CLASS_SUCCESS, 2);
	ga_eval_confusion_add(&cm, GA_CLASS_COUNT, GA_CLASS_SUCCESS);
	ga_eval_score(&cm, &s);

	ok(s.total == 9 && s.correct == 5, "totals: 9 items, 5 correct");
	ok(s.cls[GA_CLASS_SUCCESS].support == 4 &&
	           s.cls[GA_CLASS_SUCCESS].predicted == 5,
	   "success support/predicted");
	ok(near(s.cls[GA_CLASS_SUCCESS].precision, 3.0 / 5) &&
	           near(s.cls[GA_CLASS_SUCCESS].recall, 3.0 / 4) &&
	           near(s.cls[GA_CLASS_SUCCESS].f1, 2.0 / 3),
	   "success P/R/F1");
	ok(near(s.cls[GA_CLASS_CUDA_OOM].precision, 2.0 / 3) &&
	           near(s.cls[GA_CLASS_CUDA_OOM].recall, 2.0 / 3) &&
	           near(s.cls[GA_CLASS_CUDA_OOM].f1, 2.0 / 3),
	   "cuda_oom P/R/F1");
	ok(s.cls[GA_CLASS_NCCL].precision == 0 &&
	           s.cls[GA_CLASS_NCCL].recall == 0 &&
	           s.cls[GA_CLASS_NCCL].f1 == 0,
	   "a gold class never predicted scores 0");
	ok(s.cls[GA_CLASS_UNKNOWN].support == 0 &&
	           s.cls[GA_CLASS_UNKNOWN].predicted == 1 &&
	           s.cls[GA_CLASS_UNKNOWN].precision == 0,
	   "a predicted-only class has precision 0");
	ok(s.n_gold_classes == 3, "3 gold classes");
	ok(near(s.macro_f1, 4.0 / 9), "macro-F1 = 4/9 (got %.15f)", s.macro_f1);
	ok(near(s.accuracy, 5.0 / 9), "accuracy = 5/9");

	ga_eval_confusion_init(&cm);
	ga_eval_score(&cm, &s);
	ok(s.total == 0 && s.macro_f1 == 0 && s.accuracy == 0,
	   "empty matrix scores 0 without dividing by 0");

	ga_eval_confusion_init(&cm);
	add_n(&cm, GA_CLASS_NAN, GA_CLASS_NAN, 7);
	ga_eval_score(&cm, &s);
	ok(s.macro_f1 == 1.0 && s.accuracy == 1.0, "perfect scores 1");
}

static void test_exit_code(void)
{
	static const struct {
		int code;
		enum ga_class want;
	} cases[] = {
	        {0, GA_CLASS_SUCCESS},     {1, GA_CLASS_CODE_ERROR},
	        {2, GA_CLASS_UNKNOWN},     {-9, GA_CLASS_HOST_OOM},
	        {137, GA_CLASS_HOST_OOM},  {-11, GA_CLASS_SEGFAULT},
	        {139, GA_CLASS_SEGFAULT},  {-7, GA_CLASS_SEGFAULT},
	        {135, GA_CLASS_SEGFAULT},  {-4, GA_CLASS_SEGFAULT},
	        {132, GA_CLASS_SEGFAULT},  {-6, GA_CLASS_SEGFAULT},
	        {134, GA_CLASS_SEGFAULT},  {-15, GA_CLASS_CANCELLED},
	        {143, GA_CLASS_CANCELLED}, {-2, GA_CLASS_UNKNOWN},
	        {130, GA_CLASS_UNKNOWN},   {255, GA_CLASS_UNKNOWN},
	};
	struct ga_status st;
	int bad = 0;

	for (size_t i = 0; i < GA_ARRAY_LEN(cases); i++) {
		enum ga_class got;

		ga_status_from_int(&st, cases[i].code);
		got = ga_eval_exit_code_classify(&st);
		if (got != cases[i].want) {
			printf("# exit %d: got %s, want %s\n", cases[i].code,
			       ga_class_name(got),
			       ga_class_name(cases[i].want));
			bad++;
		}
	}
	ok(!bad, "exit-code baseline mapping");
	ga_status_init(&st);
	ok(ga_eval_exit_code_classify(&st) == GA_CLASS_UNKNOWN,
	   "exit-code baseline: unknown status is unknown");
}

/* Scan TEXT fed in chunks of CHUNK bytes. */
static enum ga_class scan(const struct ga_eval_keywords *kw, const char *text,
                          size_t chunk, int exit_code, uint64_t *off)
{
	struct ga_eval_kwscan *s = ga_eval_kwscan_create(kw);
	size_t len = strlen(text);
	struct ga_status st;
	enum ga_class c;

	if (!s)
		return GA_CLASS_COUNT;
	for (size_t i = 0; i < len && !ga_eval_kwscan_done(s); i += chunk)
		ga_eval_kwscan_feed(s, text + i,
		                    len - i < chunk ? len - i : chunk);
	ga_status_from_int(&st, exit_code);
	c = ga_eval_kwscan_result(s, &st, off);
	ga_eval_kwscan_destroy(s);
	return c;
}

static void test_keywords(void)
{
	static const char list[] =
	        "# test list\n"
	        "code_error\tRuntimeError\n"
	        "cuda_oom\tCUDA out of memory\n"
	        "nccl\tNCCL\n"
	        "\n"
	        "cuda_oom\tNCCL error: unhandled cuda error, out of memory\n"
	        "host_oom\tKilled\r\n"
	        "code_error\tout of\n"
	        "cuda_oom\tCUDA error: out of memory\n";
	static const struct {
		const char *text;
		int exit_code;
		enum ga_class want;
		uint64_t off;
		const char *what;
	} cases[] = {
	        {"step 1\nRuntimeError: CUDA out of memory\n", 1,
	         GA_CLASS_CODE_ERROR, 7, "earliest keyword wins, no priority"},
	        {"xx CUDA out of memory\nRuntimeError\n", 1, GA_CLASS_CUDA_OOM,
	         3, "earlier line wins"},
	        {"a NCCL error: unhandled cuda error, out of memory\n", 1,
	         GA_CLASS_NCCL, 2, "same start: first in file order"},
	        {"nothing to see\n", 0, GA_CLASS_SUCCESS, UINT64_MAX,
	         "nothing found, exit 0: success"},
	        {"nothing to see\n", 137, GA_CLASS_UNKNOWN, UINT64_MAX,
	         "nothing found, failed: unknown"},
	        {"x\nCUDA error: out of memory\n", 1, GA_CLASS_CUDA_OOM, 2,
	         "a long keyword starting earlier beats a short one ending first"},
	        {"killed\nKilled\n", -9, GA_CLASS_HOST_OOM, 7,
	         "case-sensitive; CRLF in the list stripped"},
	};
	struct ga_diag d;
	struct ga_eval_keywords *kw;
	const char *bad[] = {
	        "cuda_oom CUDA out of memory\n",
	        "no_such_class\tfoo\n",
	        "nan\t\n",
	};

	ga_diag_init(&d, "eval");
	kw = ga_eval_keywords_parse("list", list, &d);
	ok(kw && ga_eval_keywords_count(kw) == 7 && d.errors == 0,
	   "keyword list parses (7 keywords)");
	if (!kw)
		return;
	for (size_t i = 0; i < GA_ARRAY_LEN(cases); i++) {
		static const size_t chunks[] = {1, 2, 3, 5, 7, 64, 4096};
		int good = 1;

		for (size_t c = 0; c < GA_ARRAY_LEN(chunks); c++) {
			uint64_t off;
			enum ga_class got = scan(kw, cases[i].text, chunks[c],
			                         cases[i].exit_code, &off);

			if (got != cases[i].want || off != cases[i].off) {
				printf("# chunk %zu: got %s at %llu\n",
				       chunks[c], ga_class_name(got),
				       (unsigned long long)off);
				good = 0;
			}
		}
		ok(good, "keywords: %s (chunk sizes 1..4096)", cases[i].what);
	}
	ga_eval_keywords_destroy(kw);

	for (size_t i = 0; i < GA_ARRAY_LEN(bad); i++) {
		ga_diag_finish(&d);
		ga_diag_init(&d, "eval");
		kw = ga_eval_keywords_parse("bad", bad[i], &d);
		ok(!kw && d.errors == 1 && d.n == 1 &&
		           !strncmp(d.msgs[0], "bad:1: ", 7),
		   "bad keyword line rejected with file:LINE (%s)",
		   d.n ? d.msgs[0] : "no message");
		ga_eval_keywords_destroy(kw);
	}
	ga_diag_finish(&d);

	ga_diag_init(&d, "eval");
	kw = ga_eval_keywords_parse("keywords.tsv", ga_eval_builtin_keywords,
	                            &d);
	ok(kw && ga_eval_keywords_count(kw) > 50 && d.errors == 0,
	   "built-in keyword list parses (%zu keywords)",
	   ga_eval_keywords_count(kw));
	ga_eval_keywords_destroy(kw);
	ga_diag_finish(&d);
}

/* Silence the diagnostics that the bad-input tests provoke. */
static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
}

int main(void)
{
	ga_log_set_sink(quiet, NULL);
	test_metrics();
	test_exit_code();
	test_keywords();
	printf("1..%d\n", n_test);
	return n_fail ? 1 : 0;
}
