/* SPDX-License-Identifier: MIT */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fdio.h"
#include "log.h"

static const char *const subdirs[] = {"tmp", "new", "att", "out", "dead"};

int ga_spool_prepare(const char *dir)
{
	char path[4096];

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: cannot create %s: %s",
		       dir, strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		ga_path_printf(path, sizeof(path), "%s/%s", dir, subdirs[i]);
		if (mkdir(path, 0750) < 0 && errno != EEXIST) {
			ga_log(GA_LOG_ERROR,
			       "gpualert: spool: cannot create "
			       "%s: %s",
			       path, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

bool ga_spool_name_ok(const char *name)
{
	size_t n = 0;

	if (!name || !*name || name[0] == '.')
		return false;
	for (const char *c = name; *c; c++, n++) {
		if (n >= GA_SPOOL_NAME_MAX)
			return false;
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
		      *c == '-'))
			return false;
	}
	return true;
}

/* nftw has no user pointer: the walk is short and single-threaded. */
static uint64_t usage_total;

static int usage_cb(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
	if (flag == FTW_F && S_ISREG(st->st_mode))
		usage_total += (uint64_t)st->st_size;
	return 0;
}

uint64_t ga_spool_usage(const char *dir)
{
	usage_total = 0;
	if (nftw(dir, usage_cb, 16, FTW_PHYS) < 0)
		return 0;
	return usage_total;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The durable write: a temp file in TMP_DIR, fsync, rename to
 * DEST_DIR/NAME, fsync DEST_DIR (rename(2) is atomic but only the
 * directory's fsync makes it survive a power loss: fsync(2) NOTES). */
static int durable_write(const char *tmp_dir, const char *dest_dir,
                         const char *name, const void *data, size_t len)
{
	char tmp[4096], dest[4096];
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", tmp_dir,
	                     name) >= sizeof(tmp) ||
	    (size_t)ga_path_printf(dest, sizeof(dest), "%s/%s", dest_dir,
	                           name) >= sizeof(dest))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = ga_write_all(fd, data, len);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && chmod(tmp, 0640) < 0)
		rc = -errno;
	if (!rc && rename(tmp, dest) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	return fsync_dir(dest_dir);
}

int ga_spool_write(const char *dir, const char *name, const void *data,
                   size_t len, uint64_t entry_max, uint64_t total_max)
{
	char tmp_dir[4096], new_dir[4096];
	uint64_t used;
	int rc;

	if (!ga_spool_name_ok(name)) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: refusing entry name "
		       "'%.64s': not a plain file name",
		       name ? name : "");
		return -EINVAL;
	}
	if (entry_max && len > entry_max) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: %s is %zu bytes, over "
		       "the entry cap ([spool] entry_max = %" PRIu64 "); not "
		       "spooled, the job is not affected",
		       name, len, entry_max);
		return -EFBIG;
	}
	used = ga_spool_usage(dir);
	if (total_max && used + len > total_max) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: %s full (%" PRIu64
		       " bytes used, [spool] total_max = %" PRIu64 "); %s not "
		       "spooled, the job is not affected",
		       dir, used, total_max, name);
		return -ENOSPC;
	}
	ga_path_printf(tmp_dir, sizeof(tmp_dir), "%s/tmp", dir);
	ga_path_printf(new_dir, sizeof(new_dir), "%s/new", dir);
	rc = durable_write(tmp_dir, new_dir, name, data, len);
	if (rc == -ENOENT) {
		/* First write into a fresh spool. */
		rc = ga_spool_prepare(dir);
		if (!rc)
			rc = durable_write(tmp_dir, new_dir, name, data, len);
	}
	if (rc)
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: cannot write %s/%s: %s%s", new_dir,
		       name, strerror(-rc),
		       rc == -ENOSPC || rc == -EDQUOT
		               ? " (the job is not affected)"
		               : "");
	return rc;
}

int ga_spool_write_file(const char *dest_dir, const char *name,
                        const void *data, size_t len)
{
	if (!ga_spool_name_ok(name))
		return -EINVAL;
	return durable_write(dest_dir, dest_dir, name, data, len);
}

static void put_sanitized(char **p, char *end, const char *s, bool keep_us)
{
	for (; s && *s && *p < end; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' ||
		      (keep_us && c == '_')))
			c = '-';
		*(*p)++ = c;
	}
}

