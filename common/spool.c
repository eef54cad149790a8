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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fdio.h"
#include "log.h"
#include "spool_private.h"

static const char *const subdirs[] = {"tmp", "new",  "att",
                                      "out", "dead", "usage"};

/* Who gets what a root writer creates: the spool directory's owner, when
 * that is not root (issue: the sender runs as a service user that must
 * read, move and delete every entry). */
bool ga_spool_owner_of(const char *dir, uid_t *owner, gid_t *group)
{
	struct stat st;

	if (geteuid() != 0 || stat(dir, &st) < 0 || st.st_uid == 0)
		return false;
	*owner = st.st_uid;
	*group = st.st_gid;
	return true;
}

static int give_fd(int fd, bool set, uid_t owner, gid_t group)
{
	return set && fchown(fd, owner, group) < 0 ? -errno : 0;
}

static int give_path(const char *path, bool set, uid_t owner, gid_t group)
{
	return set && lchown(path, owner, group) < 0 ? -errno : 0;
}

int ga_spool_prepare(const char *dir)
{
	char path[4096];
	uid_t owner = 0;
	gid_t group = 0;
	bool set;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: cannot create %s: %s",
		       dir, strerror(errno));
		return -errno;
	}
	set = ga_spool_owner_of(dir, &owner, &group);
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		int rc = ga_path_printf(path, sizeof(path), "%s/%s", dir,
		                        subdirs[i]);

		if (rc) {
			ga_log(GA_LOG_ERROR,
			       "gpualert: spool: path too long: %s", dir);
			return rc;
		}
		if (mkdir(path, 0750) < 0) {
			int err = errno;
			struct stat st;

			if (err != EEXIST) {
				ga_log(GA_LOG_ERROR,
				       "gpualert: spool: cannot create %s: %s",
				       path, strerror(err));
				return -err;
			}
			/* Made by an older root writer: hand it over. */
			if (set && lstat(path, &st) == 0 &&
			    S_ISDIR(st.st_mode) &&
			    (st.st_uid != owner || st.st_gid != group) &&
			    lchown(path, owner, group) < 0)
				ga_log(GA_LOG_WARN,
				       "gpualert: spool: cannot give %s to uid "
				       "%u: %s",
				       path, (unsigned)owner, strerror(errno));
			continue;
		}
		rc = give_path(path, set, owner, group);
		if (rc) {
			ga_log(GA_LOG_ERROR,
			       "gpualert: spool: cannot give %s to uid %u: %s",
			       path, (unsigned)owner, strerror(-rc));
			return rc;
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

int ga_spool_fsync_dir(const char *dir)
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

/* Move FROM to TO unless TO exists.  renameat2(2) RENAME_NOREPLACE is
 * atomic; file systems without it (EINVAL; NFS before 4.x servers, some
 * FUSE) get link(2), which also fails with EEXIST, then unlink(2) of the
 * temp name. */
static int move_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -errno;
	if (link(from, to) < 0)
		return -errno;
	unlink(from);
	return 0;
}

/* The durable write: a temp file in TMP_DIR, fsync, move to
 * DEST_DIR/NAME, fsync DEST_DIR (rename(2) is atomic but only the
 * directory's fsync makes it survive a power loss: fsync(2) NOTES).
 * NOREPLACE: fail with -EEXIST rather than replace DEST_DIR/NAME. */
static int durable_write(const char *tmp_dir, const char *dest_dir,
                         const char *name, const void *data, size_t len,
                         bool noreplace, const char *owner_dir)
{
	char tmp[4096], dest[4096];
	uid_t owner = 0;
	gid_t group = 0;
	bool set;
	int fd, rc;

	rc = ga_path_printf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", tmp_dir, name);
	if (!rc)
		rc = ga_path_printf(dest, sizeof(dest), "%s/%s", dest_dir,
		                    name);
	if (rc)
		return rc;
	set = ga_spool_owner_of(owner_dir, &owner, &group);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = ga_write_all(fd, data, len);
	if (!rc && fchmod(fd, 0640) < 0)
		rc = -errno;
	if (!rc)
		rc = give_fd(fd, set, owner, group);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && noreplace)
		rc = move_noreplace(tmp, dest);
	else if (!rc && rename(tmp, dest) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	return ga_spool_fsync_dir(dest_dir);
}

