/* SPDX-License-Identifier: MIT */
/* render-mail: render the message `gpualert send` would send for a set of
 * report files, with a fixed date and claim name, for the golden tests.
 *
 *   render-mail [--date UNIX] [--claim NAME] [--budget BYTES]
 *               [--from ADDR] [--att DIR]... [--site]
 *               [--webhook | --chat slack|teams|ntfy] REPORT.json...
 *
 * --site uses a site's from name, subject prefix, footer and help URL. 
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts.h"
#include "artifacts_load.h"
#include "buf.h"
#include "chat.h"
#include "mime.h"
#include "report.h"

int main(int argc, char **argv)
{
	struct ga_report reports[64];
	const struct ga_report *ptrs[64];
	struct ga_artifact_set att;
	struct ga_mail m;
	struct ga_buf out;
	const char *claim = "1234.0000000000000000",
	           *from = "gpualert@cluster.example.org";
	char mid[256];
	size_t n = 0;
	long long date = 1751375000;
	unsigned long long budget = 65536;
	int rc, webhook = -1;
	const char *from_name = "gpualert", *prefix = "[gpualert]",
	           *footer = "", *help_url = "";
	char title[200];

	ga_artifact_set_init(&att);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--date") && i + 1 < argc) {
			date = strtoll(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--claim") && i + 1 < argc) {
			claim = argv[++i];
		} else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
			budget = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			from = argv[++i];
		} else if (!strcmp(argv[i], "--att") && i + 1 < argc) {
			if (ga_artifacts_load(argv[++i], 1 << 30, &att) < 0)
				return 1;
		} else if (!strcmp(argv[i], "--webhook")) {
			webhook = GA_CHAT_SLACK;
		} else if (!strcmp(argv[i], "--chat") && i + 1 < argc) {
			i++;
			webhook = ga_chat_format_from_name(argv[i],
			                                   strlen(argv[i]));
			if (webhook < 0)
				return 2;
		} else if (!strcmp(argv[i], "--site")) {
			from_name = "Example HPC";
			prefix = "[hpc]";
			footer = "Questions? hpc-help@example.org";
			help_url = "https://hpc.example.org/help/gpualert";
		} else if (n < 64) {
			char *text;
			size_t len;
			const char *err = NULL;

			rc = ga_read_file(argv[i], 1 << 26, &text, &len);
			if (rc) {
				fprintf(stderr, "%s: %s\n", argv[i],
				        strerror(-rc));
				return 1;
			}
			ga_report_init(&reports[n]);
			rc = ga_report_parse_json(text, len, &reports[n], &err);
			free(text);
			if (rc) {
				fprintf(stderr, "%s: %s\n", argv[i],
				        err ? err : "?");
				return 1;
			}
			ptrs[n] = &reports[n];
			n++;
		}
	}
	memset(&m, 0, sizeof(m));
	m.reports = ptrs;
	m.n_reports = n;
	m.from = from;
	{
		size_t k = strcspn(claim, ".");
		char key[128];

		snprintf(key, sizeof(key), "%.*s", (int)k, claim);
		ga_mime_message_id(key, claim, from, mid, sizeof(mid));
	}
	m.message_id = mid;
	m.date = date;
	m.attach_budget = budget;
	m.files = att.files;
	m.n_files = att.n_files;
	m.skipped = att.skipped;
	m.n_skipped = att.n_skipped;
	ga_buf_init(&out);
	m.from_name = from_name;
	m.subject_prefix = prefix;
	m.footer = footer;
	m.help_url = help_url;
	rc = webhook >= 0 ? ga_chat_payload(&m, (enum ga_chat_format)webhook,
	                                    &out, title, sizeof(title))
	                  : ga_mime_render(&m, &out);
	if (rc) {
		fprintf(stderr, "render: %s\n", strerror(-rc));
		return 1;
	}
	if (webhook == GA_CHAT_NTFY)
		printf("Title: %s\n\n", title);
	fwrite(out.data, 1, out.len, stdout);
	ga_buf_finish(&out);
	ga_artifact_set_finish(&att);
	for (size_t i = 0; i < n; i++)
		ga_report_finish(&reports[i]);
	return 0;
}
