/* SPDX-License-Identifier: MIT */
/* gpualert rules check|list: what admins run after editing rules.d. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "cli.h"
#include "ga-config.h"
#include "log.h"
#include "prefilter.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert rules check [DIR|FILE]\n"
	        "       gpualert rules list [--rules DIR]\n\n"
	        "check  parse DIR's *.rules files (default: the configured rules.d) on\n"
	        "       top of the built-in rules and report every problem as\n"
	        "       FILE:LINE: message; exit 1 if there is any error.\n"
	        "list   print the effective rules in priority order (highest first).\n");
}

/* Quiet the log sink: check prints the diagnostics itself. */
static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static int check(const char *path)
{
	struct ga_diag diag;
	struct ga_ruleset *rs;
	struct stat sb;
	char *text = NULL;
	int rc;

	ga_diag_init(&diag, "rules");
	ga_log_set_sink(quiet, NULL);
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		struct ga_rules_source src = {path, NULL};
		int err = ga_read_file(path, 1 << 20, &text, NULL);

		if (err < 0) {
			ga_log_set_sink(NULL, NULL);
			cli_error("rules: %s: %s", path, strerror(-err));
			return CLI_FAILURE;
		}
		src.text = text;
		rs = ga_rules_load_sources(&src, 1, true, &diag);
	} else {
		rs = ga_rules_check_dir(path, &diag);
	}
	ga_log_set_sink(NULL, NULL);
	for (size_t i = 0; i < diag.n; i++)
		printf("%s\n", diag.msgs[i]);
	if (rs && !diag.errors) {
		printf("%s: OK, %zu rules in effect (%zu warnings)\n", path,
		       ga_ruleset_size(rs), diag.warnings);
		rc = CLI_OK;
	} else {
		printf("%s: %zu error(s); gpualert would ignore this and use "
		       "the built-in rules\n",
		       path, diag.errors);
		rc = CLI_FAILURE;
	}
	ga_ruleset_destroy(rs);
	ga_diag_finish(&diag);
	free(text);
	return rc;
}

static int list(const char *dir)
{
	struct ga_ruleset *rs = cli_load_rules(dir);
	struct ga_buf b;

	if (!rs)
		return CLI_FAILURE;
	ga_buf_init(&b);
	for (size_t i = 0; i < ga_ruleset_size(rs); i++) {
		if (i)
			ga_buf_putc(&b, '\n');
		ga_rule_format(ga_ruleset_rule(rs, i), &b);
	}
	if (b.data)
		fputs(b.data, stdout);
	ga_buf_finish(&b);
	ga_ruleset_destroy(rs);
	return CLI_OK;
}

int cmd_rules(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"rules", required_argument, NULL, 'r'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	const char *dir = NULL, *verb;
	int c;

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
		usage(stdout);
		return CLI_OK;
	}
	optind = 1;
	argc--;
	argv++;
	argv[0] = (char *)"gpualert: rules"; /* getopt's messages */
	while ((c = getopt_long(argc, argv, "r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (!strcmp(verb, "check")) {
		const char *path = optind < argc ? argv[optind] : dir;

		/* Named on the command line: it must exist. */
		if (path && cli_check_path("rules", path) < 0)
			return CLI_FAILURE;
		if (!path)
			path = getenv("GPUALERT_RULES_DIR");
		return check(path ? path : GA_DEFAULT_RULES_DIR);
	}
	if (!strcmp(verb, "list"))
		return list(dir);
	cli_error("rules: unknown verb '%s' (check, list)", verb);
	return CLI_USAGE;
}
