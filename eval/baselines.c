/* SPDX-License-Identifier: MIT */
#include "eval.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define KEYWORD_MAX 256

/* ---- exit-code baseline ------------------------------------------------ */

const char ga_eval_exit_code_description[] =
        "exit 0 -> success; SIGKILL (-9, 137) -> host_oom; SIGSEGV, SIGBUS, "
        "SIGILL, SIGABRT (-11, -7, -4, -6; 139, 135, 132, 134) -> segfault; "
        "SIGTERM (-15, 143) -> cancelled; exit 1 -> code_error; "
        "anything else -> unknown";

enum ga_class ga_eval_exit_code_classify(const struct ga_status *st)
{
	int sig;

	if (!st || !st->known)
		return GA_CLASS_UNKNOWN;
	sig = st->signal;
	/* A shell reports a child killed by signal N as exit 128+N; an
	 * admin reading sacct sees either form, so the baseline takes both. */
	if (!sig && st->exit_code > 128 && st->exit_code < 128 + 65)
		sig = st->exit_code - 128;
	if (sig) {
		switch (sig) {
		case SIGKILL:
			return GA_CLASS_HOST_OOM;
		case SIGSEGV:
		case SIGBUS:
		case SIGILL:
		case SIGABRT:
			return GA_CLASS_SEGFAULT;
		case SIGTERM:
			return GA_CLASS_CANCELLED;
		default:
			return GA_CLASS_UNKNOWN;
		}
	}
	if (st->exit_code == 0)
		return GA_CLASS_SUCCESS;
	if (st->exit_code == 1)
		return GA_CLASS_CODE_ERROR;
	return GA_CLASS_UNKNOWN;
}

/* ---- keyword list ------------------------------------------------------ */

struct keyword {
	enum ga_class cls;
	char *text;
	size_t len;
};

struct ga_eval_keywords {
	struct keyword *kw;
	size_t n;
	size_t maxlen;
};

void ga_eval_keywords_destroy(struct ga_eval_keywords *kw)
{
	if (!kw)
		return;
	for (size_t i = 0; i < kw->n; i++)
		free(kw->kw[i].text);
	free(kw->kw);
	free(kw);
}

size_t ga_eval_keywords_count(const struct ga_eval_keywords *kw)
{
	return kw ? kw->n : 0;
}

