/* SPDX-License-Identifier: MIT */
#include "classifier.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "json.h"
#include "linereader.h"
#include "prefilter.h"
#include "util.h"

#define HITS_PER_RULE 3
/* Below this priority a rule's evidence is too weak for "also seen". */
#define WEAK_PRIORITY 20
#define DEFAULT_TAIL_LINES 60
#define DEFAULT_TAIL_BYTES (16 * 1024)
#define TAIL_BYTES_MAX (1024 * 1024)

/* Context: rules whose id starts with "context." (a Python traceback's
 * "File ..., line N, in f" frame, the "rank : N" row of torchrun's
 * failure table) never decide.  The last context line seen is attached
 * to the next hits of the rules that use it (CONTEXT_WINDOW lines at
 * most), so that a code_error's evidence shows the innermost frame and a
 * launcher's report says which rank died. */
#define CONTEXT_PREFIX "context."
#define CONTEXT_WINDOW 8

/* "ignored_after =": how far after the announcing line the ignored line
 * may come (a swallowed exception's traceback; a deeper one is cut off
 * and its exception line then counts again). */
#define IGNORED_WINDOW 200

struct hit {
	uint64_t line;
	char *text;
	uint64_t ctx_line; /* 0: none */
	uint32_t ctx_rule;
	char *ctx;
};

struct rule_rec {
	uint64_t count;
	struct hit hits[HITS_PER_RULE];
	size_t n;
};

/* Anchors are re-chosen from the first GA_CLASSIFIER_TUNE_SAMPLE bytes of
 * the log when the log is at least this long, or of unknown length.  Choosing
 * them costs 115 to 135 million instructions with the built-in rules,
 * which the re-chosen literals repay at 9 to 11 million per MB read
 * (tests/bench/bench-instructions.sh: 11.7 to 15.5 million per MB with
 * the ruleset's own literals from 1 to 4 MB, 2.9 to 4.4 with re-chosen
 * ones from 16 to 24 MB; even at 12 to 13 MB, and at 14 MB tuning saves
 * 3 to 7 % of what the log costs). */
#define TUNE_WORTH (14u << 20)

struct ga_classifier {
	const struct ga_ruleset *rs;
	const struct ga_prefilter *pf; /* the ruleset's, or tuned_pf */
	struct ga_prefilter *tuned_pf;
	char *sample; /* until tuned: the log's first bytes */
	size_t sample_len;
	bool tuned;
	size_t n_rules;
	struct ga_matcher *matcher;
	struct ga_linereader reader;
	struct rule_rec *recs;
	uint8_t *context;    /* per rule: a context rule */
	uint8_t *uses_ctx;   /* per rule: its hits carry the context line */
	uint64_t *announced; /* per rule: its last line that no "ignored_after"
	                        line has used up yet, 0: none */
	uint64_t ctx_line;   /* the last context line, 0: none */
	uint32_t ctx_rule;
	char ctx_text[GA_EVIDENCE_TEXT_MAX + 1];
	/* candidate rules of the segment being matched */
	uint8_t *mark;
	uint32_t *touched;
	size_t n_touched;
	const uint32_t *unfiltered;
	size_t n_unfiltered;
	char norm[GA_SEGMENT_MAX + 1];
	/* the region being scanned */
	const char *region;
	size_t region_len;
	size_t scan_base; /* offset of the scanned part in the region */
	size_t counted;   /* '\n' counted in the region up to here */
	uint64_t counted_line;
	/* tail: ring of the last tail_bytes raw bytes */
	char *ring;
	size_t ring_size;
	size_t ring_pos;
	bool ring_full;
	size_t tail_lines;
	char *imported_tail; /* set by ga_classifier_read_state */
	size_t imported_tail_lines;
	bool oom;
};

/* ---- cleaning -------------------------------------------------------- */

/* Copy IN to OUT without ANSI escape sequences (CSI, OSC, two-byte ESC)
 * and without control characters other than tab.  Returns OUT's length;
 * OUT has room for LEN bytes. */
static size_t clean_text(const char *in, size_t len, char *out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char c = s[i];

		if (c == 0x1b) {
			i++;
			if (i < len && s[i] == '[') {
				/* CSI: parameters, then a final byte 0x40-0x7e */
				for (i++;
				     i < len && !(s[i] >= 0x40 && s[i] <= 0x7e);
				     i++)
					;
				i++;
			} else if (i < len && s[i] == ']') {
				/* OSC: until BEL or ESC \ */
				for (i++;
				     i < len && s[i] != 0x07 && s[i] != 0x1b;
				     i++)
					;
				if (i < len && s[i] == 0x1b)
					i++;
				i++;
			} else if (i < len) {
				i++;
			}
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			i++;
			continue;
		}
		out[o++] = (char)c;
		i++;
	}
	return o;
}

/* Length of a process prefix "(NAME pid=N, ip=A) " at S: Ray prefixes
 * the output of its workers and actors so ("(pid=1234) ", "(RayTrainWorker
 * pid=1234, ip=10.0.0.1) "), and vLLM that of its processes ("(EngineCore_DP0
 * pid=1394) ", "(VllmWorker rank=0 pid=12) ").  0 when there is none. */
static size_t pid_prefix(const char *s, size_t len)
{
	bool pid = false;
	size_t j;

	if (len < 8 || s[0] != '(')
		return 0;
	for (j = 1; j < len && j < 96 && s[j] != ')'; j++) {
		char ch = s[j];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
		      ch == '.' || ch == ':' || ch == '=' || ch == ',' ||
		      ch == ' '))
			return 0;
		if (!strncmp(s + j, "pid=", 4) && j + 4 < len &&
		    s[j + 4] >= '0' && s[j + 4] <= '9' &&
		    (s[j - 1] == '(' || s[j - 1] == ' '))
			pid = true;
	}
	if (!pid || j + 1 >= len || s[j] != ')' || s[j + 1] != ' ')
		return 0;
	return j + 2;
}

/* Length of a container's or a role's name at S, as prefixes carry it: a
 * letter, then letters, digits, '_', '-' (and '.' when DOT), at most 64
 * bytes.  0 when S does not start with a letter. */
static size_t prefix_name(const char *s, size_t len, bool dot)
{
	size_t j = 0;

	if (len == 0 ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while (j < len && j < 64 &&
	       ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
	        (s[j] >= '0' && s[j] <= '9') || s[j] == '_' || s[j] == '-' ||
	        (dot && s[j] == '.')))
		j++;
	return j;
}

/* Length of Docker Compose's service prefix at S: the container's name,
 * padding and "| " ("trainer-1  | ", "web_1  | ").  0 when there is none. */
static size_t compose_prefix(const char *s, size_t len)
{
	size_t j = prefix_name(s, len, true), k;

	if (j == 0)
		return 0;
	for (k = j; k < len && s[k] == ' '; k++)
		;
	if (k == j || k + 1 >= len || s[k] != '|' || s[k + 1] != ' ')
		return 0;
	return k + 2;
}

/* Length of TorchX's replica prefix at S: the role's name, "/", the
 * replica's number and a blank ("trainer/0 ", "dlrm_main/1 "), which
 * torchx run and torchx log put before every line of a replica (after
 * torchrun's own "[3]:" when it tees).  0 when there is none. */
