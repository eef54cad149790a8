/* SPDX-License-Identifier: MIT */
#include "artifacts_load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "spool.h"
#include "fdio.h"

void ga_artifact_set_init(struct ga_artifact_set *s)
{
	memset(s, 0, sizeof(*s));
}

void ga_artifact_set_finish(struct ga_artifact_set *s)
{
	for (size_t i = 0; i < s->n_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->files);
	free(s->skipped);
	memset(s, 0, sizeof(*s));
}

static char *keep(struct ga_artifact_set *s, char *p)
{
	char **tmp;

	if (!p)
		return NULL;
	tmp = realloc(s->strings, (s->n_strings + 1) * sizeof(*tmp));
	if (!tmp) {
		free(p);
		return NULL;
	}
	s->strings = tmp;
	s->strings[s->n_strings++] = p;
	return p;
}

static const char *content_type(const char *name)
{
	size_t n = strlen(name);

	if (n > 3 && !strcmp(name + n - 3, ".gz"))
		return "application/gzip";
	if ((n > 4 &&
	     (!strcmp(name + n - 4, ".log") || !strcmp(name + n - 4, ".txt") ||
	      !strcmp(name + n - 4, ".out") || !strcmp(name + n - 4, ".err"))))
		return "text/plain; charset=utf-8";
	if (n > 5 && !strcmp(name + n - 5, ".json"))
		return "application/json";
	return "application/octet-stream";
}

int ga_artifacts_load(const char *att_dir, uint64_t max,
                      struct ga_artifact_set *s)
{
	char path[4096], *text = NULL, *save = NULL;
	uint64_t used = 0;
	int rc;

	rc = ga_path_printf(path, sizeof(path), "%s/MANIFEST", att_dir);
	if (rc)
		return rc;
	rc = ga_read_file(path, 1 << 20, &text, NULL);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[5];
		char *p = line;
		int k;

		for (k = 0; k < 5 && p; k++) {
			f[k] = p;
			p = k < 4 ? strchr(p, '\t') : NULL;
			if (p)
				*p++ = '\0';
		}
		if (k < 5)
			continue;
		if (f[0][0] == 'A' && ga_spool_name_ok(f[1])) {
			struct ga_mail_file *tmp, *mf;
			char *data = NULL;
			size_t len = 0;
			const char *shown = f[1] + strcspn(f[1], "-");

			if (ga_path_printf(path, sizeof(path), "%s/%s", att_dir,
			                   f[1])) {
				rc = -ENAMETOOLONG;
				break;
			}
			tmp = realloc(s->files,
			              (s->n_files + 1) * sizeof(*tmp));
			if (!tmp) {
				rc = -ENOMEM;
				break;
			}
			s->files = tmp;
			mf = &s->files[s->n_files++];
			memset(mf, 0, sizeof(*mf));
			if (*shown == '-')
				shown++;
			mf->filename = keep(s, strdup(shown));
			mf->origin = keep(s, strdup(f[4]));
			mf->content_type = content_type(shown);
			mf->orig_size = strtoull(f[2], NULL, 10);
			mf->note = *f[3] ? keep(s, strdup(f[3])) : NULL;
			if (ga_read_file(path, (size_t)(max - used), &data,
			                 &len) == 0) {
				mf->data = keep(s, data);
				mf->len = len;
				used += len;
			} else {
				mf->note = "missing from the spool";
			}
		} else if (f[0][0] == 'S') {
			struct ga_mail_skipped *tmp, *ms;

			tmp = realloc(s->skipped,
			              (s->n_skipped + 1) * sizeof(*tmp));
			if (!tmp) {
				rc = -ENOMEM;
				break;
			}
			s->skipped = tmp;
			ms = &s->skipped[s->n_skipped++];
			ms->size = strtoull(f[2], NULL, 10);
			ms->reason = keep(s, strdup(f[3]));
			ms->path = keep(s, strdup(f[4]));
		}
	}
	free(text);
	return rc;
}