int ga_spool_report_name(const struct ga_report *r, char *out, size_t size)
{
	char *p = out, *end;

	if (!r->job_id || !*r->job_id || size < 8)
		return -EINVAL;
	end = out + size - 1;
	/* '_' is reserved as the array separator: it never comes from an
	 * id, so the job key can be read back from the name alone. */
	if (r->array_job_id && *r->array_job_id) {
		put_sanitized(&p, end, r->array_job_id, false);
		if (p < end)
			*p++ = '_';
		put_sanitized(&p, end,
		              r->array_task_id ? r->array_task_id : r->job_id,
		              false);
	} else {
		put_sanitized(&p, end, r->job_id, false);
	}
	if (p < end)
		*p++ = '.';
	put_sanitized(&p, end, r->step_id && *r->step_id ? r->step_id : "0",
	              false);
	if (p < end)
		*p++ = '.';
	put_sanitized(&p, end, r->node && *r->node ? r->node : "local", false);
	*p = '\0';
	return 0;
}

int ga_spool_put_report(const struct ga_config *cfg, const struct ga_report *r)
{
	char name[GA_SPOOL_NAME_MAX + 1];
	struct ga_buf b;
	int rc;

	/* Room for ".json" within the name limit. */
	rc = ga_spool_report_name(r, name, sizeof(name) - 5);
	if (rc) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: report without a job id");
		return rc;
	}
	strcat(name, ".json");
	ga_buf_init(&b);
	ga_report_write_json(r, &b);
	ga_buf_putc(&b, '\n');
	if (b.failed) {
		ga_buf_finish(&b);
		return -ENOMEM;
	}
	rc = ga_spool_write(cfg->spool_dir, name, b.data, b.len,
	                    cfg->spool_entry_max, cfg->spool_total_max);
	ga_buf_finish(&b);
	return rc;
}

int ga_spool_job_key(const char *name, char *out, size_t size)
{
	size_t n = strcspn(name, "_.");

	if (n == 0 || n >= size)
		return -EINVAL;
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct ga_spool_group *)a)->key,
	              ((const struct ga_spool_group *)b)->key);
}

void ga_spool_scan_finish(struct ga_spool_scan *scan)
{
	for (size_t i = 0; i < scan->n_groups; i++) {
		struct ga_spool_group *g = &scan->groups[i];

		for (size_t j = 0; j < g->n_names; j++)
			free(g->names[j]);
		free(g->names);
		free(g->key);
	}
	free(scan->groups);
	memset(scan, 0, sizeof(*scan));
}

static struct ga_spool_group *find_group(struct ga_spool_scan *scan,
                                         const char *key)
{
	struct ga_spool_group *tmp;

	for (size_t i = 0; i < scan->n_groups; i++)
		if (!strcmp(scan->groups[i].key, key))
			return &scan->groups[i];
	tmp = realloc(scan->groups, (scan->n_groups + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	scan->groups = tmp;
	tmp = &scan->groups[scan->n_groups];
	memset(tmp, 0, sizeof(*tmp));
	tmp->key = strdup(key);
	if (!tmp->key)
		return NULL;
	scan->n_groups++;
	return tmp;
}

int ga_spool_scan_new(const char *dir, struct ga_spool_scan *scan)
{
	char path[4096];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	memset(scan, 0, sizeof(*scan));
	ga_path_printf(path, sizeof(path), "%s/new", dir);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char key[GA_SPOOL_NAME_MAX + 1], **tmp;
		struct ga_spool_group *g;
		size_t len = strlen(de->d_name);
		struct stat st;
		const char *step;

		if (!ga_spool_name_ok(de->d_name) || len < 6 ||
		    strcmp(de->d_name + len - 5, ".json") ||
		    ga_spool_job_key(de->d_name, key, sizeof(key)))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		            0 ||
		    !S_ISREG(st.st_mode))
			continue;
		g = find_group(scan, key);
		if (!g) {
			rc = -ENOMEM;
			break;
		}
		tmp = realloc(g->names, (g->n_names + 1) * sizeof(*tmp));
		if (!tmp) {
			rc = -ENOMEM;
			break;
		}
		g->names = tmp;
		g->names[g->n_names] = strdup(de->d_name);
		if (!g->names[g->n_names]) {
			rc = -ENOMEM;
			break;
		}
		g->n_names++;
		if (st.st_mtime > g->newest)
			g->newest = st.st_mtime;
		if (de->d_name[strlen(key)] == '_')
			g->is_array = true;
		step = strchr(de->d_name, '.');
		if (step && !strncmp(step, ".batch.", 7))
			g->has_batch = true;
	}
	closedir(d);
	if (rc) {
		ga_spool_scan_finish(scan);
		return rc;
	}
	for (size_t i = 0; i < scan->n_groups; i++)
		qsort(scan->groups[i].names, scan->groups[i].n_names,
		      sizeof(char *), cmp_str);
	if (scan->n_groups)
		qsort(scan->groups, scan->n_groups, sizeof(*scan->groups),
		      cmp_group);
	return 0;
}

