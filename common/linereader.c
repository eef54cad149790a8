/* SPDX-License-Identifier: MIT */
#include "linereader.h"

#include <stdbool.h>
#include <string.h>

#include "util.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

void ga_linereader_init(struct ga_linereader *r, ga_region_fn on_region,
                        void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->on_region = on_region;
	r->ctx = ctx;
	r->line = 1;
}

/* First '\n' or '\r' in [p, end), or end.  The '\r' search stops at the
 * first '\n', so this costs about the segment's length. */
static const char *find_terminator(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *stop = nl ? nl : end;
	const char *cr = memchr(p, '\r', (size_t)(stop - p));

	return cr ? cr : stop;
}

static void emit(struct ga_linereader *r, const char *data, size_t len,
                 uint64_t line)
{
	if (len)
		r->on_region(r->ctx, data, len, line);
}

/* Append to the carried segment; when it overflows, emit its prefix as a
 * region of its own and skip the rest of the segment. */
static void carry_append(struct ga_linereader *r, const char *p, size_t n)
{
	size_t room;

	if (r->skipping)
		return;
	room = GA_SEGMENT_MAX - r->carry_len;
	if (n <= room) {
		memcpy(r->carry + r->carry_len, p, n);
		r->carry_len += n;
		return;
	}
	memcpy(r->carry + r->carry_len, p, room);
	r->carry_len = GA_SEGMENT_MAX;
	emit(r, r->carry, r->carry_len, r->line);
	r->carry_len = 0;
	r->skipping = 1;
	r->long_segments++;
}

static void end_segment(struct ga_linereader *r, char term)
{
	if (term == '\n') {
		r->line++;
		r->newlines++;
	}
}

#ifdef HAVE_AVX2_PATH
/* The '\n' in the first N & ~63 bytes of P, 64 bytes at a time: half
 * the instructions of SSE2, and this count is most of what `wc -l` does,
 * which gpualert must stay within a small factor of.  With ESC, also
 * whether those bytes hold an escape byte (0x1b), in the same pass. */
__attribute__((target("avx2"), always_inline)) static inline uint64_t
count_avx2_esc(const char *p, size_t n, bool *esc)
{
	const __m256i nl = _mm256_set1_epi8('\n'), e = _mm256_set1_epi8(0x1b),
	              zero = _mm256_setzero_si256();
	__m256i seen = zero;
	uint64_t total = 0;

	while (n >= 64) {
		__m256i acc = zero, sums;

		/* two per lane and round: at most 254 before the fold */
		for (int k = 0; k < 127 && n >= 64; k++, p += 64, n -= 64) {
			__m256i x = _mm256_loadu_si256(
			        (const __m256i *)(const void *)p);
			__m256i y = _mm256_loadu_si256(
			        (const __m256i *)(const void *)(p + 32));

			/* a match is 0xff, i.e. -1: subtracting counts it */
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(x, nl));
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(y, nl));
			if (esc)
				seen = _mm256_or_si256(
				        seen, _mm256_or_si256(
				                      _mm256_cmpeq_epi8(x, e),
				                      _mm256_cmpeq_epi8(y, e)));
		}
		sums = _mm256_sad_epu8(acc, zero);
		total += (uint64_t)_mm256_extract_epi64(sums, 0) +
		         (uint64_t)_mm256_extract_epi64(sums, 1) +
		         (uint64_t)_mm256_extract_epi64(sums, 2) +
		         (uint64_t)_mm256_extract_epi64(sums, 3);
	}
	if (esc)
		*esc = !_mm256_testz_si256(seen, seen);
	return total;
}

__attribute__((target("avx2"))) static uint64_t count_avx2(const char *p,
                                                           size_t n)
{
	return count_avx2_esc(p, n, NULL);
}

__attribute__((target("avx2"))) static uint64_t count_avx2_with_esc(
        const char *p, size_t n, bool *esc)
{
	return count_avx2_esc(p, n, esc);
}

static int have_avx2(void)
{
	return (ga_cpu_features() & GA_CPU_AVX2) != 0;
}
#endif

/* Count the '\n' in [P, P+N): 64 bytes at a time with AVX2 where the CPU
 * has it, sixteen with SSE2 (every x86-64 has it), else eight with plain
 * integer arithmetic; one byte counter per lane, folded before the lanes
 * can overflow. */
uint64_t ga_linereader_count_newlines(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull,
	               high = 0x8080808080808080ull;
	const uint64_t pat = ones * '\n';
	uint64_t total = 0;

#ifdef HAVE_AVX2_PATH
	if (n >= 64 && have_avx2()) {
		total = count_avx2(p, n);
		p += n & ~(size_t)63;
		n &= 63;
	}
#endif
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

	while (n >= 16) {
		__m128i acc = zero, sums;

		for (int k = 0; k < 255 && n >= 16; k++, p += 16, n -= 16) {
			__m128i x = _mm_loadu_si128(
			        (const __m128i *)(const void *)p);

			/* a match is 0xff, i.e. -1: subtracting counts it */
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, nl));
		}
		sums = _mm_sad_epu8(acc, zero);
		total += (uint64_t)_mm_cvtsi128_si64(sums) +
		         (uint64_t)_mm_cvtsi128_si64(
		                 _mm_unpackhi_epi64(sums, sums));
	}
