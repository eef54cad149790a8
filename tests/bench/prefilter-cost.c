/* SPDX-License-Identifier: MIT */
/* What the prefilter of the built-in rules lets through on a log: of every
 * position, how many some bucket accepts and how many of those the bit
 * table keeps, with the ruleset's own tables and with tables tuned to the
 * log's first 64 KiB (what `gpualert classify` uses from 14 MiB on).
 * Counts positions, not time: the same on every machine.  Prints one line
 * "POSITIONS UNTUNED_BUCKETS UNTUNED_WORDS TUNED_BUCKETS TUNED_WORDS".
 * tests/bench/bench-prefilter.sh runs it.
 *   prefilter-cost LOG */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "classifier.h"
#include "diag.h"
#include "prefilter.h"
#include "rules.h"

int main(int argc, char **argv)
{
	struct ga_diag diag;
	struct ga_ruleset *rs;
	const struct ga_prefilter *pf;
	struct ga_prefilter *tuned;
	struct ga_prefilter_cost untuned_cost, tuned_cost;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: prefilter-cost LOG\n");
		return 2;
	}
	err = ga_read_file(argv[1], SIZE_MAX, &text, &len);
	if (err < 0) {
		fprintf(stderr, "prefilter-cost: %s: %s\n", argv[1],
		        strerror(-err));
		return 1;
	}
	ga_diag_init(&diag, "prefilter-cost");
	rs = ga_rules_load_sources(NULL, 0, true, &diag);
	pf = rs ? ga_ruleset_prefilter(rs) : NULL;
	/* the sample the classifier tunes to */
	tuned = pf ? ga_prefilter_tune(pf, text,
	                               len < GA_CLASSIFIER_TUNE_SAMPLE
	                                       ? len
	                                       : GA_CLASSIFIER_TUNE_SAMPLE)
	           : NULL;
	if (!tuned) {
		fprintf(stderr, "prefilter-cost: no prefilter for the "
		                "built-in rules\n");
		return 1;
	}
	untuned_cost = ga_prefilter_cost(pf, text, len);
	tuned_cost = ga_prefilter_cost(tuned, text, len);
	printf("%zu %zu %zu %zu %zu\n", len, untuned_cost.buckets,
	       untuned_cost.words, tuned_cost.buckets, tuned_cost.words);
	ga_prefilter_destroy(tuned);
	ga_ruleset_destroy(rs);
	ga_diag_finish(&diag);
	free(text);
	return 0;
}