bool ga_spool_group_due(const struct ga_spool_group *g, int64_t now,
                        unsigned quiet)
{
	/* slurmstepd runs the batch step last: its report means every step
	 * of this node has reported.  Array tasks are separate jobs each
	 * with their own batch step, so an array waits for quiet instead. */
	if (g->has_batch && !g->is_array)
		return true;
	return now - g->newest >= (int64_t)quiet;
}

void ga_spool_claim_name(const struct ga_spool_group *g, char *out, size_t size)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	/* The names alone repeat when a cluster reuses job ids (a wiped
	 * slurmctld state restarts them): the newest mtime tells that job
	 * from its namesake already in sent.log.  The claim name is fixed
	 * once the reports move into out/CLAIM, so retries keep it. */
	for (size_t i = 0; i <= g->n_names; i++) {
		char mtime[24];
		const char *c = g->names[i < g->n_names ? i : 0];

		if (i == g->n_names) {
			snprintf(mtime, sizeof(mtime), "%" PRId64, g->newest);
			c = mtime;
		}
		for (; *c; c++) {
			h ^= (unsigned char)*c;
			h *= UINT64_C(0x100000001b3);
		}
		h ^= '\n';
		h *= UINT64_C(0x100000001b3);
	}
	snprintf(out, size, "%s.%016" PRIx64, g->key, h);
}

int ga_spool_claim(const char *dir, const struct ga_spool_group *g,
                   const char *claim)
{
	char cdir[4096], from[4096], to[4096];
	int rc = 0;

	ga_path_printf(cdir, sizeof(cdir), "%s/out/%s", dir, claim);
	if (mkdir(cdir, 0750) < 0 && errno != EEXIST)
		return -errno;
	ga_path_printf(to, sizeof(to), "%s/att", cdir);
	if (mkdir(to, 0750) < 0 && errno != EEXIST)
		return -errno;
	for (size_t i = 0; i < g->n_names; i++) {
		size_t base = strlen(g->names[i]) - 5; /* without ".json" */

		/* Attachments first: once the report has left new/, a crash
		 * must not leave its files behind in att/. */
		ga_path_printf(from, sizeof(from), "%s/att/%.*s", dir,
		               (int)base, g->names[i]);
		ga_path_printf(to, sizeof(to), "%s/att/%.*s", cdir, (int)base,
		               g->names[i]);
		if (rename(from, to) < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
		ga_path_printf(from, sizeof(from), "%s/new/%s", dir,
		               g->names[i]);
		ga_path_printf(to, sizeof(to), "%s/%s", cdir, g->names[i]);
		if (rename(from, to) < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
	}
	if (!rc) {
		ga_path_printf(to, sizeof(to), "%s/att", cdir);
		fsync_dir(to);
		fsync_dir(cdir);
		ga_path_printf(from, sizeof(from), "%s/new", dir);
		fsync_dir(from);
	}
	if (rc)
		ga_log(GA_LOG_ERROR, "gpualert: send: cannot claim %s: %s",
		       claim, strerror(-rc));
	return rc;
}

int ga_spool_state_read(const char *claim_dir, struct ga_spool_state *st)
{
	char path[4096], line[512];
	FILE *f;

	memset(st, 0, sizeof(*st));
	ga_path_printf(path, sizeof(path), "%s/state", claim_dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(line, "attempts"))
			st->attempts = (unsigned)strtoul(eq, NULL, 10);
		else if (!strcmp(line, "first_seen"))
			st->first_seen = strtoll(eq, NULL, 10);
		else if (!strcmp(line, "next_try"))
			st->next_try = strtoll(eq, NULL, 10);
		else if (!strcmp(line, "last_error"))
			snprintf(st->last_error, sizeof(st->last_error), "%s",
			         eq);
	}
	fclose(f);
	return 0;
}

int ga_spool_state_write(const char *claim_dir, const struct ga_spool_state *st)
{
	char text[512];
	char err[sizeof(st->last_error)];
	int n;

	/* One line per key: a newline in an error would split it. */
	snprintf(err, sizeof(err), "%s", st->last_error);
	for (char *c = err; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	n = snprintf(text, sizeof(text),
	             "attempts=%u\nfirst_seen=%" PRId64 "\nnext_try=%" PRId64
	             "\nlast_error=%s\n",
	             st->attempts, st->first_seen, st->next_try, err);
	return ga_spool_write_file(claim_dir, "state", text, (size_t)n);
}

int ga_spool_list(const char *dir, const char *sub, char ***names, size_t *n)
{
	char path[4096];
	struct dirent *de;
	char **list = NULL, **tmp;
	size_t count = 0;
	DIR *d;

	*names = NULL;
	*n = 0;
	ga_path_printf(path, sizeof(path), "%s/%s", dir, sub);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!ga_spool_name_ok(de->d_name))
			continue;
		tmp = realloc(list, (count + 1) * sizeof(*list));
		if (!tmp)
			goto nomem;
		list = tmp;
		list[count] = strdup(de->d_name);
		if (!list[count])
			goto nomem;
		count++;
	}
	closedir(d);
	if (count)
		qsort(list, count, sizeof(*list), cmp_str);
	*names = list;
	*n = count;
	return 0;
nomem:
	closedir(d);
	for (size_t i = 0; i < count; i++)
		free(list[i]);
	free(list);
	return -ENOMEM;
}

