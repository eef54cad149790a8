/* SPDX-License-Identifier: MIT */
/* spool-put: spool a report the way the plugin does, for the integration
 * tests and the benchmark.
 *
 *   spool-put SPOOL_DIR REPORT.json [WORK_DIR GLOBS BUDGET]
 *
 * Parses the report, opens a spool slot (with BUDGET bytes for the
 * attachments when given), collects its logs and artifacts
 * (ga_artifacts_collect), then commits.  Prints the return code ("rc=0",
 * "rc=-28") and the entry's name, and exits 0 when it was 0.
 * GPUALERT_SPOOL_TOTAL_MAX and GPUALERT_SPOOL_USER_SHARE override the
 * caps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifacts.h"
#include "config.h"
#include "report.h"
#include "spool.h"

int main(int argc, char **argv)
{
	struct ga_config cfg;
	struct ga_report r;
	struct ga_spool_slot slot;
	const char *err = NULL;
	char *text;
	size_t len;
	int rc;

	if (argc != 3 && argc != 6) {
		fprintf(stderr,
		        "usage: spool-put SPOOL REPORT [WORKDIR GLOBS BUDGET]\n");
		return 2;
	}
	if (ga_config_init(&cfg) < 0)
		return 1;
	free(cfg.spool_dir);
	cfg.spool_dir = strdup(argv[1]);
	rc = ga_read_file(argv[2], 1 << 26, &text, &len);
	if (rc)
		return 1;
	ga_report_init(&r);
	if (ga_report_parse_json(text, len, &r, &err) < 0) {
		fprintf(stderr, "spool-put: %s: %s\n", argv[2],
		        err ? err : "?");
		return 1;
	}
	free(text);
	if (getenv("GPUALERT_SPOOL_TOTAL_MAX"))
		cfg.spool_total_max = strtoull(
		        getenv("GPUALERT_SPOOL_TOTAL_MAX"), NULL, 10);
	if (getenv("GPUALERT_SPOOL_USER_SHARE"))
		cfg.spool_user_share = (unsigned)strtoul(
		        getenv("GPUALERT_SPOOL_USER_SHARE"), NULL, 10);
	rc = ga_spool_slot_open(
	        &cfg, &r, argc == 6 ? strtoull(argv[5], NULL, 10) : 0, &slot);
	if (!rc && argc == 6 && slot.att_budget) {
		const char **logs = calloc(r.n_tasks + 1, sizeof(*logs));
		int crc;

		for (size_t i = 0; logs && i < r.n_tasks; i++)
			logs[i] = r.tasks[i].log_path;
		crc = ga_artifacts_collect(&slot, r.uid, r.gid, argv[3], logs,
		                           r.n_tasks, argv[4],
		                           cfg.collect_timeout_ms);
		free(logs);
		if (crc)
			printf("collect rc=%d\n", crc);
	}
	if (!rc)
		rc = ga_spool_slot_commit(&slot);
	if (!rc)
		printf("name=%s\n", slot.name);
	ga_spool_slot_close(&slot);
	printf("rc=%d\n", rc);
	ga_report_finish(&r);
	ga_config_finish(&cfg);
	return rc ? 1 : 0;
}
