/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the line reader and classifier on arbitrary bytes in
 * arbitrary chunks.  The first bytes choose the chunk sizes and the exit
 * status; the verdict must not depend on the chunking. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classifier.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ga_ruleset *rs;

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static char *run(const uint8_t *data, size_t size, const uint8_t *sizes,
                 size_t n_sizes, const struct ga_status *st, size_t tail)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	struct ga_verdict v;
	struct ga_buf b;
	size_t pos = 0, k = 0;

	if (!c)
		return NULL;
	ga_classifier_set_tail(c, tail, 4096);
	while (pos < size) {
		size_t n = n_sizes ? (size_t)sizes[k++ % n_sizes] * 37 + 1
		                   : size;

		if (n > size - pos)
			n = size - pos;
		ga_classifier_feed(c, (const char *)data + pos, n);
		pos += n;
	}
	ga_verdict_init(&v);
	ga_classifier_finish(c, st, &v);
	ga_buf_init(&b);
	ga_verdict_write_json(&v, &b);
	ga_buf_puts(&b, v.tail ? v.tail : "");
	ga_verdict_finish(&v);
	ga_classifier_destroy(c);
	return ga_buf_steal(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ga_status st;
	size_t n_sizes;
	char *whole, *chunked;

	if (!rs) {
		ga_log_set_sink(quiet, NULL);
		rs = ga_rules_load(NULL, NULL, NULL);
		if (!rs)
			abort();
	}
	if (size < 2)
		return 0;
	/* byte 0: status; byte 1: how many chunk-size bytes follow */
	ga_status_from_int(&st, (int)data[0] - 128);
	n_sizes = data[1] % 16;
	if (n_sizes > size - 2)
		n_sizes = size - 2;
	whole = run(data + 2 + n_sizes, size - 2 - n_sizes, NULL, 0, &st,
	            data[0] % 70);
	chunked = run(data + 2 + n_sizes, size - 2 - n_sizes, data + 2, n_sizes,
	              &st, data[0] % 70);
	if (whole && chunked && strcmp(whole, chunked) != 0) {
		fprintf(stderr, "verdict depends on chunking:\n%s\n---\n%s\n",
		        whole, chunked);
		abort();
	}
	free(whole);
	free(chunked);
	return 0;
}