static size_t torchx_prefix(const char *s, size_t len)
{
	size_t j = prefix_name(s, len, false), d;

	if (j == 0 || j >= len || s[j] != '/')
		return 0;
	for (d = ++j; j < len && j - d < 6 && s[j] >= '0' && s[j] <= '9'; j++)
		;
	if (j == d || j >= len || s[j] != ' ')
		return 0;
	return j + 1;
}

/* Length of a bracketed rank prefix that rank_prefix's "[NAME3]:" form
 * does not cover, at S: Open MPI's --tag-output "[1,0]<stderr>:" and
 * Lightning's "[rank: 0] ".  0 when there is none. */
static size_t tagged_prefix(const char *s, size_t len)
{
	size_t j = 1, d;

	if (len < 5 || s[0] != '[')
		return 0;
	if (len > 7 && !strncmp(s, "[rank: ", 7)) {
		for (j = 7, d = j; j < len && s[j] >= '0' && s[j] <= '9'; j++)
			;
		if (j == d || j + 1 >= len || s[j] != ']' || s[j + 1] != ' ')
			return 0;
		return j + 2;
	}
	for (int part = 0; part < 2; part++) {
		for (d = j; j < len && s[j] >= '0' && s[j] <= '9'; j++)
			;
		if (j == d || j >= len || s[j] != (part ? ']' : ','))
			return 0;
		j++;
	}
	if (j >= len || s[j] != '<')
		return 0;
	for (d = ++j; j < len && s[j] >= 'a' && s[j] <= 'z'; j++)
		;
	if (j == d || j + 1 >= len || s[j] != '>' || s[j + 1] != ':')
		return 0;
	return j + 2;
}

/* Length of a time stamp at S in the form of TEMPLATE ('d' a digit,
 * any other byte itself), with the fraction of a second that may follow
 * it ("12:00:00.123"); 0 when S does not hold it and a byte after it. */
static size_t stamp_len(const char *s, size_t len, const char *template)
{
	size_t n = strlen(template), j;

	if (len <= n)
		return 0;
	for (j = 0; j < n; j++)
		if (template[j] == 'd' ? !(s[j] >= '0' && s[j] <= '9')
		                       : s[j] != template[j])
			return 0;
	if (s[j] == '.')
		for (j++; j < len && s[j] >= '0' && s[j] <= '9'; j++)
			;
	return j;
}

/* Length of an RFC 3339 time stamp at S ("2024-01-01T12:00:00.123Z",
 * "...:00+02:00"), 0 when there is none. */
static size_t rfc3339_stamp(const char *s, size_t len)
{
	size_t j = stamp_len(s, len, "dddd-dd-ddTdd:dd:dd");

	if (j == 0)
		return 0;
	if (j < len && s[j] == 'Z')
		return j + 1;
	if (j + 6 <= len && (s[j] == '+' || s[j] == '-') && s[j + 3] == ':')
		return j + 6;
	return 0;
}

/* Length of a prefix that a paste or a log collector adds at S: a
 * Markdown quote ("> ", "> > "), the RFC 3339 time stamp of docker logs
 * -t and kubectl logs --timestamps ("2024-01-01T12:00:00.123456789Z "),
 * or a CI worker's source and stamp in brackets (TaskCluster's live log:
 * "[task 2024-12-17T16:38:34.130Z] ").  0 when there is none. */
static size_t paste_prefix(const char *s, size_t len)
{
	size_t j = 0, d;

	if (len >= 2 && s[0] == '>') {
		while (j < len && (s[j] == '>' || s[j] == ' '))
			j++;
		return s[j - 1] == ' ' ? j : 0;
	}
	if (len > 0 && s[0] == '[') {
		for (j = 1; j < len && s[j] >= 'a' && s[j] <= 'z'; j++)
			;
		if (j == 1 || j >= len || s[j] != ' ')
			return 0;
		j++;
		d = rfc3339_stamp(s + j, len - j);
		if (!d || j + d + 1 >= len || s[j + d] != ']' ||
		    s[j + d + 1] != ' ')
			return 0;
		return j + d + 2;
	}
	d = rfc3339_stamp(s, len);
	return d && d < len && s[d] == ' ' ? d + 1 : 0;
}

/* Length of vLLM's logger prefix at S: the level, the month-day stamp,
 * the source file and line, and "] " ("ERROR 05-29 08:36:42 [core.py:390] ",
 * and before 0.8 without the opening bracket: "ERROR 04-01 20:31:07
 * engine.py:366] ").  vLLM logs every line of an engine's traceback so.
 * 0 when there is none. */
static size_t vllm_prefix(const char *s, size_t len)
{
	const char *level;
	size_t j, d;

	switch (len > 0 ? s[0] : '\0') {
	case 'D':
		level = "DEBUG ";
		break;
	case 'I':
		level = "INFO ";
		break;
	case 'W':
		level = "WARNING ";
		break;
	case 'E':
		level = "ERROR ";
		break;
	case 'C':
		level = "CRITICAL ";
		break;
	default:
		return 0;
	}
	j = strlen(level);
	if (len <= j || strncmp(s, level, j))
		return 0;
	d = stamp_len(s + j, len - j, "dd-dd dd:dd:dd");
	if (d == 0)
		return 0;
	j += d;
	if (j >= len || s[j++] != ' ')
		return 0;
	if (j < len && s[j] == '[')
		j++;
	/* the source file: a Python module's name */
	for (d = j;
	     j < len && j - d < 96 &&
	     ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
	      (s[j] >= '0' && s[j] <= '9') || s[j] == '_' || s[j] == '.');
	     j++)
		;
	if (j - d < 4 || strncmp(s + j - 3, ".py", 3) || j >= len ||
	    s[j] != ':')
		return 0;
	for (d = ++j; j < len && s[j] >= '0' && s[j] <= '9'; j++)
		;
	if (j == d || j + 1 >= len || s[j] != ']' || s[j + 1] != ' ')
		return 0;
	return j + 2;
}

/* Length of the rank prefixes launchers add: "[rank3]: ", "[default0]:",
 * srun -l's "3: ", Open MPI's "[1,0]<stderr>:", Lightning's "[rank: 0] ",
 * Ray's and vLLM's "(NAME pid=N) ", vLLM's logger prefix, Docker Compose's
 * "NAME  | ", TorchX's "ROLE/N ", a paste's quote or time stamp, and
 * combinations of them, with the blanks after them. */
static size_t rank_prefix(const char *s, size_t len)
{
	size_t off = 0;

	for (int round = 0; round < 3; round++) {
		size_t i = off, d;

		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if ((d = pid_prefix(s + i, len - i)) > 0 ||
		    (d = tagged_prefix(s + i, len - i)) > 0 ||
		    (round == 0 && (d = compose_prefix(s + i, len - i)) > 0) ||
		    (round == 0 && (d = torchx_prefix(s + i, len - i)) > 0) ||
		    (round < 2 && (d = paste_prefix(s + i, len - i)) > 0) ||
		    (d = vllm_prefix(s + i, len - i)) > 0) {
			off = i + d;
		} else if (i < len && s[i] == '[') {
			size_t j = i + 1;

			while (j < len && ((s[j] >= 'a' && s[j] <= 'z') ||
			                   (s[j] >= 'A' && s[j] <= 'Z')))
				j++;
			d = j;
			while (j < len && s[j] >= '0' && s[j] <= '9')
				j++;
			if (j == d || j + 1 >= len || s[j] != ']' ||
			    s[j + 1] != ':')
				break;
			off = j + 2;
		} else {
			size_t j = i;

			while (j < len && s[j] >= '0' && s[j] <= '9')
				j++;
			if (j == i || j - i > 6 || j + 1 >= len ||
			    s[j] != ':' || s[j + 1] != ' ')
				break;
			off = j + 2;
		}
		while (off < len && s[off] == ' ')
			off++;
	}
	/* and the indentation of a log pasted as an indented block, so that
	 * "^" still anchors at the message. */
	while (off < len && (s[off] == ' ' || s[off] == '\t'))
		off++;
	return off;
}

