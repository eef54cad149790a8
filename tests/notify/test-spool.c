/* SPDX-License-Identifier: MIT */
/* The spool: durable writes, caps, grouping, claims, state, dead letters,
 * and artifact collection with the attachment budget. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "artifacts.h"
#include "artifacts_load.h"
#include "buf.h"
#include "spool.h"
#include "spool_queue.h"
#include "util.h"
#include "tap.h"

static char root[256];

static int count_dir(const char *sub)
{
	char p[512];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", root, sub);
	d = opendir(p);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static bool exists(const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return stat(p, &st) == 0;
}

static void touch_old(const char *rel, time_t t)
{
	char p[512];
	struct timespec ts[2] = {{t, 0}, {t, 0}};

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	utimensat(AT_FDCWD, p, ts, 0);
}

/* FILL 0: incompressible bytes (an LCG), else text lines of FILL. */
static void write_file(const char *path, size_t size, char fill)
{
	FILE *f = fopen(path, "w");
	uint32_t x = 12345;

	for (size_t i = 0; i < size; i++) {
		x = x * 1103515245u + 12345u;
		fputc(!fill ? (int)(x >> 24) : i % 61 == 60 ? '\n' : fill, f);
	}
	fclose(f);
}

static struct ga_config cfg;

/* Open a slot for a report of job JOB, step batch, node n1, uid 1001. */
static int open_slot(const char *job, uint64_t budget,
                     struct ga_spool_slot *slot)
{
	struct ga_report r;
	int rc;

	ga_report_init(&r);
	ga_report_put(&r.job_id, job);
	ga_report_put(&r.step_id, "batch");
	ga_report_put(&r.node, "n1");
	r.uid = 1001;
	rc = ga_spool_slot_open(&cfg, &r, budget, slot);
	ga_report_finish(&r);
	return rc;
}

static void make_report(struct ga_report *r, const char *job, uint32_t uid)
{
	ga_report_init(r);
	ga_report_put(&r->job_id, job);
	ga_report_put(&r->step_id, "batch");
	ga_report_put(&r->node, "n1");
	ga_report_put(&r->user, "u");
	r->uid = uid;
}

static int put(const char *job, uint32_t uid)
{
	struct ga_report r;
	int rc;

	make_report(&r, job, uid);
	rc = ga_spool_put_report(&cfg, &r);
	ga_report_finish(&r);
	return rc;
}

/* Item: a spooled report is never replaced; a writer gets another name. */
static void test_names(void)
{
	struct ga_spool_slot a, b;
	struct ga_report r;
	char *text = NULL, p[512];

	ok(put("300", 1001) == 0 && exists("new/300.batch.n1.u1001.json"),
	   "put: NAME.u<uid>.json");
	ok(put("300", 1001) == 0 && exists("new/300.batch.n1.u1001.2.json"),
	   "the same name again: written as NAME.2, the first kept");
	make_report(&r, "301", 1001);
	ok(ga_spool_slot_open(&cfg, &r, 0, &a) == 0 &&
	           ga_spool_slot_open(&cfg, &r, 0, &b) == 0 &&
	           !strcmp(a.name, "301.batch.n1.u1001") &&
	           !strcmp(b.name, "301.batch.n1.u1001.2"),
	   "two writers at once hold two names: %s, %s", a.name, b.name);
	/* A writer that holds no lock takes A's name before A commits. */
	ok(ga_spool_write(root, "301.batch.n1.u1001.json", "{}\n", 3) == 0,
	   "an unlocked write takes the held name");
	ok(ga_spool_slot_commit(&b) == 0 && ga_spool_slot_commit(&a) == 0 &&
	           !strcmp(a.name, "301.batch.n1.u1001.3"),
	   "commit moves on to a free name: %s", a.name);
	snprintf(p, sizeof(p), "%s/new/301.batch.n1.u1001.json", root);
	ok(ga_read_file(p, 100, &text, NULL) == 0 && !strcmp(text, "{}\n"),
	   "the other writer's report is intact");
	free(text);
	ga_spool_slot_close(&a);
	ga_spool_slot_close(&b);
	ok(!exists("att/301.batch.n1.u1001.2") &&
	           !exists("att/301.batch.n1.u1001.3"),
	   "empty name locks removed after commit");
	ga_report_finish(&r);
}