int ga_spool_bury(const char *dir, const char *claim, const char *reason)
{
	char from[4096], to[4096], text[1024];
	int n;

	ga_path_printf(from, sizeof(from), "%s/out/%s", dir, claim);
	ga_path_printf(to, sizeof(to), "%s/dead/%s", dir, claim);
	n = snprintf(text, sizeof(text), "%s\n", reason);
	if (n < 0 || (size_t)n >= sizeof(text))
		n = (int)sizeof(text) - 1;
	for (int i = 0; i < n - 1; i++)
		if (text[i] == '\n' || text[i] == '\r')
			text[i] = ' ';
	/* The reason first: a crash leaves a claim with a reason in out/,
	 * which is retried, rather than an unexplained dead letter. */
	if (ga_spool_write_file(from, "reason", text, (size_t)n) < 0 ||
	    rename(from, to) < 0) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: send: cannot move %s to the "
		       "dead letters: %s",
		       claim, strerror(errno));
		return -errno;
	}
	ga_path_printf(to, sizeof(to), "%s/dead", dir);
	fsync_dir(to);
	return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag,
                 struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int ga_spool_mark_sent(const char *dir, const char *claim, const char *user,
                       const char *message_id, int64_t now)
{
	char path[4096], line[1024];
	int fd, n, rc = 0;

	ga_path_printf(path, sizeof(path), "%s/sent.log", dir);
	n = snprintf(line, sizeof(line), "%" PRId64 " %s %s %s\n", now,
	             user && *user ? user : "-", claim, message_id);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EINVAL;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	rc = ga_write_all(fd, line, (size_t)n);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: send: cannot record %s in %s: "
		       "%s",
		       claim, path, strerror(-rc));
		return rc;
	}
	ga_path_printf(path, sizeof(path), "%s/out/%s", dir, claim);
	if (nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0)
		ga_log(GA_LOG_WARN, "gpualert: send: cannot remove %s: %s",
		       path, strerror(errno));
	return 0;
}

int ga_spool_drop(const char *dir, const char *claim)
{
	char path[4096];
	int rc = ga_path_printf(path, sizeof(path), "%s/out/%s", dir, claim);

	if (rc)
		return rc;
	return nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

bool ga_spool_was_sent(const char *dir, const char *claim)
{
	char path[4096], line[1024];
	size_t clen = strlen(claim);
	bool found = false;
	FILE *f;

	ga_path_printf(path, sizeof(path), "%s/sent.log", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		/* "TIME USER CLAIM MESSAGE-ID" */
		char *p = strchr(line, ' ');

		p = p ? strchr(p + 1, ' ') : NULL;
		if (p && !strncmp(p + 1, claim, clen) && p[1 + clen] == ' ')
			found = true;
	}
	fclose(f);
	return found;
}

unsigned ga_spool_sweep_tmp(const char *dir, int64_t now, unsigned max_age)
{
	char path[4096];
	struct dirent *de;
	unsigned removed = 0;
	DIR *d;

	ga_path_printf(path, sizeof(path), "%s/tmp", dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		            0 ||
		    now - st.st_mtime < (int64_t)max_age)
			continue;
		if (S_ISDIR(st.st_mode)) {
			char sub[4096];

			ga_path_printf(sub, sizeof(sub), "%s/%s", path,
			               de->d_name);
			if (nftw(sub, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0)
				removed++;
		} else if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
			removed++;
		}
	}
	closedir(d);
	return removed;
}
