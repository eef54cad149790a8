/* SPDX-License-Identifier: MIT */
/* gpualert stats: failures by class, node, GPU, user and partition over a
 * period, from the sender's history (SPOOL/stats.log) and the reports
 * still waiting in SPOOL/new.  A node with repeated gpu_hw verdicts is
 * flagged.  --prometheus writes a node_exporter textfile-collector file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "config.h"
#include "ga-config.h"
#include "report.h"
#include "spool.h"
#include "spool_queue.h"
#include "stats.h"

#define MAX_KEYS 4096

struct count {
	char key[GA_STATS_FIELD_MAX * 2];
	unsigned total, gpu_hw;
};

struct table {
	const char *title;
	struct count *c;
	size_t n;
};

static void bump(struct table *t, const char *key, bool hw)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->c[i].key, key)) {
			t->c[i].total++;
			t->c[i].gpu_hw += hw;
			return;
		}
	}
	if (t->n >= MAX_KEYS)
		return;
	snprintf(t->c[t->n].key, sizeof(t->c[0].key), "%s", key);
	t->c[t->n].total = 1;
	t->c[t->n].gpu_hw = hw;
	t->n++;
}

static int by_total(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->key, y->key);
}

enum { T_CLASS, T_NODE, T_GPU, T_USER, T_PARTITION, T_COUNT };

struct stats {
	struct table t[T_COUNT];
	unsigned failures, records;
	int64_t since;
};

static void add(struct stats *s, const struct ga_stats_record *r)
{
	bool hw = !strcmp(r->cls, "gpu_hw");
	char key[GA_STATS_FIELD_MAX * 2];

	if (r->time < s->since)
		return;
	s->records++;
	if (!strcmp(r->cls, "success"))
		return;
	s->failures++;
	bump(&s->t[T_CLASS], r->cls, hw);
	bump(&s->t[T_NODE], r->node, hw);
	bump(&s->t[T_USER], r->user, hw);
	bump(&s->t[T_PARTITION], r->partition, hw);
	/* GPUs: those named by the hardware faults, else the step's. */
	{
		const char *list = strcmp(r->faults, "-") ? r->faults : r->gpus;
		char copy[GA_STATS_FIELD_MAX * 2], *save = NULL, *tok;

		if (!strcmp(list, "-"))
			return;
		snprintf(copy, sizeof(copy), "%s", list);
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			const char *at = strchr(tok, '@');

			snprintf(key, sizeof(key), "%s %s", r->node,
			         at ? at + 1 : tok);
			bump(&s->t[T_GPU], key, hw);
		}
	}
}

static void read_log(struct stats *s, const char *spool)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stats.log", spool);
	f = fopen(path, "re");
	if (!f)
		return;
	while ((len = getline(&line, &cap, f)) > 0) {
		struct ga_stats_record r;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (ga_stats_parse(line, &r) == 0)
			add(s, &r);
	}
	free(line);
	fclose(f);
}

/* Reports not taken up by the sender yet. */
static void read_new(struct stats *s, const char *spool)
{
	char **names = NULL, path[8192];
	size_t n = 0;

	if (ga_spool_list(spool, "new", &names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char *text = NULL;
		size_t len = 0;
		struct ga_report r;
		struct ga_stats_record rec;

		snprintf(path, sizeof(path), "%s/new/%s", spool, names[i]);
		free(names[i]);
		if (ga_read_file(path, 16u << 20, &text, &len) < 0)
			continue;
		ga_report_init(&r);
		if (ga_report_parse_json(text, len, &r, NULL) == 0) {
			ga_stats_from_report(&r, (int64_t)time(NULL), &rec);
			add(s, &rec);
		}
		ga_report_finish(&r);
		free(text);
	}
	free(names);
}

static void print(struct stats *s, unsigned repeat, FILE *out)
{
	static const char *const titles[T_COUNT] = {"class", "node", "GPU",
	                                            "user", "partition"};
	char since[64];
	time_t t = (time_t)s->since;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(since, sizeof(since), "%Y-%m-%d %H:%M UTC", &tm);
	fprintf(out, "%u failure(s) in %u report(s) since %s\n", s->failures,
	        s->records, since);
	for (int i = 0; i < T_COUNT; i++) {
		struct table *tb = &s->t[i];

		if (!tb->n)
			continue;
		qsort(tb->c, tb->n, sizeof(tb->c[0]), by_total);
		fprintf(out, "\nby %s:\n", titles[i]);
		for (size_t k = 0; k < tb->n; k++) {
			const struct count *c = &tb->c[k];

			fprintf(out, "  %-32s %6u", c->key, c->total);
			if (c->gpu_hw && i != T_CLASS)
				fprintf(out, "  (gpu_hw %u)", c->gpu_hw);
			if ((i == T_NODE || i == T_GPU) && c->gpu_hw >= repeat)
				fprintf(out,
				        "  <-- REPEATED gpu_hw: drain and "
				        "check this %s",
				        i == T_NODE ? "node" : "GPU");
			fputc('\n', out);
		}
	}
}

static void prom_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', f);
		fputc(*v, f);
	}
}

