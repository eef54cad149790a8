/* SPDX-License-Identifier: MIT */
/* spool-put: spool a report the way the plugin does, for the integration
 * tests and the benchmark.
 *
 *   spool-put SPOOL_DIR REPORT.json [WORK_DIR GLOBS BUDGET]
 *
 * Parses the report, optionally collects its logs and artifacts
 * (ga_artifacts_collect), then ga_spool_put_report.  Prints the return
 * code ("rc=0", "rc=-28") and exits 0 when it was 0. */
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
	const char *err = NULL;
	char *text, name[256];
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
	if (argc == 6) {
		const char **logs = calloc(r.n_tasks + 1, sizeof(*logs));

		for (size_t i = 0; i < r.n_tasks; i++)
			logs[i] = r.tasks[i].log_path;
		ga_spool_report_name(&r, name, sizeof(name));
		rc = ga_artifacts_collect(argv[1], name, r.uid, r.gid, argv[3],
		                          logs, r.n_tasks, argv[4],
		                          strtoull(argv[5], NULL, 10));
		free(logs);
		if (rc)
			printf("collect rc=%d\n", rc);
	}
	rc = ga_spool_put_report(&cfg, &r);
	printf("rc=%d\n", rc);
	ga_report_finish(&r);
	ga_config_finish(&cfg);
	return rc ? 1 : 0;
}
