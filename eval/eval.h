/* SPDX-License-Identifier: MIT */
/* The evaluation harness: score gpualert and two baselines on labelled
 * logs.
 *
 * A manifest is a TSV file with a header line naming its columns; the
 * columns `file` (relative to the manifest's directory), `class` (a class
 * id of the taxonomy) and `exit_code` (an integer; -N: killed by signal N;
 * empty: not known, as for logs pasted into public threads) are required,
 * any others are ignored.  Every log is classified by three
 * systems in the same run:
 *
 *   gpualert   the ordered rules (ga_classify_fd) with the manifest's status
 *   keywords   unordered keyword matching: the class of the keyword found
 *              earliest in the log; none found: success on exit 0, else
 *              unknown
 *   exit-code  the exit status alone
 *
 * and the three confusion matrices are scored per class (precision,
 * recall, F1), as macro-F1 and accuracy.  Macro-F1 is the mean F1 over the
 * classes present in the gold labels; a class that is never predicted has
 * precision 0.
 *
 * Nothing here prints: problems go to a struct ga_diag, reports to a
 * struct ga_buf.
 */
#ifndef GPUALERT_EVAL_EVAL_H
#define GPUALERT_EVAL_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "rules.h"
#include "status.h"
#include "taxonomy.h"
#include "util.h"

/* ---- metrics ---------------------------------------------------------- */

/* Rows: gold class; columns: predicted class. */
struct ga_eval_confusion {
	unsigned long n[GA_CLASS_COUNT][GA_CLASS_COUNT];
};

struct ga_eval_class_score {
	unsigned long support;   /* gold items of the class */
	unsigned long predicted; /* items predicted as the class */
	unsigned long tp;
	double precision; /* 0 when never predicted */
	double recall;    /* 0 when support is 0 */
	double f1;        /* 0 when precision + recall is 0 */
};

struct ga_eval_scores {
	struct ga_eval_class_score cls[GA_CLASS_COUNT];
	unsigned long total;
	unsigned long correct;
	unsigned n_gold_classes; /* classes with support > 0 */
	double macro_f1;         /* mean F1 over those; 0 when none */
	double accuracy;         /* correct / total; 0 when empty */
};

/* One line stating the definition above, for reports. */
extern const char ga_eval_macro_f1_definition[];

void ga_eval_confusion_init(struct ga_eval_confusion *cm);

/* Count one item.  Out-of-range classes are ignored. */
void ga_eval_confusion_add(struct ga_eval_confusion *cm, enum ga_class gold,
                           enum ga_class pred);

/* Score CM into S.  Cannot fail. */
void ga_eval_score(const struct ga_eval_confusion *cm,
                   struct ga_eval_scores *s);

/* ---- baselines -------------------------------------------------------- */

/* The exit-code baseline: a class from the status alone (see
 * ga_eval_exit_code_description).  An unknown status is unknown. */
enum ga_class ga_eval_exit_code_classify(const struct ga_status *st);

/* One line describing the exit-code baseline's mapping, for reports. */
extern const char ga_eval_exit_code_description[];

struct ga_eval_keywords;

/* The keyword list compiled into the binary from eval/keywords.tsv. */
extern const char ga_eval_builtin_keywords[];

/* Parse a keyword list: lines "CLASS<TAB>KEYWORD", '#' comments and blank
 * lines ignored, keywords case-sensitive plain substrings (at most 256
 * bytes), kept in file order.  NAME is used in "NAME:LINE: ..." messages
 * to DIAG (may be NULL).  Returns NULL on any error (all of them are
 * reported) or ENOMEM.  TEXT is copied. */
GA_MUST_CHECK struct ga_eval_keywords *ga_eval_keywords_parse(
        const char *name, const char *text, struct ga_diag *diag);
void ga_eval_keywords_destroy(struct ga_eval_keywords *kw);
size_t ga_eval_keywords_count(const struct ga_eval_keywords *kw);

/* Streaming keyword scan in bounded memory (the longest keyword's length
 * plus a few bytes): feed the log in chunks of any size; the scan finds
 * the keyword occurrence that starts earliest (ties: the keyword first in
 * file order), whatever the chunking.  KW is borrowed and must outlive
 * it.  Returns NULL on ENOMEM. */