int ga_spool_write(const char *dir, const char *name, const void *data,
                   size_t len)
{
	char tmp_dir[4096], new_dir[4096];
	int rc;

	if (!ga_spool_name_ok(name)) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: refusing entry name "
		       "'%.64s': not a plain file name",
		       name ? name : "");
		return -EINVAL;
	}
	rc = ga_path_printf(tmp_dir, sizeof(tmp_dir), "%s/tmp", dir);
	if (!rc)
		rc = ga_path_printf(new_dir, sizeof(new_dir), "%s/new", dir);
	if (!rc) {
		rc = durable_write(tmp_dir, new_dir, name, data, len, true,
		                   dir);
		if (rc == -ENOENT) {
			/* First write into a fresh spool. */
			rc = ga_spool_prepare(dir);
			if (!rc)
				rc = durable_write(tmp_dir, new_dir, name, data,
				                   len, true, dir);
		}
	}
	if (rc && rc != -EEXIST)
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: cannot write %s/new/%s: %s%s", dir,
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
	return durable_write(dest_dir, dest_dir, name, data, len, false,
	                     dest_dir);
}

/* Append S reduced to [A-Za-z0-9-] (and '_' when KEEP_US).  Returns false
 * when it did not fit before END. */
static bool put_sanitized(char **p, char *end, const char *s, bool keep_us)
{
	for (; s && *s; s++) {
		char c = *s;

		if (*p >= end)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' ||
		      (keep_us && c == '_')))
			c = '-';
		*(*p)++ = c;
	}
	return true;
}

static bool put_char(char **p, char *end, char c)
{
	if (*p >= end)
		return false;
	*(*p)++ = c;
	return true;
}

int ga_spool_report_name(const struct ga_report *r, char *out, size_t size)
{
	char *p = out, *end, uid[16];
	bool fit = true;

	if (!r->job_id || !*r->job_id || size < 8)
		return -EINVAL;
	end = out + size - 1;
	/* '_' is reserved as the array separator: it never comes from an
	 * id, so the job key can be read back from the name alone. */
	if (r->array_job_id && *r->array_job_id) {
		fit &= put_sanitized(&p, end, r->array_job_id, false);
		fit &= put_char(&p, end, '_');
		fit &= put_sanitized(
		        &p, end,
		        r->array_task_id ? r->array_task_id : r->job_id, false);
	} else {
		fit &= put_sanitized(&p, end, r->job_id, false);
	}
	fit &= put_char(&p, end, '.');
	fit &= put_sanitized(
	        &p, end, r->step_id && *r->step_id ? r->step_id : "0", false);
	fit &= put_char(&p, end, '.');
	fit &= put_sanitized(&p, end, r->node && *r->node ? r->node : "local",
	                     false);
	/* The uid is part of the job key: reports of different users are
	 * never merged, whatever their job ids say. */
	snprintf(uid, sizeof(uid), ".u%" PRIu32, r->uid);
	for (const char *c = uid; *c; c++)
		fit &= put_char(&p, end, *c);
	*p = '\0';
	return fit ? 0 : -ENAMETOOLONG;
}

/* ---- accounting ---- */

/* usage/total and usage/u<uid>: one decimal number each.  Every update
 * holds flock(2) on usage/total, so a reservation is atomic against the
 * other writers and the sender's reconciliation; its cost does not depend
 * on how much waits in the spool. */
struct acct {
	int total_fd;
	int user_fd;
	bool set;
	uid_t owner;
	gid_t group;
};