/* node_exporter's textfile collector reads *.prom files: write a
 * temporary file and rename it, so it never reads half a file. */
static int write_prometheus(struct stats *s, const char *path)
{
	static const char *const labels[T_COUNT] = {"class", "node", "gpu",
	                                            "user", "partition"};
	char tmp[4096];
	FILE *f;
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# HELP gpualert_failures Failed job steps in the period, "
	           "by one dimension.\n# TYPE gpualert_failures gauge\n");
	for (int i = 0; i < T_COUNT; i++) {
		for (size_t k = 0; k < s->t[i].n; k++) {
			fprintf(f, "gpualert_failures{by=\"%s\",%s=\"",
			        labels[i], labels[i]);
			prom_label(f, s->t[i].c[k].key);
			fprintf(f, "\"} %u\n", s->t[i].c[k].total);
		}
	}
	fprintf(f, "# HELP gpualert_gpu_hw Failed job steps with a gpu_hw "
	           "verdict in the period, by node.\n"
	           "# TYPE gpualert_gpu_hw gauge\n");
	for (size_t k = 0; k < s->t[T_NODE].n; k++) {
		fprintf(f, "gpualert_gpu_hw{node=\"");
		prom_label(f, s->t[T_NODE].c[k].key);
		fprintf(f, "\"} %u\n", s->t[T_NODE].c[k].gpu_hw);
	}
	if (fclose(f))
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert stats [--days N] [--repeat N] [--config FILE]\n"
	        "                      [--spool DIR] [--prometheus FILE]\n\n"
	        "Failures by class, node, GPU, user and partition over the last N\n"
	        "days (default 7), from the sender's history (SPOOL/stats.log)\n"
	        "and the reports waiting in SPOOL/new.  A node or GPU with at\n"
	        "least --repeat (default 2) gpu_hw verdicts is flagged.\n"
	        "--prometheus FILE also writes node_exporter textfile metrics.\n");
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"days", required_argument, NULL, 'D'},
	        {"repeat", required_argument, NULL, 'r'},
	        {"config", required_argument, NULL, 'c'},
	        {"spool", required_argument, NULL, 'd'},
	        {"prometheus", required_argument, NULL, 'p'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	const char *config = getenv("GPUALERT_CONFIG"), *spool = NULL,
	           *prom = NULL;
	long days = 7, repeat = 2;
	struct ga_config cfg;
	struct stats s;
	int c, rc = CLI_OK;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "D:r:c:d:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			days = strtol(optarg, &end, 10);
			if (*end || days < 1 || days > 3650) {
				cli_error("stats: --days: 1 to 3650");
				return CLI_USAGE;
			}
			break;
		case 'r':
			repeat = strtol(optarg, &end, 10);
			if (*end || repeat < 1 || repeat > 1000000) {
				cli_error("stats: --repeat: a positive number");
				return CLI_USAGE;
			}
			break;
		case 'c':
			config = optarg;
			break;
		case 'd':
			spool = optarg;
			break;
		case 'p':
			prom = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (ga_config_init(&cfg) < 0)
		return CLI_FAILURE;
	if (!spool) {
		int lrc = ga_config_load(
		        &cfg, config ? config : GA_DEFAULT_CONFIG, NULL);

		if (lrc < 0 && lrc != -ENOENT && lrc != -EINVAL) {
			cli_error("stats: %s: %s",
			          config ? config : GA_DEFAULT_CONFIG,
			          strerror(-lrc));
			ga_config_finish(&cfg);
			return CLI_FAILURE;
		}
		spool = cfg.spool_dir;
	}
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < T_COUNT; i++) {
		s.t[i].c = calloc(MAX_KEYS, sizeof(struct count));
		if (!s.t[i].c)
			rc = CLI_FAILURE;
	}
	if (rc == CLI_OK) {
		s.since = (int64_t)time(NULL) - days * 86400;
		if (access(spool, R_OK | X_OK) < 0) {
			cli_error("stats: %s: %s", spool, strerror(errno));
			rc = CLI_FAILURE;
		} else {
			read_log(&s, spool);
			read_new(&s, spool);
			print(&s, (unsigned)repeat, stdout);
			if (prom && (c = write_prometheus(&s, prom)) < 0) {
				cli_error("stats: %s: %s", prom, strerror(-c));
				rc = CLI_FAILURE;
			}
		}
	}
	for (int i = 0; i < T_COUNT; i++)
		free(s.t[i].c);
	ga_config_finish(&cfg);
	return rc;
}
