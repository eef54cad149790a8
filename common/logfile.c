/* SPDX-License-Identifier: MIT */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

static bool safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '+';
}

/* Append VALUE as one safe name component. */
static int put_component(char *out, size_t size, size_t *o, const char *value)
{
	size_t len = value ? strlen(value) : 0;

	if (len == 0 || !strcmp(value, ".") || !strcmp(value, "..")) {
		value = "_";
		len = 1;
	}
	if (len >= size - *o)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len; i++)
		out[(*o)++] = safe_char((unsigned char)value[i]) ? value[i]
		                                                 : '_';
	return 0;
}

static int put_raw(char *out, size_t size, size_t *o, const char *s, size_t len)
{
	if (len >= size - *o)
		return -ENAMETOOLONG;
	memcpy(out + *o, s, len);
	*o += len;
	return 0;
}

/* Is P absolute, free of "." and ".." components and of components longer
 * than NAME_MAX? */
static int check_path(const char *p, const char **why)
{
	if (p[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	for (const char *c = p; *c;) {
		const char *end;
		size_t n;

		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.')) {
			*why = "'.' or '..' component";
			return -EINVAL;
		}
		if (n > NAME_MAX) {
			*why = "a path component is too long";
			return -ENAMETOOLONG;
		}
		c = end;
	}
	return 0;
}

int ga_logfile_expand(const char *pattern, const struct ga_log_ids *ids,
                      char *out, size_t size, const char **why)
{
	const char *dummy;
	size_t o = 0;
	char num[16];
	int rc = 0;

	if (!why)
		why = &dummy;
	*why = NULL;
	if (size == 0)
		return -ENAMETOOLONG;
	for (const char *p = pattern; *p && rc == 0; p++) {
		if (*p != '%') {
			rc = put_raw(out, size, &o, p, 1);
			continue;
		}
		switch (*++p) {
		case '%':
			rc = put_raw(out, size, &o, "%", 1);
			break;
		case 'j':
			rc = put_component(out, size, &o, ids->job_id);
			break;
		case 's':
			rc = put_component(out, size, &o, ids->step_id);
			break;
		case 't':
			snprintf(num, sizeof(num), "%" PRIu32, ids->task_id);
			rc = put_raw(out, size, &o, num, strlen(num));
			break;
		case 'u':
			rc = put_component(out, size, &o, ids->user);
			break;
		case 'x':
			rc = put_component(out, size, &o, ids->job_name);
			break;
		case 'N':
			rc = put_component(out, size, &o, ids->node);
			break;
		case 'w':
			if (!ids->work_dir ||
			    check_path(ids->work_dir, why) < 0) {
				*why = "the working directory (%w) is not a clean absolute path";
				return -EINVAL;
			}
			rc = put_raw(out, size, &o, ids->work_dir,
			             strlen(ids->work_dir));
			break;
		case '\0':
			*why = "the pattern ends with '%'";
			return -EINVAL;
		default:
			*why = "unknown %-escape (known: %j %s %t %u %x %N %w %%)";
			return -EINVAL;
		}
	}
	if (rc < 0) {
		*why = "the expanded path is too long";
		return rc;
	}
	out[o] = '\0';
	rc = check_path(out, why);
	if (rc == -EINVAL && !strcmp(*why, "not an absolute path"))
		*why = "the expanded path is not absolute";
	return rc;
}

/* Open directory component NAME under DIRFD, following a symlink only if
 * it belongs to us or to root. */
static int open_dir_component(int dirfd, const char *name)
{
	struct stat st;
	int fd = openat(dirfd, name,
	                O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR))
		return fd >= 0 ? fd : -errno;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -ELOOP;
	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Whether an existing log at the name may be appended to: a regular file
 * of ours, with no other name (a hard link planted to a file of ours
 * elsewhere), and no wider mode than the admin's (a file someone else
 * prepared, or one we were tricked into opening up, is not reused). */
static bool reusable(const struct stat *st, unsigned mode)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	       st->st_nlink == 1 && !(st->st_mode & 07777 & ~(mode_t)mode);
}

/* Create NAME afresh under DIRFD; EEXIST is the caller's. */
static int create_new(int dirfd, const char *name, unsigned mode)
{
	int fd = openat(dirfd, name,
	                O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
	                        O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
	                (mode_t)mode);

	return fd >= 0 ? fd : -errno;
}

/* NAME.XXXXXX, created with O_EXCL; the suffix is written into NAME. */
static int create_fresh(int dirfd, char *name, size_t size, unsigned mode)
{
	size_t len = strlen(name);
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	if (len + 8 >= size)
		return -ENAMETOOLONG;
	for (int attempt = 0; attempt < 64; attempt++) {
		unsigned char rnd[6];
		int fd;

		if (getentropy(rnd, sizeof(rnd)) < 0)
			return -errno;
		name[len] = '.';
		for (int i = 0; i < 6; i++)
			name[len + 1 + i] = digits[rnd[i] % 36];
		name[len + 7] = '\0';
		fd = create_new(dirfd, name, mode);
		if (fd != -EEXIST)
			return fd;
	}
	return -EEXIST;
}

