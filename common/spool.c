/* Minimal spool writer (atomic, bounded) so the plugin and `gpualert run`
 * can hand reports over; the sender side lives in cli/cmd_send.c. */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

static bool name_ok(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > 200)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			return false;
	return true;
}

/* Bytes in regular files of DIRFD (a bound, not an exact account). */
static uint64_t spool_usage(int dirfd)
{
	uint64_t total = 0;
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	closedir(d);
	return total;
}

int ga_spool_write(const char *dir, const char *name, const void *data,
		   size_t len, uint64_t entry_max, uint64_t total_max)
{
	char tmp[256];
	int dirfd = -1, fd = -1, rc = 0;
	const char *p = data;

	if (!name_ok(name)) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: bad entry name '%s'", name);
		return -EINVAL;
	}
	if (entry_max && len > entry_max) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: entry %s is %zu bytes, over "
		       "the %llu-byte limit", name, len, (unsigned long long)entry_max);
		return -EFBIG;
	}
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rc = -errno;
		ga_log(GA_LOG_ERROR, "gpualert: spool: %s: %s", dir, strerror(errno));
		return rc;
	}
	if (total_max && spool_usage(dirfd) + len > total_max) {
		ga_log(GA_LOG_ERROR, "gpualert: spool: %s is full (limit %llu bytes)",
		       dir, (unsigned long long)total_max);
		rc = -ENOSPC;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".tmp.%d.%s", (int)getpid(), name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			goto fail;
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		rc = -errno;
		goto fail;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		rc = -errno;
		goto fail;
	}
	{
		int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	goto out;
fail:
	ga_log(GA_LOG_ERROR, "gpualert: spool: cannot write %s/%s: %s", dir, name,
	       strerror(-rc));
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
out:
	close(dirfd);
	return rc;
}

static void put_safe(struct ga_buf *b, const char *s)
{
	if (!s || !*s)
		s = "x";
	for (; *s && b->len < 180; s++)
		ga_buf_putc(b, ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				(*s >= '0' && *s <= '9') || *s == '-' || *s == '_')
				       ? *s : '_');
}

int ga_spool_put_report(const struct ga_config *cfg, const struct ga_report *r)
{
	struct ga_buf json, name;
	int rc;

	ga_buf_init(&json);
	ga_buf_init(&name);
	ga_report_write_json(r, &json);
	ga_buf_putc(&json, '\n');
	put_safe(&name, r->job_id);
	ga_buf_putc(&name, '.');
	put_safe(&name, r->step_id);
	ga_buf_putc(&name, '.');
	put_safe(&name, r->node);
	ga_buf_puts(&name, ".json");
	if (json.failed || name.failed)
		rc = -ENOMEM;
	else
		rc = ga_spool_write(cfg->spool_dir, name.data, json.data, json.len,
				    cfg->spool_entry_max, cfg->spool_total_max);
	ga_buf_finish(&json);
	ga_buf_finish(&name);
	return rc;
}