#endif

	while (n >= 8) {
		uint64_t acc = 0;

		for (int k = 0; k < 255 && n >= 8; k++, p += 8, n -= 8) {
			uint64_t x, t;

			memcpy(&x, p, sizeof(x));
			x ^= pat; /* zero bytes where p had '\n' */
			t = ((x & ~high) + ~high) | x;
			acc += (~t & high) >> 7;
		}
		total += (acc * ones) >> 56;
	}
	while (n--)
		total += *p++ == '\n';
	return total;
}

/* ga_linereader_count_newlines(), and whether [P, P+N) holds an escape
 * byte, in one pass where the CPU has AVX2. */
static uint64_t count_newlines_esc(const char *p, size_t n, bool *esc)
{
#ifdef HAVE_AVX2_PATH
	if (n >= 64 && have_avx2()) {
		size_t head = n & ~(size_t)63;
		uint64_t total = count_avx2_with_esc(p, head, esc);

		if (!*esc)
			*esc = memchr(p + head, 0x1b, n - head) != NULL;
		return total + ga_linereader_count_newlines(p + head, n - head);
	}
#endif
	*esc = memchr(p, 0x1b, n) != NULL;
	return ga_linereader_count_newlines(p, n);
}

/* Emit [P, STOP), which ends with a terminator, as regions.  Segments are
 * at most GA_SEGMENT_MAX bytes unless some window of GA_SEGMENT_MAX + 1
 * bytes has no terminator, so only such windows are looked at closely;
 * the rest costs one backward search per 4 KiB and a newline count. */
static void __attribute__((nonnull))
bulk(struct ga_linereader *r, const char *p, const char *stop)
{
	const char *region = p, *q = p;
	uint64_t region_line = r->line;

	while ((size_t)(stop - q) > GA_SEGMENT_MAX) {
		const char *t = memrchr(q, '\n', GA_SEGMENT_MAX + 1);
		uint64_t n;

		if (!t)
			t = memrchr(q, '\r', GA_SEGMENT_MAX + 1);
		if (t) {
			q = t + 1;
			continue;
		}
		/* A long segment starts at q. */
		emit(r, region, (size_t)(q - region), region_line);
		n = ga_linereader_count_newlines(region, (size_t)(q - region));
		r->line += n;
		r->newlines += n;
		t = find_terminator(q, stop);
		emit(r, q, GA_SEGMENT_MAX, r->line);
		r->long_segments++;
		end_segment(r, *t);
		q = t + 1;
		region = q;
		region_line = r->line;
	}
	{
		bool esc;
		uint64_t n = count_newlines_esc(region, (size_t)(stop - region),
		                                &esc);

		r->no_escape = !esc;
		emit(r, region, (size_t)(stop - region), region_line);
		r->no_escape = 0;
		r->line += n;
		r->newlines += n;
	}
}

void ga_linereader_feed(struct ga_linereader *r, const char *data, size_t len)
{
	const char *p = data, *end = data + len;

	if (!data || len == 0)
		return;
	r->bytes += len;
	r->last = (unsigned char)data[len - 1];

	/* Finish a segment begun in an earlier chunk. */
	if (r->carry_len || r->skipping) {
		const char *t = find_terminator(p, end);

		carry_append(r, p, (size_t)(t - p));
		if (t == end)
			return;
		if (!r->skipping) {
			r->carry[r->carry_len++] = *t;
			emit(r, r->carry, r->carry_len, r->line);
		}
		r->carry_len = 0;
		r->skipping = 0;
		end_segment(r, *t);
		p = t + 1;
	}

	/* Complete segments end at the chunk's last terminator; the rest
	 * waits for the next chunk. */
	{
		const char *last_nl = memrchr(p, '\n', (size_t)(end - p));
		const char *from = last_nl ? last_nl + 1 : p;
		const char *last_cr = memrchr(from, '\r', (size_t)(end - from));
		const char *last = last_cr ? last_cr : last_nl;

		if (last) {
			bulk(r, p, last + 1);
			p = last + 1;
		}
	}

	/* The unfinished tail waits for the next chunk. */
	carry_append(r, p, (size_t)(end - p));
}

void ga_linereader_finish(struct ga_linereader *r)
{
	if (r->carry_len)
		emit(r, r->carry, r->carry_len, r->line);
	r->carry_len = 0;
	r->skipping = 0;
}

uint64_t ga_linereader_lines(const struct ga_linereader *r)
{
	uint64_t n = r->newlines;

	if (r->bytes && r->last != '\n')
		n++;
	return n;
}
