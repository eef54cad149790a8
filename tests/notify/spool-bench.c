/* spool-bench: the cost of one report write with nothing and with many
 * entries waiting in the spool (tests/bench/bench-spool.sh).
 *
 *   spool-bench DIR WAITING WRITES
 *
 * DIR must not exist.  Times WRITES report writes (ga_spool_put_report:
 * reservation in the usage counters, name lock, durable write) into the
 * empty spool, fills new/ with WAITING entries of a real report's size
 * (as a relay outage would), reconciles the counters, and times WRITES
 * more.  In each state it also times the walk the writer used to make to
 * enforce total_max (ga_spool_usage), the baseline.  Prints one line per
 * state: "waiting=N write_median_ms=... write_p90_ms=... scan_ms=...". */
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
	ga_report_set(&r->origin, "slurm");
	ga_report_set(&r->job_id, id);
	ga_report_set(&r->step_id, "batch");
	ga_report_set(&r->job_name, "train");
	ga_report_set(&r->user, "alice");
	r->uid = 1001 + job % 50;
	ga_report_set(&r->node, "node07");
	ga_report_set(&r->work_dir, "/home/alice/run");
	ga_report_set(&r->command, "python train.py --bs 64 --lr 3e-4");
	ga_report_set(&r->mode, "email");
	t = ga_report_add_task(r);
	if (t) {
		ga_report_set(&t->node, "node07");
		ga_report_set(&t->log_path, "/home/alice/run/gpualert.log");
		ga_report_set(&t->verdict.tail,
		              "RuntimeError: CUDA out of memory. Tried to "
		              "allocate 2.00 GiB\n");
	}
	r->root_task = 0;
}

static int measure(const struct ga_config *cfg, unsigned first, unsigned n,
                   unsigned waiting)
{
	double *ms = calloc(n, sizeof(*ms)), t0, scan;
	int rc = 0;

	if (!ms)
		return -ENOMEM;
	for (unsigned i = 0; i < n && !rc; i++) {
		struct ga_report r;

		make_report(&r, first + i);
		t0 = now_ms();
		rc = ga_spool_put_report(cfg, &r);
		ms[i] = now_ms() - t0;
		ga_report_finish(&r);
	}
	t0 = now_ms();
	(void)ga_spool_usage(cfg->spool_dir);
	scan = now_ms() - t0;
	qsort(ms, n, sizeof(*ms), cmp_double);
	if (!rc)
		printf("waiting=%u write_median_ms=%.3f write_p90_ms=%.3f "
		       "scan_ms=%.1f\n",
		       waiting, ms[n / 2], ms[n * 9 / 10], scan);
	free(ms);
	return rc;
}

int main(int argc, char **argv)
{
	struct ga_config cfg;
	struct ga_report r;
	struct ga_buf b;
	unsigned waiting, writes;
	char path[4096];
	int rc;

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
	if (mkdir(argv[1], 0750) < 0 || ga_spool_prepare(argv[1]) < 0) {
		perror(argv[1]);
		return 1;
	}
	rc = measure(&cfg, 1000000, writes, 0);
	/* The waiting entries: the same bytes as a real report, written
	 * without fsync (only the directory's size matters here). */
	make_report(&r, 1);
	ga_buf_init(&b);
	ga_report_write_json(&r, &b);
	ga_report_finish(&r);
	for (unsigned i = 0; !rc && i < waiting; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/new/%u.batch.node07.u%u.json",
		         argv[1], 2000000 + i, 1001 + i % 50);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
		if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len) {
			perror(path);
			rc = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	ga_buf_finish(&b);
	if (!rc)
		rc = ga_spool_reconcile(argv[1]);
	if (!rc)
		rc = measure(&cfg, 3000000, writes, waiting);
	ga_config_finish(&cfg);
	if (rc)
		fprintf(stderr, "spool-bench: %s\n",
		        strerror(rc < 0 ? -rc : rc));
	return rc ? 1 : 0;
}
