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
	        "                     [--json] [--errors] MANIFEST...\n\n"
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
	        "                   deciding evidence line\n");
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
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	const char *rules_dir = NULL, *kw_path = NULL, *svg = NULL;
	struct ga_eval_keywords *kw = NULL;
	struct ga_ruleset *rs = NULL;
	struct ga_eval *ev = NULL;
	struct ga_diag diag;
	struct ga_buf out;
	bool json = false, errors = false;
	int rc = CLI_OK, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:k:s:jEh", opts, NULL)) != -1) {
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
	ga_diag_init(&diag, "eval");
	ga_buf_init(&out);
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
	ga_diag_finish(&diag);
	return rc;
}
