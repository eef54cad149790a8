/* SPDX-License-Identifier: MIT */
/* gpualert: classify GPU job failures, wrap commands, deliver reports. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ga-config.h"
#include "log.h"
#include "util.h"

#ifdef GA_HAVE_CURL
/* `gpualert send` lives in its own executable, gpualert-send: libcurl and
 * the TLS stack it pulls in (35 shared libraries, ~6 MiB resident) have
 * no business in `gpualert classify` or `gpualert run`.  Look for it next
 * to this binary (a build tree), then in the install's libexecdir. */
static int exec_send(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	const char *env = getenv("GPUALERT_SEND");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	argv[0] = (char *)"gpualert-send";
	if (env && *env) {
		execv(env, argv);
		cli_error("send: cannot run %s: %s", env, strerror(errno));
		return CLI_FAILURE;
	}
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/gpualert-send", self);
			if (access(path, X_OK) == 0)
				execv(path, argv);
		}
	}
	snprintf(path, sizeof(path), "%s/gpualert-send", GA_LIBEXECDIR);
	execv(path, argv);
	cli_error("send: cannot run %s: %s", path, strerror(errno));
	return CLI_FAILURE;
}
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
        {"classify", cmd_classify, "classify a log: why did the job end?"},
        {"rules", cmd_rules, "check or list the classification rules"},
        {"run", cmd_run,
         "run a command with its output captured and classified"},
#ifdef GA_HAVE_CURL
        {"send", exec_send, "deliver spooled reports by mail or webhook"},
#endif
        {"spool", cmd_spool, "list the spool, requeue dead letters"},
        {"eval", cmd_eval, "score gpualert and two baselines on labelled logs"},
        {"stats", cmd_stats,
         "failures by class, node, GPU, user, partition (admins)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gpualert COMMAND [ARGS...]\n\n");
	for (size_t i = 0; i < GA_ARRAY_LEN(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name,
		        commands[i].summary);
	fprintf(out, "\n`gpualert COMMAND --help` describes a command.\n"
	             "Exit status: 0 success, 1 failure, 2 usage error.\n");
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
	for (size_t i = 0; i < GA_ARRAY_LEN(commands); i++) {
		char prog[64];

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* getopt prints argv[0] first: make its messages start
		 * "gpualert: COMMAND:" like every other message. */
		snprintf(prog, sizeof(prog), "gpualert: %s", commands[i].name);
		argv[1] = prog;
		return commands[i].run(argc - 1, argv + 1);
	}
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return CLI_USAGE;
}
