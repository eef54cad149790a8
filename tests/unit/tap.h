/* SPDX-License-Identifier: MIT */
/* A minimal TAP producer for the unit tests (meson `protocol : 'tap'`).
 *
 * One test executable per module; each includes this header once.  Checks
 * print "ok N - name" or "not ok N - name" with a "# " diagnostic saying
 * what was expected; tap_done() prints the plan and returns the exit
 * status.  tap_skip_all() exits 77, which meson reports as a skip.
 */
#ifndef GPUALERT_TESTS_TAP_H
#define GPUALERT_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned tap_n;
static unsigned tap_failed;

static inline void tap_vreport(bool pass, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));
static inline void tap_vreport(bool pass, const char *fmt, va_list ap)
{
	tap_n++;
	if (!pass)
		tap_failed++;
	printf("%sok %u - ", pass ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	putchar('\n');
}

static inline bool ok(bool pass, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static inline bool ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(pass, fmt, ap);
	va_end(ap);
	fflush(stdout);
	return pass;
}

static inline void diag(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Print S (LEN bytes) escaped, for diagnostics. */
static inline void tap_put_escaped(const char *s, size_t len)
{
	for (size_t i = 0; i < len && i < 300; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c >= 0x7f || c == '\\')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	if (len > 300)
		fputs("...", stdout);
}

#define is_int(got, want, ...)                                                 \
	tap_is_int((long long)(got), (long long)(want), __VA_ARGS__)

static inline bool tap_is_int(long long got, long long want, const char *fmt,
                              ...) __attribute__((format(printf, 3, 4)));
static inline bool tap_is_int(long long got, long long want, const char *fmt,
                              ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(got == want, fmt, ap);
	va_end(ap);
	if (got != want)
		diag("  got %lld, want %lld", got, want);
	fflush(stdout);
	return got == want;
}

static inline bool is_str(const char *got, const char *want, const char *fmt,
                          ...) __attribute__((format(printf, 3, 4)));
static inline bool is_str(const char *got, const char *want, const char *fmt,
                          ...)
{
	bool pass = (!got && !want) || (got && want && !strcmp(got, want));
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(pass, fmt, ap);
	va_end(ap);
	if (!pass) {
		fputs("#   got  \"", stdout);
		if (got)
			tap_put_escaped(got, strlen(got));
		fputs(got ? "\"\n" : "(null)\n", stdout);
		fputs("#   want \"", stdout);
		if (want)
			tap_put_escaped(want, strlen(want));
		fputs(want ? "\"\n" : "(null)\n", stdout);
	}
	fflush(stdout);
	return pass;
}

/* Does S contain NEEDLE? */
static inline bool has_str(const char *s, const char *needle)
{
	return s && needle && strstr(s, needle) != NULL;
}

static inline int tap_done(void)
{
	printf("1..%u\n", tap_n);
	if (tap_failed)
		diag("%u of %u checks failed", tap_failed, tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

static inline void tap_skip_all(const char *why) __attribute__((noreturn));
static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(77);
}

/* A small deterministic generator (xorshift64*), so property tests with a
 * fixed seed give the same cases on every machine. */
struct tap_rng {
	uint64_t s;
};

static inline uint64_t tap_rand(struct tap_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64_C(2685821657736338717);
}

static inline size_t tap_below(struct tap_rng *r, size_t n)
{
	return n ? (size_t)(tap_rand(r) % n) : 0;
}

/* How tap_feed_chunks cuts its input. */
enum tap_chunking {
	TAP_WHOLE,  /* one call */
	TAP_BYTES,  /* one byte per call */
	TAP_RANDOM, /* sizes 1..maxchunk from the seed, and empty calls */
};

typedef void (*tap_feed_fn)(void *ctx, const char *data, size_t len);

/* Feed DATA (LEN bytes) to FN in chunks cut as MODE says; TAP_RANDOM draws
 * the sizes from SEED and now and then makes an empty call, which a
 * streaming consumer must take as nothing.  For the property that a
 * streaming result does not depend on where the input was cut. */
static inline void tap_feed_chunks(const char *data, size_t len,
                                   enum tap_chunking mode, uint64_t seed,
                                   size_t maxchunk, tap_feed_fn fn, void *ctx)
{
	struct tap_rng rng = {seed | 1};
	size_t pos = 0;

	while (pos < len) {
		size_t n = len - pos;

		if (mode == TAP_BYTES)
			n = 1;
		else if (mode == TAP_RANDOM && n > 1)
			n = 1 + tap_below(&rng, maxchunk < n ? maxchunk : n);
		if (mode == TAP_RANDOM && tap_below(&rng, 7) == 0)
			fn(ctx, data + pos, 0);
		fn(ctx, data + pos, n);
		pos += n;
	}
}

#endif