static uint64_t user_bytes(uint32_t uid)
{
	uint64_t t = 0, u = 0;

	/* A counter that cannot be read reads as UINT64_MAX: no check on
	 * it passes. */
	return ga_spool_usage_of(root, uid, &t, &u) ? UINT64_MAX : u;
}

static uint64_t total_bytes(void)
{
	uint64_t t = 0, u = 0;

	return ga_spool_usage_of(root, 0, &t, &u) ? UINT64_MAX : t;
}

/* Item: one user cannot fill the spool for everyone; counters, not
 * scans; attachments only once the report fits; orphans swept. */
static void test_accounting(void)
{
	struct ga_spool_slot s;
	struct ga_report r;
	uint64_t before;
	char p[512];

	ok(ga_spool_reconcile(root) == 0, "reconcile");
	before = user_bytes(1001);
	ok(before > 0 && total_bytes() >= before,
	   "reconciled: uid 1001 has %llu bytes, total %llu",
	   (unsigned long long)before, (unsigned long long)total_bytes());
	ok(put("400", 1001) == 0 && user_bytes(1001) > before,
	   "a write adds to its uid's counter");
	cfg.spool_total_max = 1 << 20;
	cfg.spool_user_share = 25; /* 256 KiB each */
	ok(ga_spool_account(root, 2001, 260 * 1024) == 0, "account 2001");
	ok(put("401", 2001) == -ENOSPC &&
	           !exists("new/401.batch.n1.u2001.json"),
	   "uid 2001 over its share: -ENOSPC");
	ok(put("402", 2002) == 0, "uid 2002 still writes");
	make_report(&r, "403", 2002);
	ok(ga_spool_slot_open(&cfg, &r, 200 * 1024, &s) == 0 &&
	           s.att_budget == 200 * 1024,
	   "attachment budget reserved with the report");
	ga_spool_slot_close(&s);
	ok(ga_spool_account(root, 2002, 200 * 1024) == 0, "account 2002");
	ok(ga_spool_slot_open(&cfg, &r, 200 * 1024, &s) == 0 &&
	           s.att_budget == 0,
	   "no room for the attachments: the report alone, no budget");
	ok(ga_spool_slot_commit(&s) == 0 && !exists("att/403.batch.n1.u2002"),
	   "written without an att/ directory");
	ga_spool_slot_close(&s);
	ga_report_finish(&r);
	ok(ga_spool_account(root, 2003, 900 * 1024) == 0, "account 2003");
	ok(put("404", 2004) == -ENOSPC, "total_max reached: -ENOSPC");
	ok(ga_spool_reconcile(root) == 0 && user_bytes(2001) == 0 &&
	           user_bytes(2003) == 0 && total_bytes() < 900 * 1024,
	   "reconciliation drops what is not in the spool");
	ok(put("404", 2004) == 0, "after it, uid 2004 writes again");
	/* An aborted slot gives its reservation back. */
	before = total_bytes();
	make_report(&r, "405", 2005);
	ok(ga_spool_slot_open(&cfg, &r, 1000, &s) == 0 &&
	           total_bytes() > before,
	   "open reserves");
	ga_spool_slot_close(&s);
	ok(total_bytes() == before && !exists("att/405.batch.n1.u2005"),
	   "close without commit: reservation and name lock released");
	ga_report_finish(&r);
	cfg.spool_total_max = 1024 << 20;
	/* Orphans. */
	snprintf(p, sizeof(p), "%s/att/999.batch.n1.u7", root);
	mkdir(p, 0750);
	snprintf(p, sizeof(p), "%s/att/999.batch.n1.u7/01-x.log", root);
	write_file(p, 100, 'x');
	touch_old("att/999.batch.n1.u7", 1000);
	snprintf(p, sizeof(p), "%s/att/404.batch.n1.u2004", root);
	mkdir(p, 0750);
	touch_old("att/404.batch.n1.u2004", 1000);
	ok(ga_spool_sweep_att(root, 1000 + 7200, 3600) == 1 &&
	           !exists("att/999.batch.n1.u7") &&
	           exists("att/404.batch.n1.u2004"),
	   "orphaned att/ swept by age; one with its report kept");
}