static int open_counter(const char *dir, const char *file, struct acct *a)
{
	char path[4096];
	int fd, rc;

	rc = ga_path_printf(path, sizeof(path), "%s/usage/%s", dir, file);
	if (rc)
		return rc;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		struct stat st;

		/* Made by an older root writer: hand it over. */
		if (a->set && fstat(fd, &st) == 0 &&
		    (st.st_uid != a->owner || st.st_gid != a->group) &&
		    fchown(fd, a->owner, a->group) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
		return fd;
	}
	if (errno != ENOENT)
		return -errno;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0 && errno == ENOENT) {
		rc = ga_spool_prepare(dir);
		if (rc)
			return rc;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		          0640);
	}
	if (fd < 0)
		return -errno;
	rc = give_fd(fd, a->set, a->owner, a->group);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

static uint64_t read_counter(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static int write_counter(int fd, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%20" PRIu64 "\n", v);

	/* Fixed width: an overwrite never leaves a longer old tail. */
	if (pwrite(fd, buf, (size_t)n, 0) != n)
		return -EIO;
	return 0;
}

/* Open and lock the counters of DIR (and of UID unless NO_USER). */
static int acct_begin(const char *dir, uint32_t uid, bool no_user,
                      struct acct *a)
{
	char file[24];
	int rc;

	memset(a, 0, sizeof(*a));
	a->total_fd = a->user_fd = -1;
	a->set = ga_spool_owner_of(dir, &a->owner, &a->group);
	rc = open_counter(dir, "total", a);
	if (rc < 0)
		return rc;
	a->total_fd = rc;
	while (flock(a->total_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = -errno;
			close(a->total_fd);
			a->total_fd = -1;
			return rc;
		}
	if (no_user)
		return 0;
	snprintf(file, sizeof(file), "u%" PRIu32, uid);
	rc = open_counter(dir, file, a);
	if (rc < 0) {
		close(a->total_fd); /* unlocks */
		a->total_fd = -1;
		return rc;
	}
	a->user_fd = rc;
	return 0;
}

static void acct_end(struct acct *a)
{
	if (a->user_fd >= 0)
		close(a->user_fd);
	if (a->total_fd >= 0)
		close(a->total_fd);
	a->user_fd = a->total_fd = -1;
}

static uint64_t add_clamped(uint64_t v, int64_t delta)
{
	if (delta < 0 && (uint64_t)-delta > v)
		return 0;
	return v + (uint64_t)delta;
}

int ga_spool_account(const char *dir, uint32_t uid, int64_t delta)
{
	struct acct a;
	int rc = acct_begin(dir, uid, false, &a);

	if (rc)
		return rc;
	rc = write_counter(a.total_fd,
	                   add_clamped(read_counter(a.total_fd), delta));
	if (!rc)
		rc = write_counter(a.user_fd,
		                   add_clamped(read_counter(a.user_fd), delta));
	acct_end(&a);
	return rc;
}

int ga_spool_usage_of(const char *dir, uint32_t uid, uint64_t *total,
                      uint64_t *user)
{
	struct acct a;
	int rc = acct_begin(dir, uid, false, &a);

	if (rc)
		return rc;
	*total = read_counter(a.total_fd);
	*user = read_counter(a.user_fd);
	acct_end(&a);
	return 0;
}

/* Reserve LEN bytes for UID if the total and the user's share allow it.
 * Returns 0, -ENOSPC (*TOTAL_NOW / *USER_NOW say why) or -errno. */
static int reserve(const char *dir, uint32_t uid, uint64_t len,
                   uint64_t total_max, uint64_t user_max, uint64_t *total_now,
                   uint64_t *user_now)
{
	struct acct a;
	int rc = acct_begin(dir, uid, false, &a);

	if (rc)
		return rc;
	*total_now = read_counter(a.total_fd);
	*user_now = read_counter(a.user_fd);
	if ((total_max && *total_now + len > total_max) ||
	    (user_max && *user_now + len > user_max)) {
		rc = -ENOSPC;
	} else {
		rc = write_counter(a.total_fd, *total_now + len);
		if (!rc)
			rc = write_counter(a.user_fd, *user_now + len);
	}
	acct_end(&a);
	return rc;
}

/* ---- the writer's slot ---- */

static int hold_name(struct ga_spool_slot *s, const char *base)
{
	char path[4096], cand[GA_SPOOL_NAME_MAX + 1];
	bool prepared = false;
	int rc;

	for (unsigned seq = 1; seq <= GA_SPOOL_MAX_SEQ; seq++) {
		struct stat st;

		if (seq == 1)
			rc = ga_path_printf(cand, sizeof(cand) - 5, "%s", base);
		else
			rc = ga_path_printf(cand, sizeof(cand) - 5, "%s.%u",
			                    base, seq);
		if (!rc)
			rc = ga_path_printf(path, sizeof(path), "%s/att/%s",
			                    s->dir, cand);
		if (rc)
			return rc;
		if (mkdir(path, 0750) < 0) {
			if (errno == ENOENT && !prepared) {
				prepared = true;
				rc = ga_spool_prepare(s->dir);
				if (rc)
					return rc;
				seq--;
				continue;
			}
			if (errno == EEXIST)
				continue; /* another writer holds it */
			return -errno;
		}
		rc = give_path(path, s->owner_set, s->owner, s->group);
		if (!rc)
			rc = ga_path_printf(path, sizeof(path),
			                    "%s/new/%s.json", s->dir, cand);
		if (rc) {
			/* That same path was formatted above: it fits. */
			if (!ga_path_printf(path, sizeof(path), "%s/att/%s",
			                    s->dir, cand))
				rmdir(path);
			return rc;
		}
		if (lstat(path, &st) == 0) {
			/* A report of that name waits already: keep it. */
			if (ga_path_printf(path, sizeof(path), "%s/att/%s",
			                   s->dir, cand) == 0)
				rmdir(path);
			continue;
		}
		memcpy(s->name, cand, sizeof(cand));
		s->att_held = true;
		if (seq > 1)
			ga_log(GA_LOG_WARN,
			       "gpualert: spool: %s.json exists: "
			       "writing this report as %s.json",
			       base, cand);
		return 0;
	}
	ga_log(GA_LOG_ERROR,
	       "gpualert: spool: %s.json and %d other names are taken; "
	       "not spooled, the job is not affected",
	       base, GA_SPOOL_MAX_SEQ - 1);
	return -EEXIST;
}

int ga_spool_slot_open(const struct ga_config *cfg, const struct ga_report *r,
                       uint64_t att_budget, struct ga_spool_slot *s)
{
	char base[GA_SPOOL_NAME_MAX + 1];
	uint64_t user_max = 0, total_now = 0, user_now = 0;
	struct ga_buf b;
	int rc;

	memset(s, 0, sizeof(*s));
	s->dir = cfg->spool_dir;
	s->uid = r->uid;
	/* Room for ".json" and a ".<n>" suffix within the name limit. */
	rc = ga_spool_report_name(r, base, sizeof(base) - 5 - 4);
	if (rc) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: %s",
		       rc == -EINVAL ? "report without a job id"
		                     : "report ids too long for a spool name");
		return rc == -EINVAL ? rc : -EINVAL;
	}
	ga_buf_init(&b);
	ga_report_write_json(r, &b);
	ga_buf_putc(&b, '\n');
	if (b.failed) {
		ga_buf_finish(&b);
		return -ENOMEM;
	}
	s->json_len = b.len;
	s->json = ga_buf_steal(&b);
	ga_buf_finish(&b);
	if (!s->json)
		return -ENOMEM;
	if (cfg->spool_entry_max && s->json_len > cfg->spool_entry_max) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: %s is %zu bytes, over "
		       "the entry cap ([spool] entry_max = %" PRIu64 "); not "
		       "spooled, the job is not affected",
		       base, s->json_len, cfg->spool_entry_max);
		return -EFBIG;
	}
	if (cfg->spool_total_max && cfg->spool_user_share &&
	    cfg->spool_user_share < 100)
		user_max = cfg->spool_total_max / 100 * cfg->spool_user_share;
	memcpy(s->base, base, sizeof(base));
	s->owner_set = ga_spool_owner_of(s->dir, &s->owner, &s->group);
	/* Subdirectories an older root writer made stay root's otherwise,
	 * and the sender could not move entries out of them.  A failure is
	 * logged and not fatal: the writes below say whether the spool is
	 * usable. */
	if (s->owner_set && ga_spool_prepare(s->dir) < 0)
		ga_log(GA_LOG_WARN,
		       "gpualert: spool: %s: going on; the sender may not "
		       "be able to move %s",
		       s->dir, base);
	rc = reserve(s->dir, s->uid, s->json_len + att_budget,
	             cfg->spool_total_max, user_max, &total_now, &user_now);
	if (rc == -ENOSPC && att_budget) {
		ga_log(GA_LOG_WARN,
		       "gpualert: spool: no room for the attachments of %s "
		       "(%" PRIu64 " bytes); spooling the report without them",
		       base, att_budget);
		att_budget = 0;
		rc = reserve(s->dir, s->uid, s->json_len, cfg->spool_total_max,
		             user_max, &total_now, &user_now);
	}
	if (rc == -ENOSPC) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: %s full for uid %" PRIu32 " (%" PRIu64
		       " bytes used of its share %" PRIu64 ", %" PRIu64
		       " of [spool] total_max = %" PRIu64
		       "); %s not spooled, the job is not affected",
		       s->dir, s->uid, user_now, user_max, total_now,
		       cfg->spool_total_max, base);
		return rc;
	}
	if (rc) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: cannot update the accounting in "
		       "%s/usage: %s",
		       s->dir, strerror(-rc));
		return rc;
	}
	s->reserved = s->json_len + att_budget;
	s->att_budget = att_budget;
	return hold_name(s, base);
}