/* ---- matching a segment ---------------------------------------------- */

static void mark_rule(struct ga_classifier *c, uint32_t rule)
{
	if (c->mark[rule])
		return;
	c->mark[rule] = 1;
	c->touched[c->n_touched++] = rule;
}

static size_t mark_owners(void *ctx, size_t pos, size_t lit)
{
	struct ga_classifier *c = ctx;
	const uint32_t *owners;
	size_t n;

	ga_ruleset_literal_owners(c->rs, lit, &owners, &n);
	for (size_t i = 0; i < n; i++)
		mark_rule(c, owners[i]);
	return pos + 1;
}

/* Record a hit of RULE at LINE; CTX (may be NULL) is the context line
 * CTX_LINE of context rule CTX_RULE that goes with it. */
static void record_hit(struct ga_classifier *c, uint32_t rule, uint64_t line,
                       const char *text, size_t len, uint64_t ctx_line,
                       uint32_t ctx_rule, const char *ctx)
{
	struct rule_rec *rec = &c->recs[rule];
	struct hit *h;

	rec->count++;
	if (rec->n >= HITS_PER_RULE)
		return;
	h = &rec->hits[rec->n];
	if (len > GA_EVIDENCE_TEXT_MAX)
		len = GA_EVIDENCE_TEXT_MAX;
	h->text = strndup(text, len);
	if (!h->text) {
		c->oom = true;
		return;
	}
	h->line = line;
	h->ctx_line = 0;
	h->ctx = NULL;
	if (ctx && ctx_line && ctx_line < line && ctx_rule < c->n_rules) {
		h->ctx = strndup(ctx, GA_EVIDENCE_TEXT_MAX);
		if (!h->ctx) {
			free(h->text);
			c->oom = true;
			return;
		}
		h->ctx_line = ctx_line;
		h->ctx_rule = ctx_rule;
	}
	rec->n++;
}

static void hit_clear(struct hit *h)
{
	free(h->text);
	free(h->ctx);
	memset(h, 0, sizeof(*h));
}

/* The context line that goes with a hit of RULE at LINE, or NULL. */
static const char *current_context(const struct ga_classifier *c, uint32_t rule,
                                   uint64_t line)
{
	if (!c->uses_ctx[rule] || !c->ctx_line || line <= c->ctx_line ||
	    line - c->ctx_line > CONTEXT_WINDOW)
		return NULL;
	return c->ctx_text;
}

/* Is a line of RULE at LINE the echo of an earlier line ("echo_of =")?
 * srun ends a step after one task failed, and then reports it cancelled
 * and its other tasks killed: the failure came first. */
static bool is_echo(const struct ga_classifier *c, uint32_t rule, uint64_t line)
{
	const uint32_t *of;
	size_t n = ga_rule_echo_of(ga_ruleset_rule(c->rs, rule), &of);

	for (size_t i = 0; i < n; i++)
		if (c->recs[of[i]].n && c->recs[of[i]].hits[0].line < line)
			return true;
	return false;
}

/* Is a line of RULE at LINE the one that an earlier line announced as not
 * an error ("ignored_after =")?  Python prints "Exception ignored in: ..."
 * and then the traceback of an exception it swallowed: the next exception
 * line is that one.  Uses the announcement up, so that it covers one line
 * only. */
static bool is_ignored(struct ga_classifier *c, uint32_t rule, uint64_t line)
{
	const uint32_t *after;
	size_t n = ga_rule_ignored_after(ga_ruleset_rule(c->rs, rule), &after);

	for (size_t i = 0; i < n; i++) {
		uint64_t at = c->announced[after[i]];

		if (at && at < line && line - at <= IGNORED_WINDOW) {
			c->announced[after[i]] = 0;
			return true;
		}
	}
	return false;
}

/* Match one segment (raw bytes, no terminator) against the rules whose
 * literals it contains. */
static void match_segment(struct ga_classifier *c, const char *seg, size_t len,
                          uint64_t line)
{
	const struct ga_prefilter *pf = c->pf;
	bool claimed = false;
	size_t n, body;

	n = clean_text(seg, len, c->norm);
	c->norm[n] = '\0';
	body = rank_prefix(c->norm, n);

	c->n_touched = 0;
	if (pf)
		ga_prefilter_scan(pf, c->norm + body, n - body, mark_owners, c);
	for (size_t i = 0; i < c->n_unfiltered; i++)
		mark_rule(c, c->unfiltered[i]);
	/* Match every candidate first: a fallback rule's match counts only
	 * when no other rule claimed the line. */
	for (size_t i = 0; i < c->n_touched; i++) {
		uint32_t r = c->touched[i];

		c->mark[r] = ga_rule_match(ga_ruleset_rule(c->rs, r),
		                           c->matcher, c->norm + body,
		                           n - body) == 1;
		if (c->mark[r] && !c->context[r] &&
		    !ga_rule_is_fallback(ga_ruleset_rule(c->rs, r)))
			claimed = true;
	}
	for (size_t i = 0; i < c->n_touched; i++) {
		uint32_t r = c->touched[i];

		/* An announced line is used up even where another rule
		 * claimed it. */
		if (c->mark[r] && !c->context[r] && !is_ignored(c, r, line) &&
		    !(claimed &&
		      ga_rule_is_fallback(ga_ruleset_rule(c->rs, r))) &&
		    !is_echo(c, r, line)) {
			const char *ctx = current_context(c, r, line);

			record_hit(c, r, line, c->norm, n,
			           ctx ? c->ctx_line : 0, c->ctx_rule, ctx);
		}
	}
	/* A context line is remembered after the line's own hits. */
	for (size_t i = 0; i < c->n_touched; i++) {
		uint32_t r = c->touched[i];

		if (c->mark[r] && c->context[r]) {
			size_t keep = n < GA_EVIDENCE_TEXT_MAX
			                      ? n
			                      : GA_EVIDENCE_TEXT_MAX;

			memcpy(c->ctx_text, c->norm, keep);
			c->ctx_text[keep] = '\0';
			c->ctx_line = line;
			c->ctx_rule = r;
		}
		if (c->mark[r])
			c->announced[r] = line;
		c->mark[r] = 0;
	}
}

/* ---- scanning a region ----------------------------------------------- */

static bool is_term(char ch)
{
	return ch == '\n' || ch == '\r';
}

static size_t segment_start(const char *r, size_t pos)
{
	while (pos > 0 && !is_term(r[pos - 1]))
		pos--;
	return pos;
}

static size_t segment_end(const char *r, size_t len, size_t pos)
{
	while (pos < len && !is_term(r[pos]))
		pos++;
	return pos;
}

/* Line number of the segment starting at region offset POS (increasing
 * from call to call within a region). */
static uint64_t line_at(struct ga_classifier *c, size_t pos)
{
	c->counted_line += ga_linereader_count_newlines(c->region + c->counted,
	                                                pos - c->counted);
	c->counted = pos;
	return c->counted_line;
}

/* Match the whole segment around region offset POS; returns the offset
 * just past its terminator. */
