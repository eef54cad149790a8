#include "linereader.h"

#include <string.h>

void ga_linereader_init(struct ga_linereader *r, ga_region_fn on_region,
			void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->on_region = on_region;
	r->ctx = ctx;
	r->line = 1;
}

/* First '\n' or '\r' in [p, end), or end.  *NEXT_CR caches the next '\r'
 * of the chunk, so a chunk with none costs a single memchr for it. */
static const char *find_terminator(const char *p, const char *end,
				   const char **next_cr)
{
	const char *nl;

	if (*next_cr && *next_cr < p)
		*next_cr = memchr(p, '\r', (size_t)(end - p));
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl)
		nl = end;
	if (*next_cr && *next_cr < nl)
		return *next_cr;
	return nl;
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

void ga_linereader_feed(struct ga_linereader *r, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	const char *next_cr;
	const char *region;
	uint64_t region_line;

	if (len == 0)
		return;
	r->bytes += len;
	r->last = (unsigned char)data[len - 1];
	next_cr = memchr(data, '\r', len);

	/* Finish a segment begun in an earlier chunk. */
	if (r->carry_len || r->skipping) {
		const char *t = find_terminator(p, end, &next_cr);

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

	region = p;
	region_line = r->line;
	while (p < end) {
		const char *t = find_terminator(p, end, &next_cr);

		if (t == end)
			break;
		if ((size_t)(t - p) > GA_SEGMENT_MAX) {
			emit(r, region, (size_t)(p - region), region_line);
			emit(r, p, GA_SEGMENT_MAX, r->line);
			r->long_segments++;
			end_segment(r, *t);
			p = t + 1;
			region = p;
			region_line = r->line;
			continue;
		}
		end_segment(r, *t);
		p = t + 1;
	}
	emit(r, region, (size_t)(p - region), region_line);

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