static void release(struct ga_spool_slot *s, uint64_t bytes)
{
	if (bytes > s->reserved)
		bytes = s->reserved;
	if (bytes && ga_spool_account(s->dir, s->uid, -(int64_t)bytes) == 0)
		s->reserved -= bytes;
}

int ga_spool_slot_commit(struct ga_spool_slot *s)
{
	char path[4096];
	int rc = -EINVAL;

	if (!s->json || !s->att_held || s->committed)
		return -EINVAL;
	for (unsigned seq = 2; seq <= GA_SPOOL_MAX_SEQ + 1; seq++) {
		char json[GA_SPOOL_NAME_MAX + 6], next[GA_SPOOL_NAME_MAX + 1];
		char from[4096], to[4096];

		rc = ga_path_printf(json, sizeof(json), "%s.json", s->name);
		if (rc)
			break;
		rc = ga_spool_write(s->dir, json, s->json, s->json_len);
		if (rc != -EEXIST)
			break;
		/* Someone wrote new/NAME.json without holding att/NAME: move
		 * our files to a name nobody has. */
		ga_log(GA_LOG_WARN, "gpualert: spool: %s/new/%s exists", s->dir,
		       json);
		if (ga_path_printf(next, sizeof(next) - 5, "%s.%u", s->base,
		                   seq) ||
		    ga_path_printf(from, sizeof(from), "%s/att/%s", s->dir,
		                   s->name) ||
		    ga_path_printf(to, sizeof(to), "%s/att/%s", s->dir, next))
			break;
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) <
		    0)
			continue;
		memcpy(s->name, next, sizeof(next));
	}
	if (rc)
		return rc;
	s->committed = true;
	/* Give back what the attachments did not use. */
	if (s->att_budget > s->att_used)
		release(s, s->att_budget - s->att_used);
	if (!s->att_used &&
	    !ga_path_printf(path, sizeof(path), "%s/att/%s", s->dir, s->name))
		rmdir(path); /* the name lock; fails harmlessly if claimed */
	return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag,
                 struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int ga_spool_remove_tree(const char *path)
{
	return nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

void ga_spool_slot_close(struct ga_spool_slot *s)
{
	char path[4096];

	if (!s->committed && s->dir) {
		if (s->att_held &&
		    !ga_path_printf(path, sizeof(path), "%s/att/%s", s->dir,
		                    s->name))
			ga_spool_remove_tree(path);
		release(s, s->reserved);
	}
	free(s->json);
	memset(s, 0, sizeof(*s));
}

int ga_spool_put_report(const struct ga_config *cfg, const struct ga_report *r)
{
	struct ga_spool_slot s;
	int rc = ga_spool_slot_open(cfg, r, 0, &s);

	if (!rc)
		rc = ga_spool_slot_commit(&s);
	ga_spool_slot_close(&s);
	return rc;
}

/* The uid of a dot-separated name: component INDEX must be "u<digits>". */
static int uid_at(const char *name, unsigned index, uint32_t *uid)
{
	const char *c = name;
	unsigned long long v = 0;
	size_t digits = 0;

	for (unsigned i = 0; i < index; i++) {
		c = strchr(c, '.');
		if (!c)
			return -ENOENT;
		c++;
	}
	if (*c != 'u')
		return -ENOENT;
	for (c++; *c >= '0' && *c <= '9'; c++, digits++) {
		v = v * 10 + (unsigned)(*c - '0');
		if (v > UINT32_MAX)
			return -ENOENT;
	}
	if (!digits || (*c && *c != '.'))
		return -ENOENT;
	*uid = (uint32_t)v;
	return 0;
}

int ga_spool_name_uid(const char *name, uint32_t *uid)
{
	/* A report name has the uid 4th, a claim name 2nd; the job id of a
	 * claim has no '.', so the two cannot be mistaken. */
	if (uid_at(name, 3, uid) == 0)
		return 0;
	return uid_at(name, 1, uid);
}

int ga_spool_job_key(const char *name, char *out, size_t size)
{
	size_t n = strcspn(name, "_.");
	uint32_t uid;

	if (n == 0 || n >= size)
		return -EINVAL;
	if (uid_at(name, 3, &uid) == 0) {
		if (ga_path_printf(out, size, "%.*s.u%" PRIu32, (int)n, name,
		                   uid))
			return -EINVAL;
		return 0;
	}
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

/* ---- reconciliation ---- */

struct uid_bytes {
	uint32_t uid;
	uint64_t bytes;
};

struct tally {
	struct uid_bytes *v;
	size_t n;
	uint64_t total;
	bool failed;
};

static void tally_add(struct tally *t, bool has_uid, uint32_t uid,
                      uint64_t bytes)
{
	struct uid_bytes *tmp;

	t->total += bytes;
	if (!has_uid)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uid == uid) {
			t->v[i].bytes += bytes;
			return;
		}
	tmp = realloc(t->v, (t->n + 1) * sizeof(*tmp));
	if (!tmp) {
		t->failed = true;
		return;
	}
	t->v = tmp;
	t->v[t->n].uid = uid;
	t->v[t->n].bytes = bytes;
	t->n++;
}

static uint64_t tally_get(const struct tally *t, uint32_t uid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uid == uid)
			return t->v[i].bytes;
	return 0;
}