static size_t match_around(struct ga_classifier *c, size_t pos)
{
	size_t s = segment_start(c->region, pos);
	size_t e = segment_end(c->region, c->region_len, pos);

	match_segment(c, c->region + s, e - s, line_at(c, s));
	return e + 1;
}

static size_t on_literal(void *ctx, size_t pos, size_t lit)
{
	struct ga_classifier *c = ctx;

	(void)lit;
	return match_around(c, c->scan_base + pos) - c->scan_base;
}

static void on_region(void *ctx, const char *data, size_t len,
                      uint64_t first_line)
{
	struct ga_classifier *c = ctx;
	const struct ga_prefilter *pf = c->pf;
	size_t pos = 0;

	c->region = data;
	c->region_len = len;
	c->counted = 0;
	c->counted_line = first_line;

	if (c->n_unfiltered) {
		/* Some rule has no literal: every segment must be matched. */
		while (pos < len)
			pos = match_around(c, pos);
		return;
	}
	/* Fast path: the prefilter over the raw bytes, except that segments
	 * with escape sequences are cleaned first (colour codes can split a
	 * literal).  The line reader says when a region has none: it looked
	 * at every byte to count the lines. */
	if (c->reader.no_escape) {
		if (pf) {
			c->scan_base = 0;
			ga_prefilter_scan(pf, data, len, on_literal, c);
		}
		return;
	}
	while (pos < len) {
		const char *esc = memchr(data + pos, 0x1b, len - pos);
		size_t stop = esc ? segment_start(data, (size_t)(esc - data))
		                  : len;

		if (stop > pos && pf) {
			c->scan_base = pos;
			ga_prefilter_scan(pf, data + pos, stop - pos,
			                  on_literal, c);
		}
		if (!esc)
			break;
		pos = match_around(c, (size_t)(esc - data));
	}
}

/* ---- tail ------------------------------------------------------------ */

static void ring_feed(struct ga_classifier *c, const char *data, size_t len)
{
	if (!c->ring_size)
		return;
	if (len >= c->ring_size) {
		memcpy(c->ring, data + len - c->ring_size, c->ring_size);
		c->ring_pos = 0;
		c->ring_full = true;
		return;
	}
	while (len) {
		size_t n = c->ring_size - c->ring_pos;

		if (n > len)
			n = len;
		memcpy(c->ring + c->ring_pos, data, n);
		c->ring_pos += n;
		data += n;
		len -= n;
		if (c->ring_pos == c->ring_size) {
			c->ring_pos = 0;
			c->ring_full = true;
		}
	}
}

/* The last tail_lines lines of the ring, each as a terminal would show
 * it (the last non-empty '\r' segment), cleaned. */
static char *render_tail(struct ga_classifier *c, size_t *n_lines)
{
	size_t len = c->ring_full ? c->ring_size : c->ring_pos;
	char *lin = malloc(len + 1), *clean = NULL;
	size_t start = 0, count = 0, end;
	struct ga_buf out;

	*n_lines = 0;
	if (!lin)
		return NULL;
	if (c->ring_full) {
		memcpy(lin, c->ring + c->ring_pos, c->ring_size - c->ring_pos);
		memcpy(lin + c->ring_size - c->ring_pos, c->ring, c->ring_pos);
		/* The first line is probably cut: drop it. */
		while (start < len && lin[start] != '\n')
			start++;
		if (start < len)
			start++;
	} else if (len) {
		/* with the tail disabled the ring is NULL: memcpy(3) must not
		 * see a null pointer, even for zero bytes */
		memcpy(lin, c->ring, len);
	}
	end = len;
	if (end > start && lin[end - 1] == '\n')
		end--;
	/* Walk back to the first of the last tail_lines lines. */
	{
		size_t p = end;

		while (p > start && count < c->tail_lines) {
			p--;
			while (p > start && lin[p - 1] != '\n')
				p--;
			count++;
		}
		start = p;
	}
	ga_buf_init(&out);
	clean = malloc(GA_SEGMENT_MAX + 1);
	if (!clean) {
		free(lin);
		return NULL;
	}
	for (size_t p = start; count && p <= end;) {
		size_t e = p, s, k, n;

		while (e < end && lin[e] != '\n')
			e++;
		/* The last '\r' segment is what the terminal showed. */
		k = e;
		while (k > p && lin[k - 1] == '\r')
			k--;
		s = k;
		while (s > p && lin[s - 1] != '\r')
			s--;
		if (k - s > GA_SEGMENT_MAX)
			k = s + GA_SEGMENT_MAX;
		n = clean_text(lin + s, k - s, clean);
		ga_buf_append(&out, clean, n);
		ga_buf_putc(&out, '\n');
		(*n_lines)++;
		if (e >= end)
			break;
		p = e + 1;
	}
	free(clean);
	free(lin);
	return ga_buf_steal(&out);
}

/* ---- launcher reports ------------------------------------------------ */

#define LAUNCHER_PREFIX "launcher."

static bool is_launcher(const struct ga_rule *r)
{
	return !strncmp(ga_rule_id(r), LAUNCHER_PREFIX,
	                strlen(LAUNCHER_PREFIX));
}

/* Where NEEDLE (ASCII case ignored) ends in HAY, or NULL. */
static const char *after(const char *hay, const char *needle)
{
	const char *p = strcasestr(hay, needle);

	return p ? p + strlen(needle) : NULL;
}

/* An integer after blanks, ':' and '=' at P; false if there is none. */
static bool int_at(const char *p, long long *out)
{
	char *end;

	if (!p)
		return false;
	while (*p == ' ' || *p == '\t' || *p == ':' || *p == '=')
		p++;
	if (!(*p == '-' || (*p >= '0' && *p <= '9')))
		return false;
	errno = 0;
	*out = strtoll(p, &end, 10);
	return !errno && end != p;
}

/* Decode a launcher's report of its child: the child's exit code or
 * signal, and which rank/task it was.  Fills WHO (may stay empty), and
 * *SIG (> 0) or *CODE; returns false when the line holds no status. */
