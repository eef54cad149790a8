/* SPDX-License-Identifier: MIT */
/* Helpers shared by the gpualert and gpualert-send executables. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ga-config.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gpualert: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_check_path(const char *what, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) == 0)
		return 0;
	cli_error("%s: %s: %s", what, path, strerror(errno));
	return -1;
}

struct ga_ruleset *cli_load_rules(const char *dir)
{
	struct ga_ruleset *rs;
	bool fell_back;

	/* A directory named on the command line must exist; the default
	 * and $GPUALERT_RULES_DIR may not (the built-in rules apply). */
	if (dir && cli_check_path("rules", dir) < 0)
		return NULL;
	if (!dir)
		dir = getenv("GPUALERT_RULES_DIR");
	if (!dir)
		dir = GA_DEFAULT_RULES_DIR;
	rs = ga_rules_load(dir, NULL, &fell_back);
	/* The built-in rules fail only for lack of memory, or in a build
	 * whose rules/ a change broke: the parser has then printed why. */
	if (!rs)
		cli_error("rules: cannot load the built-in rules (see the "
		          "errors above; with none, out of memory)");
	return rs;
}