/* Bytes of the regular files under the directory FD (recursively, not
 * following links; bounded depth: entries are at most three deep). */
static uint64_t tree_bytes(int fd, unsigned depth)
{
	uint64_t sum = 0;
	struct dirent *de;
	DIR *d = fdopendir(fd);

	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			sum += (uint64_t)st.st_size;
		} else if (S_ISDIR(st.st_mode) && depth < 4) {
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                         O_CLOEXEC);

			if (sub >= 0)
				sum += tree_bytes(sub, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

static void tally_dir(const char *dir, const char *sub, struct tally *t)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (ga_path_printf(path, sizeof(path), "%s/%s", dir, sub))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		uint32_t uid = 0;
		bool has_uid;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* tmp/ names are ".NAME.XXXXXX": counted in the total only. */
		has_uid = strcmp(sub, "tmp") &&
		          ga_spool_name_uid(de->d_name, &uid) == 0;
		if (S_ISREG(st.st_mode)) {
			tally_add(t, has_uid, uid, (uint64_t)st.st_size);
		} else if (S_ISDIR(st.st_mode)) {
			int fd = openat(dirfd(d), de->d_name,
			                O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                        O_CLOEXEC);

			if (fd >= 0)
				tally_add(t, has_uid, uid, tree_bytes(fd, 1));
		}
	}
	closedir(d);
}

