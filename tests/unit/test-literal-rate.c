/* SPDX-License-Identifier: MIT */
/* How many lines of a healthy training log hold a prefilter literal of a
 * built-in rule, and so go on to that rule's regular expressions.
 *
 * Every such line costs a regex search.  A rule whose literal is common in
 * healthy output (a module path such as "torch.cuda.", which deprecation
 * warnings print) slows every classification without changing a single
 * verdict, so no verdict test sees it.  This counts lines, not time: the
 * figure is the same on every machine.  The log is the benchmark's
 * (tests/bench/genlog.c), both mixes, without their closing failure.
 *
 * usage: test-literal-rate GENLOG */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "prefilter.h"
#include "rules.h"
#include "tap.h"

/* The most lines per thousand that may hold a literal.  At the rules of
 * this test's commit no healthy line of either mix holds one.  A rule
 * keyed on "torch.cuda." put 11.65 per thousand of the noisy mix's lines
 * through its regex, which cost about 45 % of the classification's time;
 * a few per thousand already cost several per cent. */
#define PLAIN_MAX_PER_MILLE 1.0
#define NOISY_MAX_PER_MILLE 1.0

struct count {
	const char *data;
	size_t len;
	size_t lines;    /* lines holding a literal */
	size_t *per_lit; /* such lines by their first literal */
	size_t nlit;
};

static size_t on_hit(void *ctx, size_t pos, size_t lit)
{
	struct count *c = ctx;
	const char *eol = memchr(c->data + pos, '\n', c->len - pos);

	c->lines++;
	if (lit >= c->nlit) {
		size_t n = lit + 64;
		size_t *p = realloc(c->per_lit, n * sizeof(*p));

		if (!p)
			abort();
		memset(p + c->nlit, 0, (n - c->nlit) * sizeof(*p));
		c->per_lit = p;
		c->nlit = n;
	}
	c->per_lit[lit]++;
	/* One count a line: go on after it. */
	return eol ? (size_t)(eol - c->data) + 1 : c->len;
}

/* genlog's output for MIX into OUT; *HEALTHY: the length of what comes
 * before its last 64 KiB (cut at a line start), a stretch that ends well
 * before the failure the log ends in. */
static int generate(const char *genlog, const char *mix, struct ga_buf *out,
                    size_t *healthy)
{
	char cmd[4096];
	char chunk[65536];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' 16 1 %s 2>/dev/null", genlog, mix);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		ga_buf_append(out, chunk, n);
	if (pclose(p) != 0 || out->len <= 65536)
		return -1;
	const char *cut = memchr(out->data + out->len - 65536, '\n', 65536);

	if (!cut)
		return -1;
	*healthy = (size_t)(cut - out->data) + 1;
	return 0;
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;

	for (const char *p = s; (p = memchr(p, '\n', len - (size_t)(p - s)));
	     p++)
		n++;
	return n;
}

/* The literals most lines hold, with the rules that own them (the counts
 * of those shown are cleared). */
static void show_top(const struct ga_ruleset *rs, struct count *c)
{
	for (int k = 0; k < 5; k++) {
		size_t best = 0, at = 0;

		for (size_t i = 0; i < c->nlit; i++)
			if (c->per_lit[i] > best) {
				best = c->per_lit[i];
				at = i;
			}
		if (!best)
			break;
		const uint32_t *owners;
		size_t n;

		ga_ruleset_literal_owners(rs, at, &owners, &n);
		diag("literal %zu on %zu lines, of rule %s%s", at, best,
		     n ? ga_rule_id(ga_ruleset_rule(rs, owners[0])) : "?",
		     n > 1 ? " (and others)" : "");
		c->per_lit[at] = 0;
	}
}

static void check_mix(const struct ga_ruleset *rs, const char *genlog,
                      const char *mix, double max_per_mille)
{
	struct ga_buf log;
	struct count c = {0}, end = {0};
	size_t healthy;

	ga_buf_init(&log);
	if (generate(genlog, mix, &log, &healthy) != 0) {
		ok(0, "%s mix: genlog ran", mix);
		ga_buf_finish(&log);
		return;
	}
	c.data = log.data;
	c.len = healthy;
	ga_prefilter_scan(ga_ruleset_prefilter(rs), log.data, healthy, on_hit,
	                  &c);
	size_t total = count_lines(log.data, healthy);
	double per_mille = total ? 1000.0 * (double)c.lines / (double)total : 0;

	ok(total > 50000 && per_mille <= max_per_mille,
	   "%s mix: %zu of %zu lines hold a rule's literal (%.2f per thousand, "
	   "at most %.1f)",
	   mix, c.lines, total, per_mille, max_per_mille);
	show_top(rs, &c);
	/* The control: the failure the log ends in (a CUDA out-of-memory and
	 * NCCL's watchdog on the other ranks) is found. */
	end.data = log.data + healthy;
	end.len = log.len - healthy;
	ga_prefilter_scan(ga_ruleset_prefilter(rs), end.data, end.len, on_hit,
	                  &end);
	ok(end.lines >= 2,
	   "%s mix: the failure at its end holds literals "
	   "(%zu lines)",
	   mix, end.lines);
	free(c.per_lit);
	free(end.per_lit);
	ga_buf_finish(&log);
}

int main(int argc, char **argv)
{
	struct ga_ruleset *rs;
	const uint32_t *unfiltered;

	if (argc != 2) {
		fprintf(stderr, "usage: test-literal-rate GENLOG\n");
		return 2;
	}
	rs = ga_rules_load(NULL, NULL, NULL);
	if (!rs) {
		printf("Bail out! the built-in rules do not load\n");
		return 1;
	}
	/* A rule without a literal runs on every line. */
	ok(ga_ruleset_unfiltered(rs, &unfiltered) == 0,
	   "every built-in rule has a prefilter literal");
	check_mix(rs, argv[1], "plain", PLAIN_MAX_PER_MILLE);
	check_mix(rs, argv[1], "noisy", NOISY_MAX_PER_MILLE);
	ga_ruleset_destroy(rs);
	return tap_done();
}
