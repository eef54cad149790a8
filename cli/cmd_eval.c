/* SPDX-License-Identifier: MIT */
/* gpualert eval: score gpualert and two baselines on labelled logs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli.h"
#include "diag.h"
#include "eval.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert eval [--rules DIR] [--keywords FILE] [--svg FILE]\n"
	        "                     [--json] [--errors] [--count-right LIST]\n"
	        "                     MANIFEST...\n\n"
	        "Score gpualert, unordered keyword matching and exit-code\n"
	        "inspection on the labelled logs of each MANIFEST (pooled): per-class\n"
	        "precision, recall and F1, macro-F1, accuracy and the confusion\n"
	        "matrices.  A manifest is a TSV file whose header names the columns\n"
	        "file (relative to the manifest), class and exit_code (-N: killed by\n"
	        "signal N); other columns are ignored.  Bad rows are reported as\n"
	        "MANIFEST:LINE: and skipped.  Exit status: 0 when every row was\n"
	        "scored, 1 when some were skipped or a manifest was unusable.\n\n"
	        "  --rules DIR      admin rules directory (default: $GPUALERT_RULES_DIR,\n"
	        "                   else the configured rules.d)\n"
	        "  --keywords FILE  the keyword baseline's list (CLASS<TAB>KEYWORD;\n"
	        "                   default: the built-in eval/keywords.tsv)\n"
	        "  --svg FILE       write the three confusion matrices as one SVG\n"
	        "  --json           print one JSON object instead of the tables\n"
	        "  --errors         list every log gpualert misclassified, with its\n"
	        "                   deciding evidence line\n"
	        "  --count-right LIST\n"
	        "                   LIST names logs, one per line as in the file\n"
	        "                   column; add gpualert's macro-F1 and accuracy had\n"
	        "                   its verdict on each of them been right (text\n"
	        "                   report only)\n");
}

/* The logs of a --count-right list: its non-empty lines, sorted for
 * bsearch. */
struct log_list {
	char *text;
	char **name;
	size_t n;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_log_list(const char *path, struct log_list *l)
{
	size_t cap = 0;
	int err = ga_read_file(path, 16 << 20, &l->text, NULL);

	if (err < 0) {
		cli_error("eval: %s: %s", path, strerror(-err));
		return -1;
	}
	for (char *line = l->text, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (!*line)
			continue;
		if (l->n == cap) {
			char **grown;

			cap = cap ? 2 * cap : 64;
			grown = realloc(l->name, cap * sizeof(*grown));
			if (!grown) {
				cli_error("eval: out of memory");
				return -1;
			}
			l->name = grown;
		}
		l->name[l->n++] = line;
	}
	if (l->n)
		qsort(l->name, l->n, sizeof(*l->name), cmp_name);
	return 0;
}

static bool log_listed(const struct log_list *l, const char *file)
{
	return l->n && bsearch(&file, l->name, l->n, sizeof(*l->name),
	                       cmp_name) != NULL;
}

/* gpualert's scores with its verdict on every listed log counted as
 * right: how far the logs of a reader's groups of misses would take it.
 * The same ga_eval_score as the report, so the two cannot drift. */
static void report_count_right(const struct ga_eval *ev,
                               const struct log_list *l, struct ga_buf *out)
{
	struct ga_eval_confusion cm;
	struct ga_eval_scores s;
	size_t listed = 0;

	ga_eval_confusion_init(&cm);
	for (size_t i = 0; i < ga_eval_count(ev); i++) {
		const struct ga_eval_item *it = ga_eval_item(ev, i);
		enum ga_class pred = it->pred[GA_EVAL_GPUALERT];

		if (log_listed(l, it->file)) {
			listed++;
			pred = it->gold;
		}
		ga_eval_confusion_add(&cm, it->gold, pred);
	}
	ga_eval_score(&cm, &s);
	ga_buf_printf(
	        out,
	        "\ngpualert with its verdict on the %zu listed logs right: "
	        "macro-F1 %.4f, accuracy %.4f\n",
	        listed, s.macro_f1, s.accuracy);
}

static struct ga_eval_keywords *load_keywords(const char *path)
{
	struct ga_eval_keywords *kw;
	char *text = NULL;
	int err;