static bool launcher_status(const char *t, const char *ctx, char *who,
                            size_t who_size, int *sig, long long *code)
{
	const char *p;
	long long v;
	bool have = false;

	*sig = 0;
	who[0] = '\0';
	if ((p = after(t, "terminated with signal ")) ||
	    (p = after(t, "<Signals.SIG")) || (p = after(t, "exitcode=-SIG"))) {
		char name[16];
		size_t n = 0;

		if (p[-1] == 'G' && p[-2] == 'I')
			p -= 3; /* "<Signals.SIGKILL: 9>", multiprocessing's
			         * "exitcode=-SIGKILL": back to "SIG" */
		while (n + 1 < sizeof(name) && ((p[n] >= 'A' && p[n] <= 'Z') ||
		                                (p[n] >= 'a' && p[n] <= 'z')))
			n++;
		memcpy(name, p, n);
		name[n] = '\0';
		*sig = ga_signal_from_name(name);
		have = *sig > 0;
	}
	/* joblib/loky: "The exit codes of the workers are {SIGKILL(-9)}" */
	if (!have && (p = after(t, "{SIG")) && (p = strchr(p, '(')) &&
	    int_at(p + 1, &v) && v < 0 && v > -64) {
		*sig = (int)-v;
		have = true;
	}
	/* "Signal 9 (SIGKILL)", HTCondor's "Abnormal termination (signal 9)",
	 * cargo's "(signal: 9, SIGKILL: kill)", LSF's "Exited with signal
	 * termination: 9." */
	if (!have &&
	    ((p = after(t, "signal termination: ")) ||
	     (p = after(t, "signal: ")) || (p = after(t, "Signal ")) ||
	     (p = after(t, "terminated by signal ")) ||
	     (p = after(t, "exited on signal "))) &&
	    int_at(p, &v) && v > 0 && v < 64) {
		*sig = (int)v;
		have = true;
	}
	if (!have && (p = after(t, "EXIT CODE:")) && int_at(p, &v) && v > 0 &&
	    v < 64) {
		*sig = (int)v; /* MPICH/Intel MPI report the signal so */
		have = true;
	}
	if (!have &&
	    ((p = after(t, "exitcode")) || (p = after(t, "return code")) ||
	     (p = after(t, "returncode")) || (p = after(t, "exit status")) ||
	     (p = after(t, "exit code")) ||
	     (p = after(t, "exited with code")) ||
	     (p = after(t, "status code")) || (p = after(t, "return value"))) &&
	    int_at(p, &v)) {
		if (v < 0 && v > -64)
			*sig = (int)-v;
		else if (v > 128 && v < 128 + 64)
			*sig = (int)(v - 128);
		else
			*code = v;
		have = true;
	}
	if (!have && (p = after(t, ": Killed"))) {
		*sig = 9;
		have = true;
	}
	if (!have && (p = after(t, ": Terminated"))) {
		*sig = 15;
		have = true;
	}
	/* Who: "local_rank: 0" on the line, "rank      : 1" in the table
	 * row before it, "process 1 terminated", "task(s) 0-3:". */
	if (int_at(after(t, "local_rank"), &v))
		snprintf(who, who_size, "local rank %lld", v);
	else if (ctx && int_at(after(ctx, "rank"), &v))
		snprintf(who, who_size, "rank %lld", v);
	else if ((p = after(t, "process ")) && int_at(p, &v) && v >= 0 &&
	         after(t, "terminated"))
		snprintf(who, who_size, "process %lld", v);
	else if ((p = after(t, "tasks ")) || (p = after(t, "task "))) {
		size_t n = 0;

		while (p[n] && p[n] != ':' && n < 24)
			n++;
		snprintf(who, who_size, "task%s %.*s", p[-2] == 's' ? "s" : "",
		         (int)n, p);
	}
	return have;
}

/* Windows' crash statuses (NTSTATUS), as launchers print them: unsigned
 * (3221225477) or as a signed 32-bit exit code (-1073741819). */
static const struct {
	uint32_t status;
	const char *what;
} windows_crashes[] = {
        {0xC0000005u, "access violation"},
        {0xC00000FDu, "stack overflow"},
        {0xC0000409u, "stack buffer overrun"},
        {0xC000001Du, "illegal instruction"},
        {0xC0000094u, "integer division by zero"},
        {0xC0000374u, "heap corruption"},
};

static const char *windows_crash(long long code)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(windows_crashes); i++)
		if (code == (long long)windows_crashes[i].status ||
		    code == (long long)(int32_t)windows_crashes[i].status)
			return windows_crashes[i].what;
	return NULL;
}

/* "rank 1 was killed by SIGSEGV", "a child process exited with code 1",
 * "local rank 0 crashed with Windows status 0xC0000005 (access
 * violation)".  Returns false when TEXT holds no status. */
static bool describe_launcher(const char *text, const char *ctx,
                              struct ga_buf *out)
{
	char who[48];
	int sig;
	long long code = 0;
	const char *name;

	if (!launcher_status(text, ctx, who, sizeof(who), &sig, &code))
		return false;
	ga_buf_printf(out, "launcher: %s", who[0] ? who : "a child process");
	if (sig > 0) {
		name = ga_signal_name(sig);
		if (name)
			ga_buf_printf(out, " was killed by %s", name);
		else
			ga_buf_printf(out, " was killed by signal %d", sig);
		if (sig == 9)
			ga_buf_puts(out,
			            " (most often the out-of-memory killer)");
	} else if ((name = windows_crash(code))) {
		ga_buf_printf(out, " crashed with Windows status 0x%08llX (%s)",
		              code & 0xFFFFFFFFLL, name);
	} else {
		ga_buf_printf(out, " exited with code %lld", code);
	}
	return true;
}

/* ---- public ---------------------------------------------------------- */

struct ga_classifier *ga_classifier_create(const struct ga_ruleset *rs)
{
	struct ga_classifier *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rs = rs;
	c->n_rules = ga_ruleset_size(rs);
	c->matcher = ga_matcher_create();
	c->recs = calloc(c->n_rules + 1, sizeof(*c->recs));
	c->mark = calloc(c->n_rules + 1, 1);
	c->touched = calloc(c->n_rules + 1, sizeof(*c->touched));
	c->context = calloc(c->n_rules + 1, 1);
	c->uses_ctx = calloc(c->n_rules + 1, 1);
	c->announced = calloc(c->n_rules + 1, sizeof(*c->announced));
	if (!c->matcher || !c->recs || !c->mark || !c->touched || !c->context ||
	    !c->uses_ctx || !c->announced) {
		ga_classifier_destroy(c);
		return NULL;
	}
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct ga_rule *r = ga_ruleset_rule(rs, i);

		c->context[i] = !strncmp(ga_rule_id(r), CONTEXT_PREFIX,
		                         strlen(CONTEXT_PREFIX));
		c->uses_ctx[i] = !c->context[i] &&
		                 (ga_rule_class(r) == GA_CLASS_CODE_ERROR ||
		                  is_launcher(r));
	}
	c->n_unfiltered = ga_ruleset_unfiltered(rs, &c->unfiltered);
	c->pf = ga_ruleset_prefilter(rs);
	c->tuned = c->pf == NULL;
	ga_linereader_init(&c->reader, on_region, c);
	ga_classifier_set_tail(c, DEFAULT_TAIL_LINES, DEFAULT_TAIL_BYTES);
	return c;
}

void ga_classifier_set_tail(struct ga_classifier *c, size_t lines, size_t bytes)
{
	char *ring = NULL;

	if (bytes > TAIL_BYTES_MAX)
		bytes = TAIL_BYTES_MAX;
	if (bytes && !(ring = malloc(bytes)))
		bytes = 0;
	free(c->ring);
	c->ring = ring;
	c->ring_size = bytes;
	c->ring_pos = 0;
	c->ring_full = false;
	c->tail_lines = lines;
}

void ga_classifier_destroy(struct ga_classifier *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->recs && i < c->n_rules; i++)
		for (size_t k = 0; k < c->recs[i].n; k++)
			hit_clear(&c->recs[i].hits[k]);
	free(c->recs);
	free(c->context);
	free(c->uses_ctx);
	free(c->announced);
	free(c->mark);
	free(c->touched);
	ga_matcher_destroy(c->matcher);
	free(c->ring);
	free(c->imported_tail);
	free(c->sample);
	ga_prefilter_destroy(c->tuned_pf);
	free(c);
}

void ga_classifier_expect(struct ga_classifier *c, uint64_t bytes)
{
	if (bytes < TUNE_WORTH && !c->sample_len)
		c->tuned = true; /* the ruleset's prefilter stays */
}

/* Re-choose the prefilter's anchors from the log's first bytes (which
 * trigrams are rare depends on the log).  Until then the ruleset's own
 * prefilter runs; a failure here only costs speed. */
