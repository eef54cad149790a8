/* SPDX-License-Identifier: MIT */
/* gpualert classify: read a log, print the verdict. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"
#include "cli.h"
#include "json.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert classify [--json] [--rules DIR] [--tail N]\n"
	        "                         [--exit-code N | --signal SIG] [--state STATE]\n"
	        "                         FILE|- [FILE...]\n\n"
	        "Classify each log (\"-\" for standard input) and print its class,\n"
	        "the hint and the evidence lines.  With --json, one JSON object per\n"
	        "input on one line.  The exit status is 0 whenever classification\n"
	        "succeeded, whatever the class.\n\n"
	        "  --exit-code N   the job's exit code (a negative N: killed by signal -N)\n"
	        "  --signal SIG    the job was killed by SIG (SEGV, 9, SIGKILL, ...)\n"
	        "  --state STATE   scheduler verdict: TIMEOUT, CANCELLED, PREEMPTED,\n"
	        "                  NODE_FAIL, OUT_OF_MEMORY\n"
	        "  --oom-kills N   oom-kill events seen in the job's memory cgroup\n"
	        "  --rules DIR     admin rules directory (default: $GPUALERT_RULES_DIR,\n"
	        "                  else the configured rules.d)\n"
	        "  --tail N        print the last N lines of the log too (human output)\n");
}

static void print_human(const char *name, const struct ga_verdict *v,
                        long tail_lines)
{
	printf("%s: %s (%s)\n", name, ga_class_name(v->cls),
	       ga_class_title(v->cls));
	if (v->rule)
		printf("  rule: %s\n", v->rule);
	printf("  hint: %s\n", v->hint ? v->hint : "");
	if (v->status.known) {
		if (v->status.signal) {
			const char *sig = ga_signal_name(v->status.signal);

			printf("  status: killed by %s\n",
			       sig ? sig : "a signal");
		} else {
			printf("  status: exit code %d\n", v->status.exit_code);
		}
	}
	for (size_t i = 0; i < v->n_evidence; i++) {
		const struct ga_evidence *e = &v->evidence[i];

		if (e->line)
			printf("  evidence: line %llu: %s\n",
			       (unsigned long long)e->line, e->text);
		else
			printf("  evidence: %s\n", e->text);
	}
	for (size_t i = 0; i < v->n_others; i++)
		printf("  also seen: %s at line %llu: %s\n",
		       ga_class_name(v->others[i].cls),
		       (unsigned long long)v->others[i].line,
		       v->others[i].text);
	printf("  lines: %llu, bytes: %llu\n", (unsigned long long)v->lines,
	       (unsigned long long)v->bytes);
	if (tail_lines && v->tail) {
		const char *t = v->tail + strlen(v->tail);
		long n = 0;

		/* v->tail ends with '\n': walk back over TAIL_LINES lines. */
		while (t > v->tail && n <= tail_lines)
			if (*--t == '\n')
				n++;
		if (n > tail_lines)
			t++;
		printf("  tail:\n%s", t);
	}
}

int cmd_classify(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"json", no_argument, NULL, 'j'},
	        {"rules", required_argument, NULL, 'r'},
	        {"exit-code", required_argument, NULL, 'e'},
	        {"signal", required_argument, NULL, 's'},
	        {"state", required_argument, NULL, 'S'},
	        {"oom-kills", required_argument, NULL, 'o'},
	        {"tail", required_argument, NULL, 't'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	struct ga_status st;
	struct ga_ruleset *rs = NULL;
	const char *rules_dir = NULL;
	bool json = false;
	long tail = 0;
	int rc = CLI_OK, c;

	ga_status_init(&st);
	optind = 1;
	while ((c = getopt_long(argc, argv, "jr:e:s:S:o:t:h", opts, NULL)) !=
	       -1) {
		char *end;
		long v;

		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			rules_dir = optarg;
			break;
		case 'e':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < -64 ||
			    v > 255) {
				cli_error(
				        "classify: --exit-code: '%s' is not an "
				        "exit code (0-255, or -N for signal N)",
				        optarg);
				return CLI_USAGE;
			}
			ga_status_from_int(&st, (int)v);
			break;
		case 's':
			v = ga_signal_from_name(optarg);
			if (v <= 0) {
				cli_error(
				        "classify: --signal: unknown signal '%s'",
				        optarg);
				return CLI_USAGE;
			}
			st.known = true;
			st.signal = (int)v;
			st.exit_code = 0;
			break;
		case 'S':
			v = ga_sched_state_from_name(optarg);
			if (v < 0) {
				cli_error(
				        "classify: --state: unknown state '%s'",
				        optarg);
				return CLI_USAGE;
			}
			st.state = (enum ga_sched_state)v;
			break;
		case 'o':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0 || v > 1000000) {
				cli_error(
				        "classify: --oom-kills: bad count '%s'",
				        optarg);
				return CLI_USAGE;
			}
			st.oom_kills = (int)v;
			break;
		case 't':
			tail = strtol(optarg, &end, 10);
			if (*end || end == optarg || tail < 0 || tail > 10000) {
				cli_error(
				        "classify: --tail: bad line count '%s'",
				        optarg);
				return CLI_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if ((st.state || st.oom_kills) && !st.known)
		st.known = true; /* a scheduler verdict is a known ending */
	if (optind >= argc) {
		cli_error("classify: no input (give a FILE, or - for stdin)");
		usage(stderr);
		return CLI_USAGE;
	}
	rs = cli_load_rules(rules_dir);
	if (!rs)
		return CLI_FAILURE;
	for (int i = optind; i < argc; i++) {
		struct ga_verdict v;
		const char *name = argv[i];
		int fd = strcmp(name, "-") ? open(name, O_RDONLY | O_CLOEXEC)
		                           : 0;
		int err;

		if (fd < 0) {
			cli_error("classify: %s: %s", name, strerror(errno));
			rc = CLI_FAILURE;
			continue;
		}
		ga_verdict_init(&v);
		err = ga_classify_fd(rs, fd, &st, &v);
		if (fd != 0)
			close(fd);
		if (err < 0) {
			cli_error("classify: %s: %s", name, strerror(-err));
			rc = CLI_FAILURE;
		} else if (json) {
			struct ga_buf b;

			ga_buf_init(&b);
			ga_verdict_write_json(&v, &b);
			if (b.failed) {
				cli_error("classify: out of memory");
				rc = CLI_FAILURE;
			} else {
				printf("%s\n", b.data);
			}
			ga_buf_finish(&b);
		} else {
			print_human(name, &v, tail);
		}
		ga_verdict_finish(&v);
	}
	ga_ruleset_destroy(rs);
	if (fflush(stdout) != 0) {
		cli_error("classify: writing output: %s", strerror(errno));
		rc = CLI_FAILURE;
	}
	return rc;
}
