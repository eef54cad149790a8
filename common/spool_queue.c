/* SPDX-License-Identifier: MIT */
/* The sender's side of the spool: grouping, claims, delivery state, the
 * dead letters, sent.log and the sweeps (spool_queue.h). */
#include "spool_queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "buf.h"
#include "fdio.h"
#include "log.h"
#include "spool_private.h"
#include "util.h"

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
	rc = ga_path_printf(path, sizeof(path), "%s/new", dir);
	if (rc)
		return rc;
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
		if (de->d_name[strcspn(de->d_name, "_.")] == '_')
			g->is_array = true;
		g->has_uid = ga_spool_name_uid(de->d_name, &g->uid) == 0;
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
	uint64_t h = GA_FNV1A_INIT;

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
		h = ga_fnv1a(ga_fnv1a_str(h, c), "\n", 1);
	}
	snprintf(out, size, "%s.%016" PRIx64, g->key, h);
}

int ga_spool_claim(const char *dir, const struct ga_spool_group *g,
                   const char *claim)
{
	char cdir[4096], from[4096], to[4096], att[4096];
	int rc;

	rc = ga_path_printf(cdir, sizeof(cdir), "%s/out/%s", dir, claim);
	if (!rc)
		rc = ga_path_printf(att, sizeof(att), "%s/att", cdir);
	if (rc)
		goto out;
	if ((mkdir(cdir, 0750) < 0 && errno != EEXIST) ||
	    (mkdir(att, 0750) < 0 && errno != EEXIST)) {
		rc = -errno;
		goto out;
	}
	{
		/* A sender run as root leaves claims the service user can
		 * still take over. */
		uid_t owner;
		gid_t group;

		if (ga_spool_owner_of(dir, &owner, &group) &&
		    (lchown(cdir, owner, group) < 0 ||
		     lchown(att, owner, group) < 0)) {
			rc = -errno;
			goto out;
		}
	}
	for (size_t i = 0; i < g->n_names; i++) {
		size_t base = strlen(g->names[i]) - 5; /* without ".json" */

		/* Attachments first: once the report has left new/, a crash
		 * must not leave its files behind in att/. */
		rc = ga_path_printf(from, sizeof(from), "%s/att/%.*s", dir,
		                    (int)base, g->names[i]);
		if (!rc)
			rc = ga_path_printf(to, sizeof(to), "%s/%.*s", att,
			                    (int)base, g->names[i]);
		if (rc)
			break;
		if (rename(from, to) < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
		rc = ga_path_printf(from, sizeof(from), "%s/new/%s", dir,
		                    g->names[i]);
		if (!rc)
			rc = ga_path_printf(to, sizeof(to), "%s/%s", cdir,
			                    g->names[i]);
		if (rc)
			break;
		if (rename(from, to) < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
	}
	if (!rc) {
		ga_spool_fsync_dir(att);
		ga_spool_fsync_dir(cdir);
		if (!ga_path_printf(from, sizeof(from), "%s/new", dir))
			ga_spool_fsync_dir(from);
	}
out:
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
	if (ga_path_printf(path, sizeof(path), "%s/state", claim_dir))
		return -ENAMETOOLONG;
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
	if (ga_path_printf(path, sizeof(path), "%s/%s", dir, sub))
		return -ENAMETOOLONG;
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

	if (ga_path_printf(from, sizeof(from), "%s/out/%s", dir, claim) ||
	    ga_path_printf(to, sizeof(to), "%s/dead/%s", dir, claim))
		return -ENAMETOOLONG;
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
	if (!ga_path_printf(to, sizeof(to), "%s/dead", dir))
		ga_spool_fsync_dir(to);
	return 0;
}

int ga_spool_separate(const char *dir, const char *claim, const char *name,
                      const char *reason)
{
	char dead[4096], from[4096], to[4096];
	size_t base = strlen(name);
	int rc;

	if (!ga_spool_name_ok(name) || base < 6 ||
	    strcmp(name + base - 5, ".json"))
		return -EINVAL;
	base -= 5;
	rc = ga_path_printf(dead, sizeof(dead), "%s/dead/%.*s", dir, (int)base,
	                    name);
	if (rc)
		return rc;
	if (mkdir(dead, 0750) < 0 && errno != EEXIST)
		return -errno;
	rc = ga_path_printf(from, sizeof(from), "%s/out/%s/att/%.*s", dir,
	                    claim, (int)base, name);
	if (!rc)
		rc = ga_path_printf(to, sizeof(to), "%s/att", dead);
	if (rc)
		return rc;
	if (mkdir(to, 0750) < 0 && errno != EEXIST)
		return -errno;
	rc = ga_path_printf(to, sizeof(to), "%s/att/%.*s", dead, (int)base,
	                    name);
	if (rc)
		return rc;
	if (rename(from, to) < 0 && errno != ENOENT)
		return -errno;
	rc = ga_path_printf(from, sizeof(from), "%s/out/%s/%s", dir, claim,
	                    name);
	if (!rc)
		rc = ga_path_printf(to, sizeof(to), "%s/%s", dead, name);
	if (rc)
		return rc;
	if (rename(from, to) < 0)
		return -errno;
	{
		char text[1024];
		int n = snprintf(text, sizeof(text), "%s\n", reason);

		if (n < 0 || (size_t)n >= sizeof(text))
			n = (int)sizeof(text) - 1;
		for (int i = 0; i < n - 1; i++)
			if (text[i] == '\n' || text[i] == '\r')
				text[i] = ' ';
		text[n - 1] = '\n';
		rc = ga_spool_write_file(dead, "reason", text, (size_t)n);
	}
	ga_log(GA_LOG_ERROR,
	       "gpualert: send: %s: report %s taken out of the message, "
	       "moved to %s: %s",
	       claim, name, dead, reason);
	return rc;
}

/* A sent.log field: printable ASCII, else '?'.  Values come from reports,
 * which the job's user influences: no newline may forge a line, and no
 * space a field (the last field, the message id or a "(...)" note, may
 * hold spaces: nothing follows it). */
static void put_field(struct ga_buf *b, const char *s, bool last)
{
	if (!s || !*s) {
		ga_buf_putc(b, '-');
		return;
	}
	for (size_t i = 0; s[i] && i < 255; i++)
		ga_buf_putc(b,
		            (s[i] > ' ' || (last && s[i] == ' ')) && s[i] < 0x7f
		                    ? s[i]
		                    : '?');
}

int ga_spool_mark_sent(const char *dir, const char *claim, const char *user,
                       const char *message_id, int64_t now)
{
	char path[4096];
	struct ga_buf line;
	int fd, rc;

	rc = ga_path_printf(path, sizeof(path), "%s/sent.log", dir);
	if (rc)
		return rc;
	ga_buf_init(&line);
	ga_buf_printf(&line, "%" PRId64 " ", now);
	put_field(&line, user, false);
	ga_buf_putc(&line, ' ');
	put_field(&line, claim, false);
	ga_buf_putc(&line, ' ');
	put_field(&line, message_id, true);
	ga_buf_putc(&line, '\n');
	if (line.failed) {
		ga_buf_finish(&line);
		return -ENOMEM;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0) {
		rc = -errno;
	} else {
		rc = ga_write_all(fd, line.data, line.len);
		if (!rc && fsync(fd) < 0)
			rc = -errno;
		close(fd);
	}
	ga_buf_finish(&line);
	if (rc) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: send: cannot record %s in %s: "
		       "%s",
		       claim, path, strerror(-rc));
		return rc;
	}
	if (ga_path_printf(path, sizeof(path), "%s/out/%s", dir, claim))
		return 0;
	if (ga_spool_remove_tree(path) < 0)
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
	return ga_spool_remove_tree(path);
}

