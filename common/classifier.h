/* SPDX-License-Identifier: MIT */
/* The streaming classifier: feed a log in chunks of any size, then ask
 * why the job ended.
 *
 * Memory is bounded whatever the input: one segment buffer, a fixed tail
 * and a few evidence lines per rule.  Every line is seen by the literal
 * prefilter; only lines that contain some rule's literal reach PCRE2.
 *
 * The verdict is the class of the highest-priority rule with evidence
 * whose conditions hold for how the job ended (ties: earliest line), not
 * the first line that matched: a CUDA OOM followed by hundreds of NCCL
 * timeouts is cuda_oom.  With no such rule, a job that exited 0 is
 * "success" and anything else (a failure, or no known status) "unknown":
 * without a status, success needs a completion rule (class success).
 */
#ifndef GPUALERT_COMMON_CLASSIFIER_H
#define GPUALERT_COMMON_CLASSIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "rules.h"
#include "status.h"
#include "taxonomy.h"

#define GA_EVIDENCE_MAX 8
#define GA_EVIDENCE_TEXT_MAX 512

struct ga_evidence {
	uint64_t line; /* 1-based; 0 for a fact about how it ended */
	enum ga_class cls;
	char *rule; /* rule id */
	char *text; /* the line, cleaned, at most ~512 bytes */
};

struct ga_verdict {
	enum ga_class cls;
	char *rule; /* deciding rule; NULL for success/unknown */
	char *hint;
	int priority;
	/* The lines that decided it: the deciding class's evidence, by line. */
	struct ga_evidence evidence[GA_EVIDENCE_MAX];
	size_t n_evidence;
	/* The first occurrence of every other class with evidence (rules of
	 * priority 20 and up: the weakest evidence is shown only when it
	 * decides), by line. */
	struct ga_evidence others[GA_CLASS_COUNT];
	size_t n_others;
	struct ga_status status;
	uint64_t lines;
	uint64_t bytes;
	uint64_t long_lines; /* lines matched on a prefix only */
	char *tail;          /* last lines, cleaned, '\n'-separated */
	size_t tail_lines;
};

struct ga_classifier;

/* Create a classifier over RS, which is borrowed and must outlive it.
 * Returns NULL on ENOMEM. */
struct ga_classifier *ga_classifier_create(const struct ga_ruleset *rs);
void ga_classifier_destroy(struct ga_classifier *c);

/* Keep the last LINES lines (at most BYTES bytes) for the verdict's tail.
 * Defaults: 60 lines, 16 KiB.  Call before the first feed. */
void ga_classifier_set_tail(struct ga_classifier *c, size_t lines,
                            size_t bytes);

/* The prefilter's literals are re-chosen from this many first bytes of a
 * log long enough to repay it. */
#define GA_CLASSIFIER_TUNE_SAMPLE (64 * 1024)

/* The log's length in bytes, when the caller knows it (a file): a log
 * shorter than re-choosing the prefilter's literals pays back for (about
 * 14 MiB) is read with the ruleset's own literals.  Call before the first
 * feed; without it, the literals are re-chosen from the first
 * GA_CLASSIFIER_TUNE_SAMPLE bytes of any log that long. */
void ga_classifier_expect(struct ga_classifier *c, uint64_t bytes);

/* Feed the next LEN bytes of the log. */
void ga_classifier_feed(struct ga_classifier *c, const char *data, size_t len);

/* End of input: decide with ST (NULL: unknown) and fill V, which the
 * caller initialises with ga_verdict_init() and releases with
 * ga_verdict_finish().  May be called more than once (e.g. once the
 * scheduler state is known).  Returns 0, or -ENOMEM (V then holds what
 * could be filled). */
int ga_classifier_finish(struct ga_classifier *c, const struct ga_status *st,
                         struct ga_verdict *v);

void ga_verdict_init(struct ga_verdict *v);
void ga_verdict_finish(struct ga_verdict *v);

/* The verdict as one JSON object (no newline), the schema of
 * `gpualert classify --json` (README.md). */
void ga_verdict_write_json(const struct ga_verdict *v, struct ga_buf *out);

/* Serialise what the classifier has gathered (matches per rule, counts,
 * the tail) as one JSON object, after flushing the unterminated last
 * line.  The capture helper sends this to the privileged side, which
 * does not know the log but knows how the task ended. */
void ga_classifier_write_state(struct ga_classifier *c, struct ga_buf *out);

/* Load a state written by ga_classifier_write_state into C, a fresh
 * classifier over the same rules, replacing what it gathered.  JSON is
 * untrusted: sizes are bounded, unknown rule ids ignored.  Returns 0,
 * -EINVAL (malformed; *ERR static) or -ENOMEM. */
int ga_classifier_read_state(struct ga_classifier *c, const char *json,
                             size_t len, const char **err);

/* Convenience: classify the whole of file descriptor FD.  Returns 0, or
 * -errno on a read error (V holds the verdict so far). */
int ga_classify_fd(const struct ga_ruleset *rs, int fd,
                   const struct ga_status *st, struct ga_verdict *v);

#endif