int ga_logfile_open(const char *path, unsigned mode, char *actual,
                    size_t actual_size, const char **note)
{
	char comp[NAME_MAX + 1];
	const char *c = path, *end;
	int dirfd, fd, rc;
	struct stat st, dst;
	bool shared;

	if (note)
		*note = NULL;
	if (path[0] != '/')
		return -EINVAL;
	dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	for (;;) {
		size_t n;

		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if (n == 0 || n > NAME_MAX) {
			rc = n ? -ENAMETOOLONG : -EISDIR;
			goto out;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		if (*end == '\0')
			break; /* COMP is the file's name */
		fd = open_dir_component(dirfd, comp);
		if (fd == -ENOENT && !strchr(end + 1, '/')) {
			/* The log's own folder (one per job): created here,
			 * private, as the user. */
			if (mkdirat(dirfd, comp, 0700) < 0 && errno != EEXIST) {
				rc = -errno;
				goto out;
			}
			fd = open_dir_component(dirfd, comp);
		}
		if (fd < 0) {
			rc = fd;
			goto out;
		}
		close(dirfd);
		dirfd = fd;
		c = end;
	}
	/* A directory others may write to (a shared project folder, /tmp, or
	 * a folder another user created under the log's name): a file found
	 * there at the log's name may have been prepared by someone else, so
	 * only a file created now is used. */
	if (fstat(dirfd, &dst) < 0) {
		rc = -errno;
		goto out;
	}
	shared = dst.st_uid != geteuid() && (dst.st_mode & (S_IWGRP | S_IWOTH));
	fd = create_new(dirfd, comp, mode);
	if (fd == -EEXIST && !shared) {
		/* A requeued job's log: ours, and only ours. */
		fd = openat(dirfd, comp,
		            O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
		                    O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			fd = -EEXIST; /* a symlink, a FIFO without reader... */
		} else if (fstat(fd, &st) < 0 || !reusable(&st, mode)) {
			close(fd);
			fd = -EEXIST;
		}
	}
	if (fd == -EEXIST) {
		if (note)
			*note = "a file someone may have prepared was at the log's "
			        "name: logging to a fresh name";
		fd = create_fresh(dirfd, comp, sizeof(comp), mode);
	}
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		close(fd);
		goto out;
	}
	/* umask may have narrowed a fresh file; the admin's mode wins. */
	if ((st.st_mode & 07777) != (mode & 07777))
		(void)fchmod(fd, (mode_t)mode);
	if (fcntl(fd, F_SETFL, O_APPEND) < 0) {
		rc = -errno;
		close(fd);
		goto out;
	}
	if (actual) {
		size_t dlen = (size_t)(c - path);

		/* PATH up to the last '/', then the name actually used. */
		while (dlen && path[dlen - 1] != '/')
			dlen--;
		if (dlen + strlen(comp) + 1 > actual_size) {
			close(fd);
			rc = -ENAMETOOLONG;
			goto out;
		}
		memcpy(actual, path, dlen);
		strcpy(actual + dlen, comp);
	}
	rc = fd;
out:
	close(dirfd);
	return rc;
}

/* Append S with control characters (and DEL) shown as '?'. */
static void put_clean(struct ga_buf *b, const char *s, size_t max)
{
	size_t n = 0;

	if (!s)
		s = "?";
	for (; *s && n < max; s++, n++)
		ga_buf_putc(b, ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?'
		                                                        : *s);
	if (*s)
		ga_buf_puts(b, "...");
}

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (!safe_char((unsigned char)*s) && *s != '/' && *s != '=' &&
		    *s != ':' && *s != ',' && *s != '@')
			return true;
	return false;
}

int ga_logfile_write_header(int fd, const struct ga_log_header *h)
{
	struct ga_buf b;
	struct tm tm;
	char when[64] = "?";
	int rc = 0;

	ga_buf_init(&b);
	if (localtime_r(&h->start, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", &tm);
	ga_buf_puts(&b, "# gpualert ");
	put_clean(&b, h->version, 64);
	ga_buf_puts(&b, " durable log\n# job: ");
	put_clean(&b, h->job_id, 64);
	ga_buf_puts(&b, "  step: ");
	put_clean(&b, h->step_id, 64);
	ga_buf_printf(&b, "  task: %" PRIu32 "  node: ", h->task_id);
	put_clean(&b, h->node, 256);
	ga_buf_puts(&b, "  user: ");
	put_clean(&b, h->user, 64);
	ga_buf_puts(&b, "\n# command:");
	for (int i = 0; i < h->argc && h->argv && h->argv[i]; i++) {
		if (b.len > 4096) {
			ga_buf_puts(&b, " ...");
			break;
		}
		ga_buf_putc(&b, ' ');
		if (needs_quotes(h->argv[i])) {
			ga_buf_putc(&b, '\'');
			for (const char *s = h->argv[i]; *s && b.len < 4200;
			     s++) {
				if (*s == '\'')
					ga_buf_puts(&b, "'\\''");
				else
					ga_buf_putc(&b,
					            ((unsigned char)*s < 0x20 ||
					             *s == 0x7f)
					                    ? '?'
					                    : *s);
			}
			ga_buf_putc(&b, '\'');
		} else {
			put_clean(&b, h->argv[i], 4096);
		}
	}
	ga_buf_printf(&b, "\n# start: %s (%lld)\n", when, (long long)h->start);
	ga_buf_puts(&b, GA_LOG_HEADER_END);
	if (b.failed) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t off = 0; off < b.len;) {
		ssize_t n = write(fd, b.data + off, b.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			goto out;
		}
		off += (size_t)n;
	}
out:
	ga_buf_finish(&b);
	return rc;
}