/* Item: an unprivileged sender can read, move and delete what root
 * writes. */
static void test_ownership(void)
{
	struct stat st;
	bool all = true;
	const char *paths[] = {"new/500.batch.n1.u1001.json", "usage/total",
	                       "usage/u1001", "new"};

	if (geteuid() != 0) {
		ok(true, "# SKIP ownership needs root");
		return;
	}
	if (chown(root, 65534, 65534) < 0 || put("500", 1001) != 0) {
		ok(false, "write into a spool owned by 65534");
		return;
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", root, paths[i]);
		if (i == 3) {
			/* prepare() gives dirs it creates; "new" existed */
			continue;
		}
		if (stat(p, &st) < 0 || st.st_uid != 65534 ||
		    st.st_gid != 65534 || (st.st_mode & 0777) != 0640) {
			all = false;
			diag("%s: uid %u mode %o", p, (unsigned)st.st_uid,
			     (unsigned)(st.st_mode & 0777));
		}
	}
	ok(all, "root writes entries and counters as the spool's owner, 0640");
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/fresh", root);
		mkdir(p, 0750);
		if (chown(p, 65534, 65534) < 0)
			all = false;
		ok(ga_spool_prepare(p) == 0 && all, "prepare");
		snprintf(p, sizeof(p), "%s/fresh/att", root);
		ok(stat(p, &st) == 0 && st.st_uid == 65534 &&
		           (st.st_mode & 0777) == 0750,
		   "subdirectories made by root belong to the owner");
	}
	if (chown(root, 0, 0) < 0)
		diag("chown back failed");
}

/* Item: nothing from a report forges a sent.log line. */
static void test_sent_log(void)
{
	char p[512], *text = NULL;
	unsigned lines = 0;

	snprintf(p, sizeof(p), "%s/out/forge.u1.0000000000000000", root);
	mkdir(p, 0750);
	ok(ga_spool_mark_sent(root, "forge.u1.0000000000000000",
	                      "mallory\n1700000000 victim x <y@z>",
	                      "<m@x>\r\nforged", 1700000001) == 0,
	   "mark sent");
	snprintf(p, sizeof(p), "%s/sent.log", root);
	ok(ga_read_file(p, 1 << 20, &text, NULL) == 0, "sent.log read");
	for (char *c = text; c && *c; c++)
		lines += *c == '\n';
	ok(text && strstr(text, "1700000001 mallory?1700000000?victim?x?<y@z> "
	                        "forge.u1.0000000000000000 <m@x>??forged\n"),
	   "newlines, and spaces but in the last field, written as '?'");
	ok(lines == 2, "one line per message (%u)", lines);
	free(text);
}

/* Item: reports are never dead-lettered for their size. */
static void test_report_size(void)
{
	struct ga_report r, back;
	struct ga_buf b;
	char *big = malloc(65537), *text = NULL, p[512];
	const char *err = NULL;

	memset(big, 'a', 65536);
	memcpy(big, "python train.py ", 16);
	big[4094] = (char)0xc3; /* a two-byte character across the cut */
	big[4095] = (char)0xa9;
	big[65536] = '\0';
	make_report(&r, "600", 1001);
	ga_report_put(&r.command, big);
	ga_buf_init(&b);
	ga_report_write_json(&r, &b);
	ga_report_init(&back);
	ok(ga_report_parse_json(b.data, b.len, &back, &err) == 0,
	   "a 64 KiB command line: written and read back (%s)",
	   err ? err : "ok");
	ok(back.command && strlen(back.command) <= 4096 &&
	           !strncmp(back.command, "python train.py aaa", 19) &&
	           strstr(back.command, "[... cut by gpualert: 65536 bytes]"),
	   "cut to 4 KiB with a marker");
	ok(back.command && !strstr(back.command, "\\xc3 ["),
	   "never cut inside a UTF-8 character");
	ga_report_finish(&back);
	ga_buf_finish(&b);
	/* An older writer wrote it whole: the reader cuts, not refuses. */
	ga_buf_init(&b);
	ga_buf_printf(&b,
	              "{\"schema\":%d,\"job_id\":\"601\",\"command\":\"%s\","
	              "\"tasks\":[]}",
	              GA_REPORT_SCHEMA, big + 5000);
	ga_report_init(&back);
	ok(ga_report_parse_json(b.data, b.len, &back, &err) == 0 &&
	           back.command && strlen(back.command) <= 4096,
	   "a whole 60 KiB string from an older writer is read, cut");
	ga_report_finish(&back);
	ga_buf_finish(&b);
	ok(ga_spool_put_report(&cfg, &r) == 0, "spooled");
	snprintf(p, sizeof(p), "%s/new/600.batch.n1.u1001.json", root);
	ga_report_init(&back);
	ok(ga_read_file(p, 1 << 20, &text, NULL) == 0 &&
	           ga_report_parse_json(text, strlen(text), &back, &err) == 0,
	   "the spooled report reads back");
	free(text);
	ga_report_finish(&back);
	ga_report_finish(&r);
	free(big);
}

