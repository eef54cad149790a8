/* SPDX-License-Identifier: MIT */
/* The streaming line reader: segments, line numbers and counts must not
 * depend on how the input is split into chunks. */
#include "linereader.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tap.h"

/* Every segment as "LINE:<bytes>" followed by '|' (terminators kept). */
static void collect(void *ctx, const char *data, size_t len, uint64_t line)
{
	struct ga_buf *out = ctx;
	size_t s = 0;

	if (len == 0)
		ga_buf_puts(out, "EMPTY-REGION|");
	for (size_t i = 0; i <= len; i++) {
		bool term = i < len && (data[i] == '\n' || data[i] == '\r');

		if (!term && i < len)
			continue;
		if (i == len && s == len)
			break;
		ga_buf_printf(out, "%llu:", (unsigned long long)line);
		ga_buf_append(out, data + s, (i < len ? i + 1 : i) - s);
		ga_buf_putc(out, '|');
		if (term && data[i] == '\n')
			line++;
		s = i + 1;
	}
}

struct run {
	char *segments;
	uint64_t lines, bytes, long_segments;
};

static void feed_reader(void *ctx, const char *data, size_t len)
{
	ga_linereader_feed(ctx, data, len);
}

/* Feed DATA in chunks (tap_feed_chunks: MODE whole, bytes or random sizes
 * up to MAXCHUNK from SEED). */
static void feed(const char *data, size_t len, enum tap_chunking mode,
                 uint64_t seed, size_t maxchunk, struct run *out)
{
	struct ga_linereader r;
	struct ga_buf b;

	ga_buf_init(&b);
	ga_linereader_init(&r, collect, &b);
	tap_feed_chunks(data, len, mode, seed, maxchunk, feed_reader, &r);
	ga_linereader_finish(&r);
	out->lines = ga_linereader_lines(&r);
	out->bytes = r.bytes;
	out->long_segments = r.long_segments;
	out->segments = ga_buf_steal(&b);
}

static void expect_run(const char *name, const char *data, size_t len,
                       const char *want, uint64_t lines, uint64_t long_segs)
{
	struct run whole;

	feed(data, len, TAP_WHOLE, 0, 0, &whole);
	is_str(whole.segments, want, "%s: segments", name);
	is_int(whole.lines, lines, "%s: lines", name);
	is_int(whole.bytes, len, "%s: bytes", name);
	is_int(whole.long_segments, long_segs, "%s: long segments", name);
	free(whole.segments);
}