bool ga_spool_was_sent(const char *dir, const char *claim)
{
	char path[4096], line[1024];
	size_t clen = strlen(claim);
	bool found = false;
	FILE *f;

	if (ga_path_printf(path, sizeof(path), "%s/sent.log", dir))
		return false;
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

	if (ga_path_printf(path, sizeof(path), "%s/tmp", dir))
		return 0;
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

			if (!ga_path_printf(sub, sizeof(sub), "%s/%s", path,
			                    de->d_name) &&
			    ga_spool_remove_tree(sub) == 0)
				removed++;
		} else if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
			removed++;
		}
	}
	closedir(d);
	return removed;
}

unsigned ga_spool_sweep_att(const char *dir, int64_t now, unsigned max_age)
{
	char path[4096], sub[4096], report[4096];
	struct dirent *de;
	unsigned removed = 0;
	DIR *d;

	if (ga_path_printf(path, sizeof(path), "%s/att", dir))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (!ga_spool_name_ok(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		            0 ||
		    now - st.st_mtime < (int64_t)max_age)
			continue;
		if (ga_path_printf(report, sizeof(report), "%s/new/%s.json",
		                   dir, de->d_name) ||
		    ga_path_printf(sub, sizeof(sub), "%s/%s", path,
		                   de->d_name) ||
		    access(report, F_OK) == 0)
			continue;
		if (S_ISDIR(st.st_mode)
		            ? ga_spool_remove_tree(sub) == 0
		            : unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
