/* gpualert: classify GPU job failures, wrap commands, deliver reports. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ga-config.h"
#include "log.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "classify", cmd_classify, "classify a log: why did the job end?" },
	{ "rules", cmd_rules, "check or list the classification rules" },
	{ "run", cmd_run, "run a command with its output captured and classified" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gpualert COMMAND [ARGS...]\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`gpualert COMMAND --help` describes a command.\n"
		     "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gpualert: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct ga_ruleset *cli_load_rules(const char *dir)
{
	struct ga_ruleset *rs;
	bool fell_back;

	if (!dir)
		dir = getenv("GPUALERT_RULES_DIR");
	if (!dir)
		dir = GA_DEFAULT_RULES_DIR;
	rs = ga_rules_load(dir, NULL, &fell_back);
	if (!rs)
		cli_error("rules: cannot load the built-in rules (out of memory)");
	return rs;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gpualert %s\n", GA_VERSION);
		return CLI_OK;
	}
	if (getenv("GPUALERT_DEBUG"))
		ga_log_set_level(GA_LOG_DEBUG);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return CLI_USAGE;
}