static int keywords_add(struct ga_eval_keywords *kw, enum ga_class cls,
                        const char *s, size_t len)
{
	struct keyword *tmp = realloc(kw->kw, (kw->n + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	kw->kw = tmp;
	tmp[kw->n].cls = cls;
	tmp[kw->n].len = len;
	tmp[kw->n].text = strndup(s, len);
	if (!tmp[kw->n].text)
		return -ENOMEM;
	kw->n++;
	if (len > kw->maxlen)
		kw->maxlen = len;
	return 0;
}

struct ga_eval_keywords *ga_eval_keywords_parse(const char *name,
                                                const char *text,
                                                struct ga_diag *diag)
{
	struct ga_eval_keywords *kw = calloc(1, sizeof(*kw));
	const char *p = text;
	unsigned lineno = 0;
	bool bad = false;

	if (!kw)
		return NULL;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *tab;
		char cname[32];
		size_t clen;
		int cls;

		lineno++;
		if (len && p[len - 1] == '\r')
			len--;
		if (len == 0 || p[0] == '#')
			goto next;
		tab = memchr(p, '\t', len);
		if (!tab) {
			ga_diag_error(diag, name, lineno,
			              "expected CLASS<TAB>KEYWORD");
			bad = true;
			goto next;
		}
		clen = (size_t)(tab - p);
		if (clen >= sizeof(cname)) {
			ga_diag_error(diag, name, lineno, "unknown class id");
			bad = true;
			goto next;
		}
		memcpy(cname, p, clen);
		cname[clen] = '\0';
		cls = ga_class_from_name(cname);
		if (cls < 0) {
			ga_diag_error(diag, name, lineno,
			              "unknown class id '%s'", cname);
			bad = true;
			goto next;
		}
		len -= clen + 1;
		if (len == 0 || len > KEYWORD_MAX) {
			ga_diag_error(diag, name, lineno,
			              "keyword must be 1 to %d bytes",
			              KEYWORD_MAX);
			bad = true;
			goto next;
		}
		if (keywords_add(kw, (enum ga_class)cls, tab + 1, len) < 0) {
			ga_eval_keywords_destroy(kw);
			return NULL;
		}
	next:
		if (!eol)
			break;
		p = eol + 1;
	}
	if (bad) {
		ga_eval_keywords_destroy(kw);
		return NULL;
	}
	return kw;
}

/* ---- streaming scan ---------------------------------------------------- */

/* Memory stays bounded by keeping only the last maxlen-1 bytes between
 * feeds: an occurrence that straddles two chunks is found in the
 * "junction" (that tail plus the next chunk's first maxlen-1 bytes),
 * every other one inside a single chunk.  memmem(3) gives each keyword's
 * first occurrence per region, which is all that the earliest-wins rule
 * needs. */
struct ga_eval_kwscan {
	const struct ga_eval_keywords *kw;
	size_t keep; /* maxlen - 1 */
	char *tail;  /* last KEEP bytes fed (fewer at the start) */
	size_t tail_len;
	char *junction;    /* 2 * KEEP bytes */
	uint64_t consumed; /* bytes fed so far */
	uint64_t best_pos; /* UINT64_MAX: nothing found yet */
	size_t best_idx;
};

struct ga_eval_kwscan *ga_eval_kwscan_create(const struct ga_eval_keywords *kw)
{
	struct ga_eval_kwscan *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->kw = kw;
	s->keep = kw->maxlen ? kw->maxlen - 1 : 0;
	s->best_pos = UINT64_MAX;
	/* +1: malloc(0) may return NULL. */
	s->tail = malloc(s->keep + 1);
	s->junction = malloc(2 * s->keep + 1);
	if (!s->tail || !s->junction) {
		ga_eval_kwscan_destroy(s);
		return NULL;
	}
	return s;
}

void ga_eval_kwscan_destroy(struct ga_eval_kwscan *s)
{
	if (!s)
		return;
	free(s->tail);
	free(s->junction);
	free(s);
}

static void search(struct ga_eval_kwscan *s, const char *hay, size_t len,
                   uint64_t base)
{
	for (size_t i = 0; i < s->kw->n; i++) {
		const struct keyword *k = &s->kw->kw[i];
		const char *hit = memmem(hay, len, k->text, k->len);
		uint64_t pos;

		if (!hit)
			continue;
		pos = base + (uint64_t)(hit - hay);
		if (pos < s->best_pos ||
		    (pos == s->best_pos && i < s->best_idx)) {
			s->best_pos = pos;
			s->best_idx = i;
		}
	}
}

bool ga_eval_kwscan_done(const struct ga_eval_kwscan *s)
{
	/* An occurrence not seen yet ends past the input so far, so it
	 * starts after consumed - maxlen: it cannot beat (or tie) the best
	 * once best_pos + maxlen <= consumed. */
	return s->best_pos != UINT64_MAX &&
	       s->best_pos + s->kw->maxlen <= s->consumed;
}

void ga_eval_kwscan_feed(struct ga_eval_kwscan *s, const char *data, size_t len)
{
	if (len == 0 || s->kw->n == 0 || ga_eval_kwscan_done(s))
		return;
	if (s->tail_len) {
		size_t head = len < s->keep ? len : s->keep;

		memcpy(s->junction, s->tail, s->tail_len);
		memcpy(s->junction + s->tail_len, data, head);
		search(s, s->junction, s->tail_len + head,
		       s->consumed - s->tail_len);
	}
	search(s, data, len, s->consumed);
	if (len >= s->keep) {
		memcpy(s->tail, data + len - s->keep, s->keep);
		s->tail_len = s->keep;
	} else {
		size_t old = s->tail_len + len > s->keep ? s->keep - len
		                                         : s->tail_len;

		memmove(s->tail, s->tail + s->tail_len - old, old);
		memcpy(s->tail + old, data, len);
		s->tail_len = old + len;
	}
	s->consumed += len;
}

enum ga_class ga_eval_kwscan_result(const struct ga_eval_kwscan *s,
                                    const struct ga_status *st,
                                    uint64_t *offset)
{
	if (offset)
		*offset = s->best_pos;
	if (s->best_pos != UINT64_MAX)
		return s->kw->kw[s->best_idx].cls;
	if (st && st->known && !ga_status_failed(st))
		return GA_CLASS_SUCCESS;
	return GA_CLASS_UNKNOWN;
}
