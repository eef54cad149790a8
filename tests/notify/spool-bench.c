/* SPDX-License-Identifier: MIT */
/* spool-bench: the cost of one report write with nothing and with many
 * entries waiting in the spool (tests/bench/bench-spool.sh).
 *
 *   spool-bench DIR WAITING WRITES
 *
 * DIR must not exist.  Makes two spools, DIR/empty and DIR/full, fills
 * DIR/full/new with WAITING entries of a real report's size (as a relay
 * outage would), reconciles its counters, then times WRITES report writes
 * into each (ga_spool_put_report: reservation in the usage counters, name
 * lock, durable write), alternating between the two so that the disk's
 * load at any moment weighs on both alike.  In each spool it then times
 * the walk the writer used to make to enforce total_max (ga_spool_usage),
 * the baseline, and alternates plain durable writes of the same bytes
 * (ga_spool_write: no accounting, no lock), the file system's own floor.
 * Prints one line per spool: "waiting=N write_median_ms=...
 * write_p90_ms=... raw_median_ms=... scan_ms=...". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "report.h"
#include "spool.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void make_report(struct ga_report *r, unsigned job)
{
	char id[32];
	struct ga_task_report *t;

	snprintf(id, sizeof(id), "%u", job);
	ga_report_init(r);
	ga_report_put(&r->origin, "slurm");
	ga_report_put(&r->job_id, id);
	ga_report_put(&r->step_id, "batch");
	ga_report_put(&r->job_name, "train");
	ga_report_put(&r->user, "alice");
	r->uid = 1001 + job % 50;
	ga_report_put(&r->node, "node07");
	ga_report_put(&r->work_dir, "/home/alice/run");
	ga_report_put(&r->command, "python train.py --bs 64 --lr 3e-4");
	ga_report_put(&r->mode, "email");
	t = ga_report_add_task(r);
	if (t) {
		ga_report_put(&t->node, "node07");
		ga_report_put(&t->log_path, "/home/alice/run/gpualert.log");
		ga_report_put(&t->verdict.tail,
		              "RuntimeError: CUDA out of memory. Tried to "
		              "allocate 2.00 GiB\n");
	}
	r->root_task = 0;
}

static int put_one(struct ga_config *cfg, const char *dir, unsigned job,
                   double *ms)
{
	struct ga_report r;
	double t0;
	int rc;

	free(cfg->spool_dir);
	cfg->spool_dir = strdup(dir);
	if (!cfg->spool_dir)
		return -ENOMEM;
	make_report(&r, job);
	t0 = now_ms();
	rc = ga_spool_put_report(cfg, &r);
	*ms = now_ms() - t0;
	ga_report_finish(&r);
	return rc;
}

/* The file system's floor: the same bytes written durably into new/
 * (temp file, fsync, rename, fsync of new/) with no accounting, no name
 * lock, no rendering. */
static int raw_one(const char *dir, unsigned job, const struct ga_buf *b,
                   double *ms)
{
	char name[64];
	double t0;
	int rc;

	snprintf(name, sizeof(name), "%u.raw.node07.u1.json", job);
	t0 = now_ms();
	rc = ga_spool_write(dir, name, b->data, b->len);
	*ms = now_ms() - t0;
	return rc;
}

static void print_state(const char *dir, unsigned waiting, double *ms,
                        double *raw, unsigned n)
{
	double t0 = now_ms(), scan;

	(void)ga_spool_usage(dir);
	scan = now_ms() - t0;
	qsort(ms, n, sizeof(*ms), cmp_double);
	qsort(raw, n, sizeof(*raw), cmp_double);
	printf("waiting=%u write_median_ms=%.3f write_p90_ms=%.3f "
	       "raw_median_ms=%.3f scan_ms=%.1f\n",
	       waiting, ms[n / 2], ms[n * 9 / 10], raw[n / 2], scan);
}

int main(int argc, char **argv)
{
	struct ga_config cfg;
	struct ga_report r;
	struct ga_buf b;
	unsigned waiting, writes;
	char path[4096], empty[4000], full[4000];
	double *ms_empty, *ms_full, *raw_empty, *raw_full;
	int rc = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: spool-bench DIR WAITING WRITES\n");
		return 2;
	}
	waiting = (unsigned)strtoul(argv[2], NULL, 10);
	writes = (unsigned)strtoul(argv[3], NULL, 10);
	if (!writes || ga_config_init(&cfg) < 0)
		return 2;
	free(cfg.spool_dir);
	cfg.spool_dir = strdup(argv[1]);
	cfg.spool_total_max = UINT64_C(1) << 40;
	cfg.spool_user_share = 100;
	snprintf(empty, sizeof(empty), "%s/empty", argv[1]);
	snprintf(full, sizeof(full), "%s/full", argv[1]);
	if (mkdir(argv[1], 0750) < 0 || mkdir(empty, 0750) < 0 ||
	    mkdir(full, 0750) < 0 || ga_spool_prepare(empty) < 0 ||
	    ga_spool_prepare(full) < 0) {
		perror(argv[1]);
		return 1;
	}
	ms_empty = calloc(writes, sizeof(double));
	ms_full = calloc(writes, sizeof(double));
	raw_empty = calloc(writes, sizeof(double));
	raw_full = calloc(writes, sizeof(double));
	if (!ms_empty || !ms_full || !raw_empty || !raw_full)
		return 1;
	/* The waiting entries: the same bytes as a real report, written
	 * without fsync (only the directory's size matters here). */
	make_report(&r, 1);
	ga_buf_init(&b);
	ga_report_write_json(&r, &b);
	ga_report_finish(&r);
	for (unsigned i = 0; !rc && i < waiting; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/new/%u.batch.node07.u%u.json",
		         full, 2000000 + i, 1001 + i % 50);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
		if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len) {
			perror(path);
			rc = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!rc)
		rc = ga_spool_reconcile(full);
	for (unsigned i = 0; !rc && i < writes; i++) {
		rc = put_one(&cfg, empty, 3000000 + i, &ms_empty[i]);
		if (!rc)
			rc = put_one(&cfg, full, 3000000 + i, &ms_full[i]);
		if (!rc)
			rc = raw_one(empty, 4000000 + i, &b, &raw_empty[i]);
		if (!rc)
			rc = raw_one(full, 4000000 + i, &b, &raw_full[i]);
	}
	ga_buf_finish(&b);
	if (!rc) {
		print_state(empty, 0, ms_empty, raw_empty, writes);
		print_state(full, waiting, ms_full, raw_full, writes);
	}
	free(ms_empty);
	free(ms_full);
	free(raw_empty);
	free(raw_full);
	ga_config_finish(&cfg);
	if (rc)
		fprintf(stderr, "spool-bench: %s\n",
		        strerror(rc < 0 ? -rc : rc));
	return rc ? 1 : 0;
}
