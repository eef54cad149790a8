/* The gpualert command: one file per subcommand, dispatched by main.c. */
#ifndef GPUALERT_CLI_CLI_H
#define GPUALERT_CLI_CLI_H

#include <stdbool.h>

#include "rules.h"

/* Exit statuses of the command (sysexits-like, documented in --help). */
#define CLI_OK 0
#define CLI_FAILURE 1 /* the operation failed (I/O, delivery, ...) */
#define CLI_USAGE 2   /* bad command line */

int cmd_classify(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* In the separate gpualert-send executable (cli/send_main.c). */
int cmd_send(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_stats(int argc, char **argv);

/* Load the rules for a command: DIR from --rules, else the configured
 * default directory.  Problems are printed; a broken directory falls back
 * to the built-in rules (with a warning), so this only fails on ENOMEM. */
struct ga_ruleset *cli_load_rules(const char *dir);

/* Print "gpualert: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
