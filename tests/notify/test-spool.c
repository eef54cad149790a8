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
#include <unistd.h>

#include "artifacts.h"
#include "buf.h"
#include "spool.h"
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
	ok(ga_spool_prepare(root) == 0, "prepare");
	ok(ga_spool_write(root, "1.0.n1.json", "{}\n", 3, 1024, 1 << 20) == 0,
	   "write");
	ok(exists("new/1.0.n1.json") && count_dir("tmp") == 0,
	   "entry under its final name, no temp file left");
	ok(ga_spool_write(root, "../x", "x", 1, 0, 0) == -EINVAL,
	   "path refused");
	ok(ga_spool_write(root, ".hidden", "x", 1, 0, 0) == -EINVAL,
	   "leading dot refused");
	ok(ga_spool_write(root, "a b", "x", 1, 0, 0) == -EINVAL,
	   "space refused");
	{
		char big[4096];

		memset(big, 'x', sizeof(big));
		ok(ga_spool_write(root, "2.0.n1.json", big, sizeof(big), 1024,
		                  1 << 20) == -EFBIG,
		   "entry cap: -EFBIG");
		ok(!exists("new/2.0.n1.json") && count_dir("tmp") == 0,
		   "nothing left after -EFBIG");
		ok(ga_spool_write(root, "2.0.n1.json", big, sizeof(big),
		                  1 << 20, 4000) == -ENOSPC,
		   "total cap: -ENOSPC");
		ok(!exists("new/2.0.n1.json"), "nothing left after -ENOSPC");
	}

	ga_report_init(&r);
	ga_report_set(&r.job_id, "1201");
	ga_report_set(&r.step_id, "batch");
	ga_report_set(&r.node, "gpu/07 x");
	ok(ga_spool_report_name(&r, name, sizeof(name)) == 0 &&
	           !strcmp(name, "1201.batch.gpu-07-x"),
	   "report name sanitised: %s", name);
	ga_report_set(&r.array_job_id, "1200");
	ga_report_set(&r.array_task_id, "1_2");
	ok(ga_spool_report_name(&r, name, sizeof(name)) == 0 &&
	           !strcmp(name, "1200_1-2.batch.gpu-07-x"),
	   "array name keeps '_' as separator only: %s", name);
	ga_report_finish(&r);
	ok(ga_spool_job_key("1200_7.batch.n.json", name, sizeof(name)) == 0 &&
	           !strcmp(name, "1200"),
	   "array job key");

	/* Grouping and completeness. */
	ga_spool_write(root, "5.0.a.json", "{}", 2, 0, 0);
	ga_spool_write(root, "5.0.b.json", "{}", 2, 0, 0);
	ga_spool_write(root, "6.0.a.json", "{}", 2, 0, 0);
	ga_spool_write(root, "6.batch.a.json", "{}", 2, 0, 0);
	ga_spool_write(root, "7_1.batch.a.json", "{}", 2, 0, 0);
	ga_spool_write(root, "7_2.batch.b.json", "{}", 2, 0, 0);
	touch_old("new/5.0.a.json", 1000);
	touch_old("new/5.0.b.json", 1010);
	ok(ga_spool_scan_new(root, &scan) == 0 && scan.n_groups == 4,
	   "4 jobs (1, 5, 6, 7): %zu", scan.n_groups);
	{
		struct ga_spool_group *g5 = &scan.groups[1],
		                      *g6 = &scan.groups[2],
		                      *g7 = &scan.groups[3];

		ok(!strcmp(g5->key, "5") && g5->n_names == 2 &&
		           g5->newest == 1010,
		   "job 5: two reports, newest mtime");
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
		ok(!strcmp(claim, claim2) && !strncmp(claim, "5.", 2) &&
		           strlen(claim) == 18,
		   "claim name stable: %s", claim);
		g5->newest += 3600; /* job id 5 reused an hour later */
		ga_spool_claim_name(g5, claim2, sizeof(claim2));
		g5->newest -= 3600;
		ok(strcmp(claim, claim2) != 0,
		   "a reused job id gets another claim: %s", claim2);
		ok(ga_spool_claim(root, g5, claim) == 0, "claim");
		snprintf(p, sizeof(p), "out/%s/5.0.a.json", claim);
		ok(exists(p) && !exists("new/5.0.a.json") &&
		           !exists("new/5.0.b.json"),
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

	ga_spool_scan_new(root, &scan);
	ga_spool_claim_name(&scan.groups[0], claim, sizeof(claim));
	ga_spool_claim(root, &scan.groups[0], claim);
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
		rc = ga_artifacts_collect(root, "9.batch.n1", getuid(),
		                          getgid(), wd,
		                          (const char *const *)logs, 2,
		                          "*.csv, *.pt, ../*", 50000);
		ok(rc == 0, "collect: %d", rc);
		ok(exists("att/9.batch.n1/MANIFEST"), "manifest written");
		ga_artifact_set_init(&set);
		snprintf(p, sizeof(p), "%s/att/9.batch.n1", root);
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
		ok(ga_artifacts_collect(root, "../x", 0, 0, wd, NULL, 0, "",
		                        1) == -EINVAL,
		   "bad entry name refused");
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	if (system(p) != 0)
		return 1;
	return tap_done();
}