	if (!path)
		return ga_eval_keywords_parse("keywords.tsv",
		                              ga_eval_builtin_keywords, NULL);
	err = ga_read_file(path, 1 << 20, &text, NULL);
	if (err < 0) {
		cli_error("eval: %s: %s", path, strerror(-err));
		return NULL;
	}
	kw = ga_eval_keywords_parse(path, text, NULL);
	free(text);
	return kw;
}

static int write_file(const char *path, const struct ga_buf *b)
{
	FILE *f = fopen(path, "we");
	int rc = 0;

	if (!f) {
		cli_error("eval: %s: %s", path, strerror(errno));
		return -1;
	}
	if (fwrite(b->data, 1, b->len, f) != b->len)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		cli_error("eval: writing %s: %s", path, strerror(errno));
	return rc;
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"rules", required_argument, NULL, 'r'},
	        {"keywords", required_argument, NULL, 'k'},
	        {"svg", required_argument, NULL, 's'},
	        {"json", no_argument, NULL, 'j'},
	        {"errors", no_argument, NULL, 'E'},
	        {"count-right", required_argument, NULL, 'c'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	const char *rules_dir = NULL, *kw_path = NULL, *svg = NULL;
	const char *right_path = NULL;
	struct log_list right = {0};
	struct ga_eval_keywords *kw = NULL;
	struct ga_ruleset *rs = NULL;
	struct ga_eval *ev = NULL;
	struct ga_diag diag;
	struct ga_buf out;
	bool json = false, errors = false;
	int rc = CLI_OK, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:k:s:jEc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rules_dir = optarg;
			break;
		case 'k':
			kw_path = optarg;
			break;
		case 's':
			svg = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'E':
			errors = true;
			break;
		case 'c':
			right_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("eval: no manifest given");
		usage(stderr);
		return CLI_USAGE;
	}
	if (right_path && json) {
		cli_error(
		        "eval: --count-right goes with the text report, not --json");
		usage(stderr);
		return CLI_USAGE;
	}
	ga_diag_init(&diag, "eval");
	ga_buf_init(&out);
	if (right_path && load_log_list(right_path, &right) < 0) {
		rc = CLI_FAILURE;
		goto out;
	}
	kw = load_keywords(kw_path);
	if (!kw) {
		cli_error("eval: cannot load the keyword list");
		rc = CLI_FAILURE;
		goto out;
	}
	rs = cli_load_rules(rules_dir);
	ev = rs ? ga_eval_create(rs, kw) : NULL;
	if (!ev) {
		if (rs)
			cli_error("eval: out of memory");
		rc = CLI_FAILURE;
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		int err = ga_eval_add_manifest(ev, argv[i], &diag);

		if (err == -ENOMEM) {
			cli_error("eval: out of memory");
			rc = CLI_FAILURE;
			goto out;
		}
		if (err < 0)
			rc = CLI_FAILURE;
	}
	if (ga_eval_skipped(ev)) {
		cli_error("eval: %zu rows skipped (reported above)",
		          ga_eval_skipped(ev));
		rc = CLI_FAILURE;
	}
	if (json) {
		ga_eval_report_json(ev, errors, &out);
		ga_buf_putc(&out, '\n');
	} else {
		ga_eval_report_text(ev, errors, &out);
		if (right_path)
			report_count_right(ev, &right, &out);
	}
	if (out.failed) {
		cli_error("eval: out of memory");
		rc = CLI_FAILURE;
		goto out;
	}
	fwrite(out.data, 1, out.len, stdout);
	if (svg) {
		ga_buf_reset(&out);
		ga_eval_report_svg(ev, &out);
		if (out.failed) {
			cli_error("eval: out of memory");
			rc = CLI_FAILURE;
		} else if (write_file(svg, &out) < 0) {
			rc = CLI_FAILURE;
		}
	}
	if (fflush(stdout) != 0) {
		cli_error("eval: writing output: %s", strerror(errno));
		rc = CLI_FAILURE;
	}
out:
	ga_buf_finish(&out);
	ga_eval_destroy(ev);
	ga_ruleset_destroy(rs);
	ga_eval_keywords_destroy(kw);
	free(right.name);
	free(right.text);
	ga_diag_finish(&diag);
	return rc;
}