static void tune(struct ga_classifier *c, const char *data, size_t len)
{
	const char *sample = data;
	size_t n = len;

	if (len < GA_CLASSIFIER_TUNE_SAMPLE && !c->sample_len && len)
		c->sample = malloc(GA_CLASSIFIER_TUNE_SAMPLE);
	if (c->sample) {
		n = GA_CLASSIFIER_TUNE_SAMPLE - c->sample_len < len
		            ? GA_CLASSIFIER_TUNE_SAMPLE - c->sample_len
		            : len;
		memcpy(c->sample + c->sample_len, data, n);
		c->sample_len += n;
		if (c->sample_len < GA_CLASSIFIER_TUNE_SAMPLE)
			return;
		sample = c->sample;
		n = c->sample_len;
	}
	c->tuned_pf = ga_prefilter_tune(ga_ruleset_prefilter(c->rs), sample, n);
	if (c->tuned_pf)
		c->pf = c->tuned_pf;
	c->tuned = true;
	free(c->sample);
	c->sample = NULL;
}

/* Everything ga_classifier_feed() does but keep the tail. */
static void feed_lines(struct ga_classifier *c, const char *data, size_t len)
{
	if (!c->tuned)
		tune(c, data, len);
	ga_linereader_feed(&c->reader, data, len);
}

void ga_classifier_feed(struct ga_classifier *c, const char *data, size_t len)
{
	ring_feed(c, data, len);
	feed_lines(c, data, len);
}

void ga_verdict_init(struct ga_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->cls = GA_CLASS_UNKNOWN;
}

static void evidence_clear(struct ga_evidence *e)
{
	free(e->rule);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

void ga_verdict_finish(struct ga_verdict *v)
{
	for (size_t i = 0; i < v->n_evidence; i++)
		evidence_clear(&v->evidence[i]);
	for (size_t i = 0; i < v->n_others; i++)
		evidence_clear(&v->others[i]);
	free(v->rule);
	free(v->hint);
	free(v->tail);
	ga_verdict_init(v);
}

/* The first line at which rule I counts, UINT64_MAX for a status rule,
 * 0 when it does not count for ST. */
static uint64_t rule_first_line(const struct ga_classifier *c, size_t i,
                                const struct ga_status *st)
{
	const struct ga_rule *r = ga_ruleset_rule(c->rs, i);
	const uint32_t *to;
	size_t n;

	if (!ga_rule_status_ok(r, st))
		return 0;
	if (!ga_rule_has_patterns(r))
		return UINT64_MAX;
	if (!c->recs[i].n)
		return 0;
	/* "yields_to =": a line of one of those rules anywhere takes the
	 * decision from this one (one level: those rules do not yield in
	 * turn here). */
	n = ga_rule_yields_to(r, &to);
	for (size_t k = 0; k < n; k++)
		if (c->recs[to[k]].n &&
		    ga_rule_status_ok(ga_ruleset_rule(c->rs, to[k]), st))
			return 0;
	return c->recs[i].hits[0].line;
}

static bool set_evidence(struct ga_evidence *e, uint64_t line,
                         const struct ga_rule *r, const char *text)
{
	e->line = line;
	e->cls = ga_rule_class(r);
	e->rule = strdup(ga_rule_id(r));
	e->text = strdup(text);
	return e->rule && e->text;
}

static int cmp_evidence(const void *a, const void *b)
{
	const struct ga_evidence *x = a, *y = b;

	/* Facts (line 0) after the log lines. */
	uint64_t lx = x->line ? x->line : UINT64_MAX;
	uint64_t ly = y->line ? y->line : UINT64_MAX;

	return lx < ly ? -1 : (lx > ly);
}

/* What a hit's context adds to the evidence: for an exception, the
 * innermost traceback frame before it; for a launcher's report, the
 * child's decoded status (a fact, line 0). */
static bool add_context_evidence(struct ga_classifier *c,
                                 const struct ga_rule *r, const struct hit *h,
                                 struct ga_verdict *v)
{
	bool ok = true;

	if (h->ctx && ga_rule_class(r) == GA_CLASS_CODE_ERROR &&
	    !is_launcher(r)) {
		bool dup = false;

		for (size_t j = 0; j < v->n_evidence; j++)
			dup |= v->evidence[j].line == h->ctx_line;
		if (!dup && v->n_evidence < GA_EVIDENCE_MAX) {
			struct ga_evidence *e = &v->evidence[v->n_evidence++];

			ok = set_evidence(e, h->ctx_line,
			                  ga_ruleset_rule(c->rs, h->ctx_rule),
			                  h->ctx);
			e->cls = ga_rule_class(r);
		}
	}
	if (is_launcher(r) && v->n_evidence < GA_EVIDENCE_MAX) {
		struct ga_buf b;
		bool dup = false;

		ga_buf_init(&b);
		if (describe_launcher(h->text, h->ctx, &b) && b.data) {
			for (size_t j = 0; j < v->n_evidence; j++)
				dup |= !v->evidence[j].line &&
				       !strcmp(v->evidence[j].text, b.data);
			if (!dup)
				ok = set_evidence(&v->evidence[v->n_evidence++],
				                  0, r, b.data);
		}
		ok &= !b.failed;
		ga_buf_finish(&b);
	}
	return ok;
}

/* Add rule I's evidence for ST to V->evidence (class already chosen). */
static bool add_rule_evidence(struct ga_classifier *c, size_t i,
                              const struct ga_status *st, struct ga_verdict *v)
{
	const struct ga_rule *r = ga_ruleset_rule(c->rs, i);
	bool ok = true;

	if (!ga_rule_has_patterns(r)) {
		struct ga_buf b;

		if (v->n_evidence >= GA_EVIDENCE_MAX)
			return true;
		ga_buf_init(&b);
		ga_rule_describe_status(r, st, &b);
		ok = !b.failed && set_evidence(&v->evidence[v->n_evidence++], 0,
		                               r, b.data ? b.data : "");
		ga_buf_finish(&b);
		return ok;
	}
	for (size_t k = 0; k < c->recs[i].n; k++) {
		const struct hit *h = &c->recs[i].hits[k];
		bool dup = false;

		for (size_t j = 0; j < v->n_evidence; j++)
			dup |= v->evidence[j].line == h->line;
		if (dup || v->n_evidence >= GA_EVIDENCE_MAX)
			continue;
		ok &= set_evidence(&v->evidence[v->n_evidence++], h->line, r,
		                   h->text);
		ok &= add_context_evidence(c, r, h, v);
	}
	return ok;
}

int ga_classifier_finish(struct ga_classifier *c, const struct ga_status *st,
                         struct ga_verdict *v)
{
	struct ga_status unknown, proven;
	size_t best = SIZE_MAX;
	uint64_t best_line = 0;
	bool ok = !c->oom;

	if (!st) {
		ga_status_init(&unknown);
		st = &unknown;
	}
	/* A log that proves a failure (a shell reporting its child killed)
	 * makes a clean exit a failed one: batch scripts survive their
	 * children's crashes and exit 0. */
	if (st->known && !ga_status_failed(st)) {
		for (size_t i = 0; i < c->n_rules; i++) {
			if (c->recs[i].n &&
			    ga_rule_is_fatal(ga_ruleset_rule(c->rs, i))) {
				proven = *st;
				proven.failed_in_log = true;
				st = &proven;
				break;
			}
		}
	}
	ga_linereader_finish(&c->reader);
	ga_verdict_finish(v);
	v->status = *st;
	v->lines = ga_linereader_lines(&c->reader);
	v->bytes = c->reader.bytes;
	v->long_lines = c->reader.long_segments;

	/* Rules are in priority order: the best is the earliest-matching
	 * rule among those of the top priority that count. */
	for (size_t i = 0; i < c->n_rules; i++) {
		uint64_t line = rule_first_line(c, i, st);
		const struct ga_rule *r = ga_ruleset_rule(c->rs, i);

		if (!line)
			continue;
		if (best != SIZE_MAX &&
		    ga_rule_priority(r) <
		            ga_rule_priority(ga_ruleset_rule(c->rs, best)))
			break;
		if (best == SIZE_MAX || line < best_line) {
			best = i;
			best_line = line;
		}
	}

	if (best == SIZE_MAX) {
		/* Success needs a zero exit status (or a completion rule,
		 * which decides above): a log that simply stops, with no
		 * status, proves nothing. */
		v->cls = !st->known || ga_status_failed(st) ? GA_CLASS_UNKNOWN
		                                            : GA_CLASS_SUCCESS;
		v->hint = strdup(ga_class_default_hint(v->cls));
		ok &= v->hint != NULL;
	} else {
		const struct ga_rule *r = ga_ruleset_rule(c->rs, best);

		v->cls = ga_rule_class(r);
		v->priority = ga_rule_priority(r);
		v->rule = strdup(ga_rule_id(r));
		v->hint = strdup(ga_rule_hint(r));
		ok &= v->rule && v->hint;
		ok &= add_rule_evidence(c, best, st, v);
		for (size_t i = 0; i < c->n_rules; i++)
			if (i != best && rule_first_line(c, i, st) &&
			    ga_rule_class(ga_ruleset_rule(c->rs, i)) == v->cls)
				ok &= add_rule_evidence(c, i, st, v);
		qsort(v->evidence, v->n_evidence, sizeof(v->evidence[0]),
		      cmp_evidence);
	}

	/* First occurrence of every other class that has evidence. */
	for (int cls = 0; cls < GA_CLASS_COUNT; cls++) {
		size_t first = SIZE_MAX;
		uint64_t first_line = UINT64_MAX;

		if (best != SIZE_MAX && cls == (int)v->cls)
			continue;
		for (size_t i = 0; i < c->n_rules; i++) {
			const struct ga_rule *r = ga_ruleset_rule(c->rs, i);
			uint64_t line;

			/* The weakest evidence (a bare traceback header, a bare
			 * errno string) is listed only when it decides. */
			if ((int)ga_rule_class(r) != cls ||
			    !ga_rule_has_patterns(r) || !c->recs[i].n ||
			    ga_rule_priority(r) < WEAK_PRIORITY)
				continue;
			line = c->recs[i].hits[0].line;
			if (line < first_line) {
				first = i;
				first_line = line;
			}
		}
		/* A line that is already evidence is not shown twice. */
		for (size_t j = 0; first != SIZE_MAX && j < v->n_evidence; j++)
			if (v->evidence[j].line == first_line)
				first = SIZE_MAX;
		if (first != SIZE_MAX)
			ok &= set_evidence(&v->others[v->n_others++],
			                   first_line,
			                   ga_ruleset_rule(c->rs, first),
			                   c->recs[first].hits[0].text);
	}
	qsort(v->others, v->n_others, sizeof(v->others[0]), cmp_evidence);

	if (c->imported_tail) {
		v->tail = strdup(c->imported_tail);
		v->tail_lines = c->imported_tail_lines;
	} else {
		v->tail = render_tail(c, &v->tail_lines);
	}
	ok &= v->tail != NULL;
	return ok ? 0 : -ENOMEM;
}

static void write_evidence(struct ga_buf *out, const struct ga_evidence *e,
                           size_t n)
{
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < n; i++) {
		int first = 1;

		if (i)
			ga_buf_putc(out, ',');
		ga_buf_putc(out, '{');
		ga_json_key(out, &first, "line");
		ga_buf_printf(out, "%llu", (unsigned long long)e[i].line);
		ga_json_key(out, &first, "class");
		ga_json_str(out, ga_class_name(e[i].cls));
		ga_json_key(out, &first, "rule");
		ga_json_str(out, e[i].rule);
		ga_json_key(out, &first, "text");
		ga_json_str(out, e[i].text);
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, ']');
}

