/* SPDX-License-Identifier: MIT */
/* gpualert spool list|requeue: what waits, what is being retried, what is
 * dead, and a way to retry a dead letter.  Run it as the spool's owner
 * (runuser -u gpualert -- gpualert spool list). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "config.h"
#include "ga-config.h"
#include "spool.h"
#include "spool_queue.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert spool list [--config FILE] [--spool DIR]\n"
	        "       gpualert spool requeue CLAIM [--config FILE] [--spool DIR]\n\n"
	        "list     reports waiting in new/ (by job), jobs being delivered\n"
	        "         in out/ (attempts, next try, last error) and dead\n"
	        "         letters in dead/ (with their reason)\n"
	        "requeue  move dead letter CLAIM back to out/ with its attempts\n"
	        "         reset; the sender delivers it on its next pass\n\n"
	        "  --config FILE  default $GPUALERT_CONFIG, else " GA_DEFAULT_CONFIG
	        "\n"
	        "  --spool DIR    override [general] spool_dir\n");
}

/* The first line of PATH (a "reason" file), or "" when unreadable. */
static void first_line(const char *path, char *out, size_t size)
{
	char *text = NULL;

	out[0] = '\0';
	if (ga_read_file(path, 64 * 1024, &text, NULL) == 0) {
		snprintf(out, size, "%.*s", (int)strcspn(text, "\r\n"), text);
		free(text);
	}
}

static int list(const char *dir)
{
	struct ga_spool_scan scan = {0};
	int64_t now = (int64_t)time(NULL);
	char **names = NULL;
	size_t n = 0;
	int rc;

	rc = ga_spool_scan_new(dir, &scan);
	if (rc) {
		cli_error("spool: cannot read %s/new: %s", dir, strerror(-rc));
		return CLI_FAILURE;
	}
	for (size_t i = 0; i < scan.n_groups; i++) {
		const struct ga_spool_group *g = &scan.groups[i];
		char job[GA_SPOOL_NAME_MAX + 32];

		/* The key is "<job>.u<uid>": shown as the job and its user. */
		if (g->has_uid)
			snprintf(job, sizeof(job), "%.*s (uid %u)",
			         (int)strcspn(g->key, "."), g->key,
			         (unsigned)g->uid);
		else
			snprintf(job, sizeof(job), "%s", g->key);
		printf("new   %-24s %zu report(s), newest %" PRId64 " s ago\n",
		       job, g->n_names, now - g->newest);
	}
	ga_spool_scan_finish(&scan);

	for (int pass = 0; pass < 2; pass++) {
		const char *sub = pass ? "dead" : "out";

		rc = ga_spool_list(dir, sub, &names, &n);
		if (rc && rc != -ENOENT) {
			cli_error("spool: cannot read %s/%s: %s", dir, sub,
			          strerror(-rc));
			return CLI_FAILURE;
		}
		for (size_t i = 0; i < n; i++) {
			char path[8192], reason[512];
			struct ga_spool_state st;

			snprintf(path, sizeof(path), "%s/%s/%s", dir, sub,
			         names[i]);
			if (ga_spool_state_read(path, &st) < 0)
				memset(&st, 0, sizeof(st));
			if (pass) {
				snprintf(path, sizeof(path),
				         "%s/dead/%s/reason", dir, names[i]);
				first_line(path, reason, sizeof(reason));
				printf("dead  %s  attempts %u: %s\n", names[i],
				       st.attempts, reason);
			} else {
				printf("out   %s  attempts %u, next try %s%" PRId64
				       " s%s%s\n",
				       names[i], st.attempts,
				       st.next_try > now ? "in " : "now, due ",
				       st.next_try > now ? st.next_try - now
				                         : 0,
				       st.last_error[0] ? ": " : "",
				       st.last_error);
			}
			free(names[i]);
		}
		free(names);
		names = NULL;
		n = 0;
	}
	return fflush(stdout) ? CLI_FAILURE : CLI_OK;
}

static int requeue(const char *dir, const char *claim)
{
	char from[4096], to[4096], path[8192];
	struct ga_spool_state st;

	if (!ga_spool_name_ok(claim)) {
		cli_error("spool: requeue %s: not a claim name (see "
		          "`gpualert spool list`)",
		          claim);
		return CLI_USAGE;
	}
	snprintf(from, sizeof(from), "%s/dead/%s", dir, claim);
	snprintf(to, sizeof(to), "%s/out/%s", dir, claim);
	if (access(from, F_OK) < 0) {
		cli_error("spool: requeue: %s: %s", from, strerror(errno));
		return CLI_FAILURE;
	}
	/* renameat2(RENAME_NOREPLACE) semantics by hand: a claim of the same
	 * name in out/ is being delivered, never overwrite it. */
	if (access(to, F_OK) == 0) {
		cli_error("spool: requeue: %s exists already", to);
		return CLI_FAILURE;
	}
	if (rename(from, to) < 0) {
		cli_error("spool: requeue: cannot move %s to %s: %s", from, to,
		          strerror(errno));
		return CLI_FAILURE;
	}
	snprintf(path, sizeof(path), "%s/reason", to);
	unlink(path);
	/* A fresh start: attempts, backoff and max_age count from now. */
	memset(&st, 0, sizeof(st));
	if (ga_spool_state_write(to, &st) < 0) {
		cli_error("spool: requeue: cannot reset %s/state", to);
		return CLI_FAILURE;
	}
	printf("gpualert: spool: %s requeued; the sender delivers it on its "
	       "next pass\n",
	       claim);
	return CLI_OK;
}

int cmd_spool(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"config", required_argument, NULL, 'c'},
	        {"spool", required_argument, NULL, 'd'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	const char *config = getenv("GPUALERT_CONFIG"), *spool = NULL, *verb;
	bool explicit_config = config != NULL;
	struct ga_config cfg;
	struct ga_diag diag;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			explicit_config = true;
			break;
		case 'd':
			spool = optarg;
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
		usage(stderr);
		return CLI_USAGE;
	}
	verb = argv[optind];
	if (strcmp(verb, "list") && strcmp(verb, "requeue")) {
		cli_error("spool: unknown verb '%s' (list, requeue)", verb);
		return CLI_USAGE;
	}
	if ((!strcmp(verb, "list") && optind + 1 != argc) ||
	    (!strcmp(verb, "requeue") && optind + 2 != argc)) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (ga_config_init(&cfg) < 0) {
		cli_error("spool: out of memory");
		return CLI_FAILURE;
	}
	ga_diag_init(&diag, "spool");
	if (!config)
		config = GA_DEFAULT_CONFIG;
	rc = ga_config_load(&cfg, config, &diag);
	if (rc == -ENOENT && !explicit_config)
		rc = 0; /* no config file: the defaults */
	if (rc) {
		cli_error("spool: configuration %s: %s", config,
		          rc == -EINVAL ? "invalid (see above)"
		                        : strerror(-rc));
		rc = CLI_FAILURE;
	} else if (!spool && cli_check_path("spool", cfg.spool_dir) < 0) {
		rc = CLI_FAILURE;
	} else if (spool && cli_check_path("spool: --spool", spool) < 0) {
		rc = CLI_FAILURE;
	} else if (!strcmp(verb, "list")) {
		rc = list(spool ? spool : cfg.spool_dir);
	} else {
		rc = requeue(spool ? spool : cfg.spool_dir, argv[optind + 1]);
	}
	ga_diag_finish(&diag);
	ga_config_finish(&cfg);
	return rc;
}
