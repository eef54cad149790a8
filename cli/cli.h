/* SPDX-License-Identifier: MIT */
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
int cmd_spool(int argc, char **argv);
int cmd_stats(int argc, char **argv);

struct ga_config;
/* gpualert send --render JOB: print the message (or webhook JSON) that
 * the spooled reports of JOB in DIR give; a claim's message.eml as is.
 * Changes nothing.  Returns a CLI_* exit status (messages printed). */
int send_render(const struct ga_config *cfg, const char *dir, const char *job);
/* gpualert send --test ADDR: one short message through CFG's relay.
 * Returns CLI_OK when the relay accepted it, else CLI_FAILURE or
 * CLI_USAGE (a bad address), with the reason printed. */
int send_test(const struct ga_config *cfg, const char *addr);

/* Load the rules for a command: DIR from --rules, else
 * $GPUALERT_RULES_DIR, else the configured default directory.  Problems
 * are printed; a broken directory falls back to the built-in rules (with
 * a warning).  Returns NULL when DIR (named on the command line) does not
 * exist (printed) or memory runs out. */
struct ga_ruleset *cli_load_rules(const char *dir);

/* 0 if PATH exists, else prints "gpualert: WHAT: PATH: reason" and
 * returns -1: an explicit path that does not exist is an error, never
 * silently the defaults. */
int cli_check_path(const char *what, const char *path);

/* Print "gpualert: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