/* Stops the file-reading child as soon as it is forked: a reader stuck
 * on a hung mount, as far as its parent can tell. */
static volatile bool stop_children;

static void stop_in_child(void)
{
	if (stop_children)
		raise(SIGSTOP);
}

/* Item: the file-reading child has a deadline. */
static void test_deadline(void)
{
	struct ga_spool_slot s;
	struct ga_artifact_set set;
	struct timespec t0, t1;
	char wd[300], logp[400], p[512];
	const char *logs[1];
	double ms;
	int rc;

	snprintf(wd, sizeof(wd), "%.200s/work2", root);
	mkdir(wd, 0755);
	snprintf(logp, sizeof(logp), "%s/job.log", wd);
	write_file(logp, 1000, 'a');
	logs[0] = logp;
	ok(open_slot("700", 100000, &s) == 0, "slot");
	stop_children = true;
	pthread_atfork(NULL, NULL, stop_in_child);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = ga_artifacts_collect(&s, getuid(), getgid(), wd, logs, 1, "*.csv",
	                          300);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stop_children = false;
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	/* The upper bound only tells "returned" from "hung". */
	ok(rc == 0 && ms >= 290 && ms < 30000,
	   "a stuck reader is killed at the deadline: rc %d after %.0f ms", rc,
	   ms);
	ok(ga_spool_slot_commit(&s) == 0, "the report is still spooled");
	ga_artifact_set_init(&set);
	snprintf(p, sizeof(p), "%s/att/700.batch.n1.u1001", root);
	ok(ga_artifacts_load(p, 1 << 20, &set) == 0 && set.n_skipped == 2 &&
	           set.n_files == 0,
	   "the log and the globs listed as not collected (%zu)",
	   set.n_skipped);
	if (set.n_skipped == 2)
		ok(!strcmp(set.skipped[0].path, logp) &&
		           strstr(set.skipped[0].reason, "300 ms") &&
		           strstr(set.skipped[1].path, "*.csv"),
		   "with the reason: %s", set.skipped[0].reason);
	ga_artifact_set_finish(&set);
	ga_spool_slot_close(&s);

	/* A FIFO in place of a log: opened without blocking, and listed. */
	snprintf(logp, sizeof(logp), "%s/fifo.log", wd);
	mkfifo(logp, 0600);
	ok(open_slot("701", 100000, &s) == 0 &&
	           ga_artifacts_collect(&s, getuid(), getgid(), wd, logs, 1, "",
	                                10000) == 0 &&
	           ga_spool_slot_commit(&s) == 0,
	   "a FIFO as the log: collected without waiting for a writer");
	ga_artifact_set_init(&set);
	snprintf(p, sizeof(p), "%s/att/701.batch.n1.u1001", root);
	ok(ga_artifacts_load(p, 1 << 20, &set) == 0 && set.n_skipped == 1 &&
	           strstr(set.skipped[0].reason, "not a regular file"),
	   "listed as not a regular file");
	ga_artifact_set_finish(&set);
	ga_spool_slot_close(&s);
}