/* Whole, byte by byte and many random chunkings agree. */
static void expect_same(const char *name, const char *data, size_t len,
                        size_t maxchunk)
{
	struct run whole, other;
	bool same = true;

	feed(data, len, TAP_WHOLE, 0, 0, &whole);
	for (int k = 0; k < 41 && same; k++) {
		feed(data, len, k == 0 ? TAP_BYTES : TAP_RANDOM,
		     (uint64_t)k * 7919, maxchunk, &other);
		same = whole.segments && other.segments &&
		       !strcmp(whole.segments, other.segments) &&
		       whole.lines == other.lines &&
		       whole.bytes == other.bytes &&
		       whole.long_segments == other.long_segments;
		if (!same) {
			diag("chunking %d differs", k);
			diag("whole: %llu lines, %llu long",
			     (unsigned long long)whole.lines,
			     (unsigned long long)whole.long_segments);
			diag("other: %llu lines, %llu long",
			     (unsigned long long)other.lines,
			     (unsigned long long)other.long_segments);
		}
		free(other.segments);
	}
	ok(same, "%s: same segments/lines/bytes in any chunking", name);
	free(whole.segments);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* The vector newline count against a byte loop: every length and
 * alignment near the vector widths, all '\n' (the lanes' worst case) and
 * mixed bytes, and a long run of '\n' past the counters' fold. */
static void test_count_newlines(void)
{
	static char buf[70000];
	bool same = true;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (i * 7919) % 5 == 0 ? '\n' : (char)('a' + i % 26);
	for (int fill = 0; fill < 2; fill++) {
		if (fill)
			memset(buf, '\n', sizeof(buf));
		for (size_t off = 0; off < 3; off++) {
			for (size_t n = 0; n + off <= 300; n++) {
				uint64_t want = 0;

				for (size_t i = 0; i < n; i++)
					want += buf[off + i] == '\n';
				if (ga_linereader_count_newlines(buf + off,
				                                 n) != want)
					same = false;
			}
		}
		if (ga_linereader_count_newlines(buf + 1, sizeof(buf) - 1) !=
		    (fill ? sizeof(buf) - 1
		          : ga_linereader_count_newlines(buf + 1, 299) +
		                     ga_linereader_count_newlines(
		                             buf + 300, sizeof(buf) - 300)))
			same = false;
	}
	ok(same, "newline count: same as a byte loop at every length");
}

/* The regions a reader says hold no escape byte, and those it does not. */
struct esc_check {
	struct ga_linereader *r;
	int wrong, clean, unsure;
};

static void check_esc(void *ctx, const char *data, size_t len, uint64_t line)
{
	struct esc_check *e = ctx;

	(void)line;
	if (!e->r->no_escape)
		e->unsure++;
	else if (memchr(data, 0x1b, len))
		e->wrong++;
	else
		e->clean++;
}

/* no_escape never claims a region with an escape byte is without one,
 * wherever the byte lies (the vector part, the last bytes, the edges),
 * and says so of plain regions. */
static void test_no_escape(void)
{
	static char text[9000];
	struct tap_rng rng = {4711};
	struct esc_check e = {NULL, 0, 0, 0};
	struct ga_linereader r;
	int plain = 0;

	e.r = &r;
	for (int round = 0; round < 400; round++) {
		size_t len = 1 + tap_below(&rng, sizeof(text) - 1);

		for (size_t i = 0; i < len; i++)
			text[i] = tap_below(&rng, 40) == 0
			                  ? '\n'
			                  : (char)('a' + tap_below(&rng, 26));
		if (round % 2)
			text[round % 4 == 1
			             ? tap_below(&rng, len)
			             : len - 1 - tap_below(&rng, 70) % len] =
			        0x1b;
		else
			plain++;
		text[len - 1] = '\n';
		ga_linereader_init(&r, check_esc, &e);
		ga_linereader_feed(&r, text, len);
		ga_linereader_finish(&r);
	}
	is_int(e.wrong, 0, "no escape: never said of a region with one");
	ok(e.clean >= plain,
	   "no escape: said of the plain texts' regions (%d for %d texts)",
	   e.clean, plain);
}

int main(void)
{
	struct ga_buf b;
	char *s, *x;

	expect_run("empty", "", 0, "", 0, 0);
	expect_run("one line", "abc\n", 4, "1:abc\n|", 1, 0);
	expect_run("no final newline", "abc\ndef", 7, "1:abc\n|2:def|", 2, 0);
	expect_run("CRLF and CR", "a\r\nb\rc\n\nlast", 12,
	           "1:a\r|1:\n|2:b\r|2:c\n|3:\n|4:last|", 4, 0);
	expect_run("progress bar", "10%\r20%\r30%\ndone\n", 17,
	           "1:10%\r|1:20%\r|1:30%\n|2:done\n|", 2, 0);
	expect_run("lone CR at the end", "abc\r", 4, "1:abc\r|", 1, 0);
	expect_run("NUL bytes", "a\0b\n\0\n", 6, "1:a\0b\n|2:\0\n|", 2, 0);

	/* Overlong segments: only the first GA_SEGMENT_MAX bytes. */
	x = repeat('x', GA_SEGMENT_MAX + 10);
	ga_buf_init(&b);
	ga_buf_append(&b, x, GA_SEGMENT_MAX + 10);
	ga_buf_puts(&b, "\ny\n");
	ga_buf_append(&b, x, GA_SEGMENT_MAX); /* exactly the maximum */
	ga_buf_puts(&b, "\r");
	ga_buf_append(&b, x, GA_SEGMENT_MAX + 1); /* one more, unterminated */
	{
		struct ga_buf want;

		ga_buf_init(&want);
		ga_buf_puts(&want, "1:");
		ga_buf_append(&want, x, GA_SEGMENT_MAX);
		ga_buf_puts(&want, "|2:y\n|3:");
		ga_buf_append(&want, x, GA_SEGMENT_MAX);
		ga_buf_puts(&want, "\r|3:");
		ga_buf_append(&want, x, GA_SEGMENT_MAX);
		ga_buf_puts(&want, "|");
		expect_run("long segments", b.data, b.len, want.data, 3, 2);
		expect_same("long segments", b.data, b.len, 9000);
		expect_same("long segments, small chunks", b.data, b.len, 100);
		ga_buf_finish(&want);
	}
	ga_buf_finish(&b);
	free(x);

	/* A mixture of everything, chunked at random. */
	ga_buf_init(&b);
	{
		struct tap_rng rng = {12345};
		static const char *const pieces[] = {
		        "epoch 1 step 10 loss 2.31\n",
		        "\r\n",
		        "\r",
		        "\n",
		        " 45%|####      | 45/100 [00:10<00:12]\r",
		        "\xe2\x96\x88\xe2\x96\x88",
		        "\x1b[31mred\x1b[0m",
		        "[rank3]: Traceback (most recent call last):\n",
		        "CUDA out of memory.",
		        "\0",
		        "\xff\xfe",
		};

		for (int i = 0; i < 3000; i++) {
			size_t k = tap_below(&rng, sizeof(pieces) /
			                                   sizeof(pieces[0]));

			if (pieces[k][0] == '\0')
				ga_buf_putc(&b, '\0');
			else
				ga_buf_puts(&b, pieces[k]);
			if (tap_below(&rng, 500) == 0) {
				x = repeat('z', 4000 + tap_below(&rng, 3000));
				ga_buf_puts(&b, x);
				free(x);
			}
		}
	}
	expect_same("mixture", b.data, b.len, 64);
	expect_same("mixture, large chunks", b.data, b.len, 20000);
	s = b.data;
	{
		struct run whole;
		size_t nl = 0;

		for (size_t i = 0; i < b.len; i++)
			nl += s[i] == '\n';
		feed(s, b.len, TAP_WHOLE, 0, 0, &whole);
		is_int(whole.lines, nl + (b.len && s[b.len - 1] != '\n'),
		       "mixture: lines as wc -l counts them (+1 unterminated)");
		free(whole.segments);
	}
	ga_buf_finish(&b);
	test_count_newlines();
	test_no_escape();
	return tap_done();
}
