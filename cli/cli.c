/* Helpers shared by the gpualert and gpualert-send executables. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
		cli_error(
		        "rules: cannot load the built-in rules (out of memory)");
	return rs;
}
