/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the rules file parser and compiler on arbitrary text,
 * then literal extraction on every line of it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "literals.h"
#include "log.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ga_rules_source src = {"fuzz.rules", text};
	struct ga_diag d;
	struct ga_ruleset *rs;
	char *lits[8];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ga_log_set_sink(quiet, NULL);
	ga_diag_init(&d, "fuzz");
	rs = ga_rules_load_sources(&src, 1, false, &d);
	if (rs) {
		struct ga_buf b;

		ga_buf_init(&b);
		for (size_t i = 0; i < ga_ruleset_size(rs); i++)
			ga_rule_format(ga_ruleset_rule(rs, i), &b);
		ga_buf_finish(&b);
	}
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);

	/* The whole input as one pattern. */
	for (size_t n = ga_literals_extract(text, lits, 8); n; n--)
		free(lits[n - 1]);
	free(text);
	return 0;
}