/* The counters as they are now: the total and every usage/u<uid>.  With
 * A (locked) given, reads under that lock; otherwise takes it. */
static int snapshot(const char *dir, struct tally *t)
{
	char path[4096];
	struct dirent *de;
	struct acct a;
	DIR *d;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = acct_begin(dir, 0, true, &a);
	if (rc)
		return rc;
	rc = ga_path_printf(path, sizeof(path), "%s/usage", dir);
	d = rc ? NULL : opendir(path);
	while (d && (de = readdir(d))) {
		uint32_t uid;
		int fd;

		if (uid_at(de->d_name, 0, &uid) < 0)
			continue;
		fd = openat(dirfd(d), de->d_name,
		            O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		tally_add(t, true, uid, read_counter(fd));
		close(fd);
	}
	if (d)
		closedir(d);
	/* tally_add summed the users into the total: the total is its own
	 * counter (entries without a uid count only there). */
	t->total = read_counter(a.total_fd);
	acct_end(&a);
	return t->failed ? -ENOMEM : 0;
}

static int set_user(const char *dir, struct acct *a, uint32_t uid,
                    uint64_t walked, uint64_t before)
{
	char file[24];
	int fd, rc;

	snprintf(file, sizeof(file), "u%" PRIu32, uid);
	fd = open_counter(dir, file, a);
	if (fd < 0)
		return fd;
	rc = write_counter(
	        fd, add_clamped(walked, (int64_t)(read_counter(fd) - before)));
	close(fd);
	return rc;
}

int ga_spool_reconcile(const char *dir)
{
	static const char *const walked[] = {"new", "att", "out", "dead",
	                                     "tmp"};
	struct tally before, walk, after;
	struct acct a;
	int rc;

	memset(&walk, 0, sizeof(walk));
	memset(&after, 0, sizeof(after));
	rc = snapshot(dir, &before);
	if (rc)
		goto out;
	for (size_t i = 0; i < sizeof(walked) / sizeof(walked[0]); i++)
		tally_dir(dir, walked[i], &walk);
	if (walk.failed) {
		rc = -ENOMEM;
		goto out;
	}
	/* Counters = the walk + what writers reserved or released while it
	 * ran (their change since the snapshot).  The lock is held only for
	 * this update, never during the walk. */
	rc = acct_begin(dir, 0, true, &a);
	if (rc)
		goto out;
	rc = write_counter(
	        a.total_fd,
	        add_clamped(walk.total, (int64_t)(read_counter(a.total_fd) -
	                                          before.total)));
	/* Every uid with a counter before, and every uid the walk found. */
	for (size_t i = 0; !rc && i < before.n; i++)
		rc = set_user(dir, &a, before.v[i].uid,
		              tally_get(&walk, before.v[i].uid),
		              before.v[i].bytes);
	for (size_t i = 0; !rc && i < walk.n; i++) {
		bool seen = false;

		for (size_t k = 0; k < before.n; k++)
			seen |= before.v[k].uid == walk.v[i].uid;
		if (!seen)
			rc = set_user(dir, &a, walk.v[i].uid, walk.v[i].bytes,
			              0);
	}
	acct_end(&a);
out:
	free(before.v);
	free(walk.v);
	free(after.v);
	return rc;
}