void ga_verdict_write_json(const struct ga_verdict *v, struct ga_buf *out)
{
	int first = 1;

	ga_buf_putc(out, '{');
	ga_json_key(out, &first, "class");
	ga_json_str(out, ga_class_name(v->cls));
	ga_json_key(out, &first, "title");
	ga_json_str(out, ga_class_title(v->cls));
	ga_json_key(out, &first, "rule");
	ga_json_str(out, v->rule);
	ga_json_key(out, &first, "hint");
	ga_json_str(out, v->hint);
	ga_json_key(out, &first, "evidence");
	write_evidence(out, v->evidence, v->n_evidence);
	ga_json_key(out, &first, "also_seen");
	write_evidence(out, v->others, v->n_others);
	ga_json_key(out, &first, "exit_code");
	if (v->status.known && !v->status.signal)
		ga_buf_printf(out, "%d", v->status.exit_code);
	else
		ga_buf_puts(out, "null");
	ga_json_key(out, &first, "signal");
	if (v->status.known && v->status.signal) {
		const char *name = ga_signal_name(v->status.signal);

		if (name)
			ga_json_str(out, name);
		else
			ga_buf_printf(out, "%d", v->status.signal);
	} else {
		ga_buf_puts(out, "null");
	}
	if (v->status.state != GA_STATE_NONE) {
		ga_json_key(out, &first, "scheduler_state");
		ga_json_str(out, ga_sched_state_name(v->status.state));
	}
	if (v->status.oom_kills) {
		ga_json_key(out, &first, "oom_kills");
		ga_buf_printf(out, "%d", v->status.oom_kills);
	}
	ga_json_key(out, &first, "lines");
	ga_buf_printf(out, "%llu", (unsigned long long)v->lines);
	ga_json_key(out, &first, "bytes");
	ga_buf_printf(out, "%llu", (unsigned long long)v->bytes);
	ga_json_key(out, &first, "long_lines");
	ga_buf_printf(out, "%llu", (unsigned long long)v->long_lines);
	ga_buf_putc(out, '}');
}

int ga_classify_fd(const struct ga_ruleset *rs, int fd,
                   const struct ga_status *st, struct ga_verdict *v)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	/* 32 KiB reads: the chunk stays in cache from read(2) to the scan;
	 * with 128 KiB, read(2) alone took three times the system time.
	 * Two buffers in turn, so that the previous chunk is still there
	 * when the next arrives: the tail needs a chunk's bytes only when
	 * the chunks after it hold fewer than the tail does, and they are
	 * copied then, not on every read (that was half the log's bytes). */
	enum { READ_SIZE = 1 << 15 };
	char *buf = malloc(2 * READ_SIZE);
	const char *prev = NULL;
	size_t prev_len = 0;
	int rc = 0, cur = 0;
	struct stat fst;
	off_t at;

	if (!c || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) &&
	    (at = lseek(fd, 0, SEEK_CUR)) >= 0 && fst.st_size >= at)
		ga_classifier_expect(c, (uint64_t)(fst.st_size - at));
	for (;;) {
		char *b = buf + (size_t)cur * READ_SIZE;
		ssize_t n = ga_read_some(fd, b, READ_SIZE);

		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		if (prev && (size_t)n < c->ring_size)
			ring_feed(c, prev, prev_len);
		feed_lines(c, b, (size_t)n);
		prev = b;
		prev_len = (size_t)n;
		cur ^= 1;
	}
	if (prev)
		ring_feed(c, prev, prev_len);
	if (ga_classifier_finish(c, st, v) < 0 && rc == 0)
		rc = -ENOMEM;