int main(void)
{
	struct ga_spool_scan scan;
	struct ga_spool_state st, st2;
	struct ga_report r;
	char name[256], claim[256], claim2[256], p[512];
	int rc;

	snprintf(root, sizeof(root), "/tmp/ga-spool-test.XXXXXX");
	if (!mkdtemp(root)) {
		printf("1..0 # SKIP no temp dir\n");
		return 77;
	}
	if (ga_config_init(&cfg) < 0)
		return 1;
	free(cfg.spool_dir);
	cfg.spool_dir = strdup(root);
	ok(ga_spool_prepare(root) == 0, "prepare");
	ok(ga_spool_write(root, "1.0.n1.json", "{}\n", 3) == 0, "write");
	ok(exists("new/1.0.n1.json") && count_dir("tmp") == 0,
	   "entry under its final name, no temp file left");
	ok(ga_spool_write(root, "1.0.n1.json", "{\"x\":1}\n", 8) == -EEXIST &&
	           count_dir("tmp") == 0,
	   "an existing entry is never replaced: -EEXIST");
	{
		char *text = NULL;

		snprintf(p, sizeof(p), "%s/new/1.0.n1.json", root);
		ok(ga_read_file(p, 100, &text, NULL) == 0 &&
		           !strcmp(text, "{}\n"),
		   "the first entry is intact");
		free(text);
	}
	ok(ga_spool_write(root, "../x", "x", 1) == -EINVAL, "path refused");
	ok(ga_spool_write(root, ".hidden", "x", 1) == -EINVAL,
	   "leading dot refused");
	ok(ga_spool_write(root, "a b", "x", 1) == -EINVAL, "space refused");

	ga_report_init(&r);
	ga_report_put(&r.job_id, "1201");
	ga_report_put(&r.step_id, "batch");
	ga_report_put(&r.node, "gpu/07 x");
	r.uid = 1001;
	ok(ga_spool_report_name(&r, name, sizeof(name)) == 0 &&
	           !strcmp(name, "1201.batch.gpu-07-x.u1001"),
	   "report name sanitised, with the uid: %s", name);
	ok(ga_spool_report_name(&r, name, 12) == -ENAMETOOLONG,
	   "a name that does not fit is an error, not cut");
	ga_report_put(&r.array_job_id, "1200");
	ga_report_put(&r.array_task_id, "1_2");
	ok(ga_spool_report_name(&r, name, sizeof(name)) == 0 &&
	           !strcmp(name, "1200_1-2.batch.gpu-07-x.u1001"),
	   "array name keeps '_' as separator only: %s", name);
	ga_report_finish(&r);
	ok(ga_spool_job_key("1200_7.batch.n.u1001.json", name, sizeof(name)) ==
	                   0 &&
	           !strcmp(name, "1200.u1001"),
	   "array job key, with the uid: %s", name);
	ok(ga_spool_job_key("1200.batch.n.u1001.2.json", name, sizeof(name)) ==
	                   0 &&
	           !strcmp(name, "1200.u1001"),
	   "a suffixed name has the same key");
	ok(ga_spool_job_key("1200.batch.n.json", name, sizeof(name)) == 0 &&
	           !strcmp(name, "1200"),
	   "an older name without uid: the job id");
	{
		uint32_t u = 0;

		ok(ga_spool_name_uid("9.0.u5.u77.json", &u) == 0 && u == 77,
		   "uid of a report name (a node named like a uid)");
		ok(ga_spool_name_uid("9.u77.0123456789abcdef", &u) == 0 &&
		           u == 77,
		   "uid of a claim name");
		ok(ga_spool_name_uid("9.0.n.json", &u) == -ENOENT,
		   "no uid in an older name");
	}

	/* Grouping and completeness. */
	{
		static const char *const names[] = {
		        "5.0.a.u10.json",       "5.0.b.u10.json",
		        "5.0.c.u11.json",       "6.0.a.u10.json",
		        "6.batch.a.u10.json",   "7_1.batch.a.u10.json",
		        "7_2.batch.b.u10.json",
		};
		int bad = 0;

		for (size_t i = 0; i < GA_ARRAY_LEN(names); i++)
			bad |= ga_spool_write(root, names[i], "{}", 2);
		ok(!bad, "grouping: %zu reports written", GA_ARRAY_LEN(names));
	}
	touch_old("new/5.0.a.u10.json", 1000);
	touch_old("new/5.0.b.u10.json", 1010);
	ok(ga_spool_scan_new(root, &scan) == 0 && scan.n_groups == 5,
	   "5 groups (1, 5 of uid 10, 5 of uid 11, 6, 7): %zu", scan.n_groups);
	if (scan.n_groups == 5) {
		struct ga_spool_group *g5 = &scan.groups[1],
		                      *g5b = &scan.groups[2],
		                      *g6 = &scan.groups[3],
		                      *g7 = &scan.groups[4];

		ok(!strcmp(g5->key, "5.u10") && g5->n_names == 2 &&
		           g5->newest == 1010 && g5->has_uid && g5->uid == 10,
		   "job 5 of uid 10: two reports, newest mtime");
		ok(!strcmp(g5b->key, "5.u11") && g5b->n_names == 1 &&
		           g5b->uid == 11,
		   "job 5 of uid 11: never merged with uid 10's");
		ok(!ga_spool_group_due(g5, 1030, 45) &&
		           ga_spool_group_due(g5, 1055, 45),
		   "quiet period");
		ok(g6->has_batch && ga_spool_group_due(g6, 0, 45),
		   "the batch step ends a batch job");
		ok(g7->is_array && g7->has_batch && g7->n_names == 2 &&
		           !ga_spool_group_due(g7, g7->newest, 45),
		   "array: one group, waits for quiet");
		ga_spool_claim_name(g5, claim, sizeof(claim));
		ga_spool_claim_name(g5, claim2, sizeof(claim2));
		ok(!strcmp(claim, claim2) && !strncmp(claim, "5.u10.", 6) &&
		           strlen(claim) == 22,
		   "claim name stable: %s", claim);
		g5->newest += 3600; /* job id 5 reused an hour later */
		ga_spool_claim_name(g5, claim2, sizeof(claim2));
		g5->newest -= 3600;
		ok(strcmp(claim, claim2) != 0,
		   "a reused job id gets another claim: %s", claim2);
		ok(ga_spool_claim(root, g5, claim) == 0, "claim");
		snprintf(p, sizeof(p), "out/%s/5.0.a.u10.json", claim);
		ok(exists(p) && !exists("new/5.0.a.u10.json") &&
		           !exists("new/5.0.b.u10.json") &&
		           exists("new/5.0.c.u11.json"),
		   "reports moved to out/");
		ok(ga_spool_claim(root, g5, claim) == 0,
		   "claim again: idempotent");
	}
	ga_spool_scan_finish(&scan);

	snprintf(p, sizeof(p), "%s/out/%s", root, claim);
	memset(&st, 0, sizeof(st));
	st.attempts = 3;
	st.first_seen = 1700000000;
	st.next_try = 1700000480;
	snprintf(st.last_error, sizeof(st.last_error), "451 try\nlater");
	ok(ga_spool_state_write(p, &st) == 0 &&
	           ga_spool_state_read(p, &st2) == 0 && st2.attempts == 3 &&
	           st2.first_seen == 1700000000 && st2.next_try == 1700000480 &&
	           !strcmp(st2.last_error, "451 try later"),
	   "state round trip, newline flattened");
	ok(!ga_spool_was_sent(root, claim), "not sent yet");
	ok(ga_spool_mark_sent(root, claim, "alice", "<m@x>", 1700000500) == 0 &&
	           ga_spool_was_sent(root, claim) && count_dir("out") == 0,
	   "sent: logged, claim removed");

	ok(ga_spool_scan_new(root, &scan) == 0 && scan.n_groups > 0,
	   "scan for the dead letter");
	if (scan.n_groups) {
		ga_spool_claim_name(&scan.groups[0], claim, sizeof(claim));
		ok(ga_spool_claim(root, &scan.groups[0], claim) == 0,
		   "claim the dead letter");
	}
	ga_spool_scan_finish(&scan);
	ok(ga_spool_bury(root, claim, "550 no such user\r\nX: y") == 0, "bury");
	snprintf(p, sizeof(p), "%s/dead/%s/reason", root, claim);
	{
		char *text = NULL;

		ok(ga_read_file(p, 4096, &text, NULL) == 0 &&
		           !strcmp(text, "550 no such user  X: y\n"),
		   "dead letter with a one-line reason");
		free(text);
	}

	/* Artifact collection: budget, gzip, skipped listing. */
	{
		char wd[300], logp[400], big[400], *logs[2];
		struct ga_artifact_set set;
		struct ga_spool_slot slot;
		uint64_t sum = 0;

		snprintf(wd, sizeof(wd), "%.200s/work", root);
		mkdir(wd, 0755);
		snprintf(logp, sizeof(logp), "%s/job.log", wd);
		write_file(logp, 200000, 'a'); /* compresses well */
		snprintf(big, sizeof(big), "%s/model.pt", wd);
		write_file(big, 300000, 0);
		snprintf(p, sizeof(p), "%.300s/loss.csv", wd);
		write_file(p, 1000, 'c');
		logs[0] = logp;
		logs[1] = "/nonexistent/x.log";
		rc = open_slot("9", 50000, &slot);
		ok(rc == 0 && !strcmp(slot.name, "9.batch.n1.u1001") &&
		           slot.att_budget == 50000 &&
		           exists("att/9.batch.n1.u1001"),
		   "slot: name held by att/NAME, budget reserved");
		rc = ga_artifacts_collect(&slot, getuid(), getgid(), wd,
		                          (const char *const *)logs, 2,
		                          "*.csv, *.pt, ../*", 5000);
		ok(rc == 0, "collect: %d", rc);
		ok(exists("att/9.batch.n1.u1001/MANIFEST"), "manifest written");
		ok(slot.att_used > 0 && slot.att_used <= 50000 + 4096,
		   "bytes used recorded: %llu",
		   (unsigned long long)slot.att_used);
		ok(ga_spool_slot_commit(&slot) == 0 &&
		           exists("new/9.batch.n1.u1001.json"),
		   "report committed after its files");
		ga_spool_slot_close(&slot);
		ga_artifact_set_init(&set);
		snprintf(p, sizeof(p), "%s/att/9.batch.n1.u1001", root);
		ok(ga_artifacts_load(p, 1 << 20, &set) == 0, "load");
		ok(set.n_files == 2, "2 files attached (log.gz, csv): %zu",
		   set.n_files);
		if (set.n_files == 2) {
			ok(!strcmp(set.files[0].filename, "job.log.gz") &&
			           set.files[0].orig_size == 200000 &&
			           set.files[0].len < 50000 &&
			           !memcmp(set.files[0].data, "\x1f\x8b", 2),
			   "full log gzip-compressed to fit");
			ok(!strcmp(set.files[1].filename, "loss.csv"),
			   "glob match");
			sum = set.files[0].len + set.files[1].len;
		}
		ok(sum <= 50000, "within the budget");
		ok(set.n_skipped == 2, "2 skipped (missing log, model.pt): %zu",
		   set.n_skipped);
		if (set.n_skipped == 2) {
			ok(strstr(set.skipped[0].reason, "cannot read") != NULL,
			   "missing log listed: %s", set.skipped[0].reason);
			ok(set.skipped[1].size == 300000 &&
			           strstr(set.skipped[1].reason, "budget") !=
			                   NULL,
			   "model.pt listed with size and reason");
		}
		ga_artifact_set_finish(&set);
		memset(&slot, 0, sizeof(slot));
		ok(ga_artifacts_collect(&slot, 0, 0, wd, NULL, 0, "", 100) ==
		           -EINVAL,
		   "collect without an open slot refused");
	}
	test_names();
	test_accounting();
	test_ownership();
	test_sent_log();
	test_report_size();
	test_deadline();
	ga_config_finish(&cfg);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	if (system(p) != 0)
		return 1;
	return tap_done();
}
