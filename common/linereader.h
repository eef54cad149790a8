/* SPDX-License-Identifier: MIT */
/* Streaming line reader: turns arbitrary chunks (a pipe's reads) into
 * regions of complete, bounded "segments", in memory independent of the
 * input's size.
 *
 * A segment is what a terminal would show as one line: text up to '\n' or
 * '\r' (progress bars redraw themselves with '\r').  Line numbers count
 * '\n' only, so every segment of a progress bar shares its line's number
 * and CRLF files number like LF files.  A segment longer than
 * GA_SEGMENT_MAX keeps only its first GA_SEGMENT_MAX bytes; the rest is
 * counted, never stored.
 */
#ifndef GPUALERT_COMMON_LINEREADER_H
#define GPUALERT_COMMON_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

#define GA_SEGMENT_MAX 4096

/* A region: one or more segments, each followed by its terminator ('\n'
 * or '\r') except possibly the last, which then ends at LEN (a truncated
 * long segment, or the input's unterminated last line).  Every segment in
 * it is at most GA_SEGMENT_MAX bytes.  FIRST_LINE is the 1-based line
 * number of the first segment.  DATA is valid only during the call. */
typedef void (*ga_region_fn)(void *ctx, const char *data, size_t len,
                             uint64_t first_line);

struct ga_linereader {
	ga_region_fn on_region;
	void *ctx;
	char carry[GA_SEGMENT_MAX + 1]; /* the current, unfinished segment */
	size_t carry_len;
	int skipping;      /* current segment overflowed: skip to its end */
	uint64_t line;     /* line number of the current segment */
	uint64_t bytes;    /* total bytes fed */
	uint64_t newlines; /* '\n' seen */
	uint64_t long_segments; /* segments cut at GA_SEGMENT_MAX */
	unsigned char last; /* last byte fed, to count an unterminated line */
	/* During ON_REGION: 1 when the region holds no escape byte (0x1b),
	 * found while counting its lines, else 0 (it may hold one). */
	int no_escape;
};

/* Caller storage.  ON_REGION receives every region, in input order. */
void ga_linereader_init(struct ga_linereader *r, ga_region_fn on_region,
                        void *ctx);

/* Feed LEN bytes (any split, any content, NUL included). */
void ga_linereader_feed(struct ga_linereader *r, const char *data, size_t len);

/* Deliver the unterminated last segment, if any.  Call once at EOF. */
void ga_linereader_finish(struct ga_linereader *r);

/* The '\n' bytes in [P, P + N), counted with vector instructions (the
 * classifier numbers the lines its prefilter finds with it). */
uint64_t ga_linereader_count_newlines(const char *p, size_t n);

/* Lines in the input so far, as `wc -l` would count them plus one for an
 * unterminated last line. */
uint64_t ga_linereader_lines(const struct ga_linereader *r);

#endif