out:
	free(buf);
	ga_classifier_destroy(c);
	return rc;
}

/* ---- state transport ------------------------------------------------- */

#define STATE_TAIL_MAX (TAIL_BYTES_MAX)

void ga_classifier_write_state(struct ga_classifier *c, struct ga_buf *out)
{
	size_t tail_lines = 0;
	char *tail;
	int first = 1;

	ga_linereader_finish(&c->reader);
	tail = c->imported_tail ? strdup(c->imported_tail)
	                        : render_tail(c, &tail_lines);
	if (c->imported_tail)
		tail_lines = c->imported_tail_lines;
	ga_buf_putc(out, '{');
	ga_json_key(out, &first, "v");
	ga_buf_puts(out, "1");
	ga_json_key(out, &first, "lines");
	ga_buf_printf(out, "%llu",
	              (unsigned long long)ga_linereader_lines(&c->reader));
	ga_json_key(out, &first, "bytes");
	ga_buf_printf(out, "%llu", (unsigned long long)c->reader.bytes);
	ga_json_key(out, &first, "long_lines");
	ga_buf_printf(out, "%llu", (unsigned long long)c->reader.long_segments);
	ga_json_key(out, &first, "tail_lines");
	ga_buf_printf(out, "%zu", tail_lines);
	ga_json_key(out, &first, "tail");
	ga_json_str(out, tail ? tail : "");
	ga_json_key(out, &first, "rules");
	ga_buf_putc(out, '[');
	for (size_t i = 0, n = 0; i < c->n_rules; i++) {
		const struct rule_rec *rec = &c->recs[i];

		if (!rec->count)
			continue;
		if (n++)
			ga_buf_putc(out, ',');
		ga_buf_puts(out, "{\"id\":");
		ga_json_str(out, ga_rule_id(ga_ruleset_rule(c->rs, i)));
		ga_buf_printf(out, ",\"count\":%llu,\"hits\":[",
		              (unsigned long long)rec->count);
		for (size_t k = 0; k < rec->n; k++) {
			const struct hit *h = &rec->hits[k];

			ga_buf_printf(
			        out, "%s{\"line\":%llu,\"text\":", k ? "," : "",
			        (unsigned long long)h->line);
			ga_json_str(out, h->text);
			/* Optional (readers before them ignore them). */
			if (h->ctx) {
				ga_buf_printf(
				        out, ",\"ctx_line\":%llu,\"ctx_rule\":",
				        (unsigned long long)h->ctx_line);
				ga_json_str(out, ga_rule_id(ga_ruleset_rule(
				                         c->rs, h->ctx_rule)));
				ga_buf_puts(out, ",\"ctx\":");
				ga_json_str(out, h->ctx);
			}
			ga_buf_putc(out, '}');
		}
		ga_buf_puts(out, "]}");
	}
	ga_buf_puts(out, "]}");
	free(tail);
}

static bool get_u64(const struct ga_json *o, const char *key, uint64_t *out)
{
	int64_t v;

	if (!ga_json_get_int(o, key, &v) || v < 0)
		return false;
	*out = (uint64_t)v;
	return true;
}

static ssize_t find_rule(const struct ga_classifier *c, const char *id)
{
	for (size_t i = 0; i < c->n_rules; i++)
		if (!strcmp(ga_rule_id(ga_ruleset_rule(c->rs, i)), id))
			return (ssize_t)i;
	return -1;
}

int ga_classifier_read_state(struct ga_classifier *c, const char *json,
                             size_t len, const char **err)
{
	struct ga_json *root;
	const struct ga_json *rules;
	const char *tail;
	uint64_t lines, bytes, long_lines, tail_lines = 0;
	int rc = -EINVAL;

	root = ga_json_parse(json, len, err);
	if (!root)
		return (err && *err && !strcmp(*err, "out of memory"))
		               ? -ENOMEM
		               : -EINVAL;
	rules = ga_json_get(root, "rules");
	tail = ga_json_get_str(root, "tail");
	if (!get_u64(root, "lines", &lines) ||
	    !get_u64(root, "bytes", &bytes) ||
	    !get_u64(root, "long_lines", &long_lines) || !rules ||
	    rules->type != GA_JSON_ARRAY || !tail) {
		if (err)
			*err = "missing or malformed field";
		goto out;
	}
	get_u64(root, "tail_lines", &tail_lines);
	/* Forget what this classifier gathered itself. */
	for (size_t i = 0; i < c->n_rules; i++) {
		for (size_t k = 0; k < c->recs[i].n; k++)
			hit_clear(&c->recs[i].hits[k]);
		memset(&c->recs[i], 0, sizeof(c->recs[i]));
	}
	c->ctx_line = 0;
	for (size_t i = 0; i < rules->n; i++) {
		const struct ga_json *r = &rules->items[i];
		const struct ga_json *hits = ga_json_get(r, "hits");
		const char *id = ga_json_get_str(r, "id");
		uint64_t count;
		ssize_t at;

		if (!id || !get_u64(r, "count", &count) || !hits ||
		    hits->type != GA_JSON_ARRAY) {
			if (err)
				*err = "malformed rule entry";
			goto out;
		}
		at = find_rule(c, id);
		if (at < 0)
			continue; /* rules changed since: ignore */
		c->recs[at].count = 0;
		for (size_t k = 0; k < hits->n && k < HITS_PER_RULE; k++) {
			const struct ga_json *hj = &hits->items[k];
			const char *text = ga_json_get_str(hj, "text");
			const char *ctx = ga_json_get_str(hj, "ctx");
			const char *ctx_id = ga_json_get_str(hj, "ctx_rule");
			ssize_t ctx_at = ctx_id ? find_rule(c, ctx_id) : -1;
			uint64_t line, ctx_line = 0;

			if (!text || !get_u64(hj, "line", &line) || line == 0) {
				if (err)
					*err = "malformed hit";
				goto out;
			}
			/* Context of unknown rules, or not before the hit, is
			 * dropped. */
			if (!ctx || ctx_at < 0 || !c->context[ctx_at] ||
			    !get_u64(hj, "ctx_line", &ctx_line) ||
			    ctx_line == 0 || ctx_line >= line)
				ctx = NULL;
			record_hit(c, (uint32_t)at, line, text, strlen(text),
			           ctx_line, ctx_at < 0 ? 0 : (uint32_t)ctx_at,
			           ctx);
		}
		/* record_hit counted the stored hits; the sender knew more. */
		if (count > c->recs[at].count)
			c->recs[at].count = count;
	}
	c->reader.bytes = bytes;
	c->reader.newlines = lines;
	c->reader.last = '\n';
	c->reader.long_segments = long_lines;
	free(c->imported_tail);
	c->imported_tail = strndup(tail, STATE_TAIL_MAX);
	c->imported_tail_lines = (size_t)(tail_lines < 100000 ? tail_lines
	                                                      : 100000);
	rc = c->imported_tail && !c->oom ? 0 : -ENOMEM;
out:
	ga_json_free(root);
	return rc;
}