struct ga_eval_kwscan;
GA_MUST_CHECK struct ga_eval_kwscan *ga_eval_kwscan_create(
        const struct ga_eval_keywords *kw);
void ga_eval_kwscan_destroy(struct ga_eval_kwscan *s);

void ga_eval_kwscan_feed(struct ga_eval_kwscan *s, const char *data,
                         size_t len);

/* True once more input cannot change the result (callers may stop
 * reading). */
bool ga_eval_kwscan_done(const struct ga_eval_kwscan *s);

/* The prediction: the winning keyword's class, else success when ST says
 * exit 0, else unknown.  *OFFSET (may be NULL) gets the 0-based byte
 * offset of the winning keyword, or UINT64_MAX when none was found. */
enum ga_class ga_eval_kwscan_result(const struct ga_eval_kwscan *s,
                                    const struct ga_status *st,
                                    uint64_t *offset);

/* ---- a run over manifests --------------------------------------------- */

enum ga_eval_system {
	GA_EVAL_GPUALERT = 0,
	GA_EVAL_KEYWORDS,
	GA_EVAL_EXIT_CODE,
	GA_EVAL_SYSTEMS,
};

/* "gpualert", "keywords", "exit-code"; "?" when out of range. */
const char *ga_eval_system_name(enum ga_eval_system sys);

/* An empty exit_code field: the status is not known. */
#define GA_EVAL_EXIT_UNKNOWN (-1000)

struct ga_eval_item {
	char *file;     /* as written in the manifest */
	char *manifest; /* the manifest's path */
	unsigned line;  /* its line in the manifest */
	enum ga_class gold;
	int exit_code; /* manifest convention: -N = signal N;
	                * GA_EVAL_EXIT_UNKNOWN: not known */
	enum ga_class pred[GA_EVAL_SYSTEMS];
	/* gpualert's deciding rule and first evidence line (NULL if none);
	 * for success/unknown, the first other class's evidence if any. */
	char *rule;
	char *evidence;
	uint64_t evidence_line; /* 0: a fact about how it ended */
};

struct ga_eval;

/* A run scoring with RS and KW, both borrowed: they must outlive it.
 * Returns NULL on ENOMEM. */
GA_MUST_CHECK struct ga_eval *ga_eval_create(const struct ga_ruleset *rs,
                                             const struct ga_eval_keywords *kw);
void ga_eval_destroy(struct ga_eval *ev);

/* Read the manifest at PATH and classify each of its logs with the three
 * systems.  Bad rows (wrong column count, unknown class, bad exit code,
 * missing or unreadable log) are reported to DIAG as "PATH:LINE: ..." and
 * skipped; ga_eval_skipped() counts them.  Returns 0 (even with bad rows),
 * -errno when the manifest cannot be read, -EINVAL when its header lacks a
 * required column, -ENOMEM. */
GA_MUST_CHECK int ga_eval_add_manifest(struct ga_eval *ev, const char *path,
                                       struct ga_diag *diag);

size_t ga_eval_count(const struct ga_eval *ev);
size_t ga_eval_skipped(const struct ga_eval *ev);
/* The I-th scored item; valid until the next add or destroy. */
const struct ga_eval_item *ga_eval_item(const struct ga_eval *ev, size_t i);
const struct ga_eval_confusion *ga_eval_confusion(const struct ga_eval *ev,
                                                  enum ga_eval_system sys);
/* The manifests added, in order; valid as long as EV. */
size_t ga_eval_manifest_count(const struct ga_eval *ev);
const char *ga_eval_manifest(const struct ga_eval *ev, size_t i);

/* ---- reports ----------------------------------------------------------- */

/* The human report: a header describing the systems and macro-F1, the
 * summary table, then per system the per-class table and the confusion
 * matrix.  With ERRORS, every log gpualert misclassified, with its
 * deciding evidence.  Appends to OUT (check OUT->failed). */
void ga_eval_report_text(const struct ga_eval *ev, bool errors,
                         struct ga_buf *out);

/* The same numbers as one JSON object, without a trailing newline. */
void ga_eval_report_json(const struct ga_eval *ev, bool errors,
                         struct ga_buf *out);

/* One self-contained SVG document: the three confusion matrices side by
 * side, cells shaded by their row-normalised value, counts printed. */
void ga_eval_report_svg(const struct ga_eval *ev, struct ga_buf *out);

#endif
