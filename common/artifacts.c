/* SPDX-License-Identifier: MIT */
#include "artifacts.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fdio.h"
#include "log.h"
#include "gzip.h"
#include "spool.h"
#include "spool_private.h"

#define NAME_MAX_LEN 100
#define PATH_MAX_LEN 4096
#define REASON_MAX_LEN 200

/* One record on the pipe from the reading child to the writing parent. */
struct rec {
	uint32_t kind; /* 'A' attached, 'S' skipped, 'E' end of the globs */
	uint32_t name_len, path_len, reason_len;
	uint64_t len;  /* bytes of data following */
	uint64_t orig; /* size of the original file */
};

static void send_rec(int fd, char kind, const char *name, const char *path,
                     const char *reason, const void *data, uint64_t len,
                     uint64_t orig)
{
	struct rec h = {(uint32_t)kind,
	                (uint32_t)strlen(name),
	                (uint32_t)strlen(path),
	                (uint32_t)strlen(reason),
	                len,
	                orig};

	if (h.name_len > NAME_MAX_LEN || h.path_len > PATH_MAX_LEN ||
	    h.reason_len > REASON_MAX_LEN)
		return;
	if (ga_write_all(fd, &h, sizeof(h)) ||
	    ga_write_all(fd, name, h.name_len) ||
	    ga_write_all(fd, path, h.path_len) ||
	    ga_write_all(fd, reason, h.reason_len) ||
	    ga_write_all(fd, data, (size_t)len))
		_exit(1);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Runs in the child, as the job's user. */
static void offer(int fd, const char *path, uint64_t *left, unsigned *count)
{
	char reason[REASON_MAX_LEN + 1], name[NAME_MAX_LEN + 1];
	char *data = NULL, *gz = NULL;
	size_t gz_len = 0;
	struct stat st;
	int in;

	snprintf(name, sizeof(name), "%.90s", base_name(path));
	if (*count >= GA_ARTIFACTS_MAX_FILES) {
		send_rec(fd, 'S', name, path, "too many files", "", 0, 0);
		return;
	}
	/* O_NOFOLLOW: a link planted in place of a log is not followed
	 * (the child runs as the user anyway, this is defence in depth). */
	in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(reason, sizeof(reason), "cannot read: %s",
		         in < 0 ? strerror(errno) : "not a regular file");
		send_rec(fd, 'S', name, path, reason, "", 0, 0);
		if (in >= 0)
			close(in);
		return;
	}
	/* Read only what could possibly be sent: the file itself when it
	 * fits, or up to 16 times the budget left to try gzip (logs
	 * compress ~10x; beyond that it will not fit anyway). */
	if ((uint64_t)st.st_size > *left && (uint64_t)st.st_size > *left * 16) {
		send_rec(fd, 'S', name, path, "over the attachment budget", "",
		         0, (uint64_t)st.st_size);
		close(in);
		return;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data || ga_read_all(in, data, (size_t)st.st_size)) {
		send_rec(fd, 'S', name, path,
		         "cannot read: short read or "
		         "out of memory",
		         "", 0, (uint64_t)st.st_size);
		goto out;
	}
	if ((uint64_t)st.st_size <= *left) {
		send_rec(fd, 'A', name, path, "", data, (uint64_t)st.st_size,
		         (uint64_t)st.st_size);
		*left -= (uint64_t)st.st_size;
		(*count)++;
	} else if (!ga_gzip(data, (size_t)st.st_size, &gz, &gz_len) &&
	           gz_len <= *left) {
		char gname[NAME_MAX_LEN + 1];

		snprintf(gname, sizeof(gname), "%.90s.gz", name);
		send_rec(fd, 'A', gname, path, "gzip-compressed", gz, gz_len,
		         (uint64_t)st.st_size);
		*left -= gz_len;
		(*count)++;
	} else {
		send_rec(fd, 'S', name, path,
		         "over the attachment budget "
		         "even gzip-compressed",
		         "", 0, (uint64_t)st.st_size);
	}
out:
	free(gz);
	free(data);
	close(in);
}

static void child_collect(int fd, const char *work_dir, const char *const *logs,
                          size_t n_logs, const char *globs, uint64_t budget)
{
	uint64_t left = budget;
	unsigned count = 0;
	char *copy, *save = NULL;

	for (size_t i = 0; i < n_logs; i++)
		if (logs[i] && *logs[i])
			offer(fd, logs[i], &left, &count);
	if (!globs || !*globs || !work_dir || chdir(work_dir) < 0) {
		send_rec(fd, 'E', "", "", "", "", 0, 0);
		return;
	}
	copy = strdup(globs);
	for (char *pat = copy ? strtok_r(copy, ",", &save) : NULL; pat;
	     pat = strtok_r(NULL, ",", &save)) {
		glob_t g;

		while (*pat == ' ')
			pat++;
		/* Relative to the working directory, and staying in it. */
		if (!*pat || *pat == '/' || strstr(pat, ".."))
			continue;
		if (glob(pat, GLOB_NOSORT, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++) {
				char full[PATH_MAX_LEN];

				/* A name too long for a path is not read: a
				 * cut path would be another file. */
				if (ga_path_printf(full, sizeof(full), "%s/%s",
				                   work_dir, g.gl_pathv[i])) {
					send_rec(fd, 'S', "-", g.gl_pathv[i],
					         "path too long", "", 0, 0);
					continue;
				}
				offer(fd, full, &left, &count);
			}
		}
		globfree(&g);
	}
	free(copy);
	send_rec(fd, 'E', "", "", "", "", 0, 0);
}

/* Manifest fields are tab-separated: no tab or newline inside. */
static void put_field(struct ga_buf *b, const char *s)
{
	for (; *s; s++)
		ga_buf_putc(b, (*s == '\t' || *s == '\n' || *s == '\r') ? '?'
		                                                        : *s);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly LEN bytes from the non-blocking FD before DEADLINE
 * (CLOCK_MONOTONIC ms).  Returns 0, -EIO at end of stream, -ETIMEDOUT or
 * -errno. */
static int read_until(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		{
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			int64_t left = deadline - mono_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) <
			            0 &&
			    errno != EINTR)
				return -errno;
		}
	}
	return 0;
}

/* Reap PID, killed: a child stuck in the kernel (D state on a hung
 * mount) dies only when the call returns, so it is waited for briefly
 * and otherwise left as our unreaped child (its pid cannot be reused
 * while it is). */
static bool reap(pid_t pid, int *status, bool killed)
{
	for (int i = 0; i < (killed ? 20 : 1); i++) {
		pid_t r = waitpid(pid, status, killed ? WNOHANG : 0);

		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		if (killed)
			usleep(5000);
		else
			i--;
	}
	return false;
}

int ga_artifacts_collect(struct ga_spool_slot *slot, uid_t uid, gid_t gid,
                         const char *work_dir, const char *const *log_paths,
                         size_t n_logs, const char *globs, unsigned timeout_ms)
{
	char tmpdir[4096], dest[4096];
	struct ga_buf manifest;
	uint64_t total = 0, budget;
	unsigned n = 0;
	int pfd[2], status = 0, rc = 0;
	bool *seen = NULL, globs_done = false, timed_out = false;
	const char *name;
	int64_t deadline;
	pid_t pid;

	if (!slot || !slot->att_held || slot->committed || !slot->att_budget)
		return -EINVAL;
	name = slot->name;
	budget = slot->att_budget;
	slot->att_used = 0;
	rc = ga_path_printf(tmpdir, sizeof(tmpdir), "%s/tmp/att.%s.XXXXXX",
	                    slot->dir, name);
	if (!rc)
		rc = ga_path_printf(dest, sizeof(dest), "%s/att/%s", slot->dir,
		                    name);
	if (rc) {
		ga_log(GA_LOG_ERROR,
		       "gpualert: spool: path too long: %s/att/%s", slot->dir,
		       name);
		return rc;
	}
	if (!mkdtemp(tmpdir)) {
		rc = -errno;
		ga_log(GA_LOG_ERROR, "gpualert: spool: cannot create %s: %s",
		       tmpdir, strerror(errno));
		return rc;
	}
	ga_buf_init(&manifest);
	/* 0750 and the spool's owner: the sender reads and removes it. */
	if (chmod(tmpdir, 0750) < 0 ||
	    (slot->owner_set && chown(tmpdir, slot->owner, slot->group) < 0)) {
		rc = -errno;
		goto fail;
	}
	seen = calloc(n_logs ? n_logs : 1, sizeof(*seen));
	if (!seen) {
		rc = -ENOMEM;
		goto fail;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	deadline = mono_ms() + (timeout_ms ? timeout_ms : 5000);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		goto fail;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		/* Drop supplementary groups, then the gid, then the uid,
		 * before opening anything the user controls: a root hook that
		 * opens user paths with its own credentials reads what the
		 * user may not. */
		if (devnull >= 0)
			dup2(devnull, 0);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != pfd[1])
				close(fd);
		if (geteuid() == 0 && uid != 0) {
			if (setgroups(1, &gid) < 0 || setregid(gid, gid) < 0 ||
			    setreuid(uid, uid) < 0)
				_exit(2);
		}
		child_collect(pfd[1], work_dir, log_paths, n_logs, globs,
		              budget);
		_exit(0);
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		struct rec h;
		char rname[NAME_MAX_LEN + 1], path[PATH_MAX_LEN + 1];
		char reason[REASON_MAX_LEN + 1], fname[NAME_MAX_LEN + 8];
		char *data = NULL;
		int r = read_until(pfd[0], &h, sizeof(h), deadline);

		if (r == -ETIMEDOUT) {
			timed_out = true;
			break;
		}
		if (r)
			break; /* end of stream */
		/* The child runs as the user, who may have taken it over
		 * (ptrace after setreuid): nothing it sends is trusted. */
		if ((h.kind != 'A' && h.kind != 'S' && h.kind != 'E') ||
		    h.name_len > NAME_MAX_LEN || h.path_len > PATH_MAX_LEN ||
		    h.reason_len > REASON_MAX_LEN || h.len > budget - total ||
		    n >= GA_ARTIFACTS_MAX_FILES * 4) {
			rc = -EPROTO;
			break;
		}
		if ((r = read_until(pfd[0], rname, h.name_len, deadline)) ||
		    (r = read_until(pfd[0], path, h.path_len, deadline)) ||
		    (r = read_until(pfd[0], reason, h.reason_len, deadline)) ||
		    (h.len && (!(data = malloc((size_t)h.len)) ||
		               (r = read_until(pfd[0], data, (size_t)h.len,
		                               deadline))))) {
			free(data);
			if (r == -ETIMEDOUT)
				timed_out = true;
			else
				rc = -EPROTO;
			break;
		}
		rname[h.name_len] = path[h.path_len] = reason[h.reason_len] = 0;
		if (h.kind == 'E') {
			free(data);
			globs_done = true;
			continue;
		}
		n++;
		for (size_t i = 0; i < n_logs; i++)
			if (log_paths[i] && !strcmp(log_paths[i], path))
				seen[i] = true;
		if (h.kind == 'A') {
			/* "NN-name", with the name reduced to spool-safe
			 * characters: it becomes a file in the spool. */
			size_t k = (size_t)snprintf(fname, sizeof(fname),
			                            "%02u-", n);

			for (const char *c = rname; *c && k < sizeof(fname) - 1;
			     c++)
				fname[k++] = ((*c >= 'a' && *c <= 'z') ||
				              (*c >= 'A' && *c <= 'Z') ||
				              (*c >= '0' && *c <= '9') ||
				              *c == '.' || *c == '-' ||
				              *c == '_')
				                     ? *c
				                     : '_';
			fname[k] = '\0';
			rc = ga_spool_write_file(
			        tmpdir, fname, data ? data : "", (size_t)h.len);
			free(data);
			if (rc)
				break;
			total += h.len;
			ga_buf_printf(&manifest, "A\t%s\t%" PRIu64 "\t", fname,
			              h.orig);
			put_field(&manifest, reason);
			ga_buf_putc(&manifest, '\t');
			put_field(&manifest, path);
			ga_buf_putc(&manifest, '\n');
		} else {
			free(data);
			ga_buf_printf(&manifest, "S\t-\t%" PRIu64 "\t", h.orig);
			put_field(&manifest, reason);
			ga_buf_putc(&manifest, '\t');
			put_field(&manifest, path);
			ga_buf_putc(&manifest, '\n');
		}
	}
	close(pfd[0]);
	if (rc || timed_out)
		kill(pid, SIGKILL);
	if (!reap(pid, &status, rc || timed_out))
		ga_log(GA_LOG_WARN,
		       "gpualert: spool: the file reader of %s (pid %d) is "
		       "stuck in the kernel; left behind",
		       name, (int)pid);
	else if (!rc && !timed_out && WIFEXITED(status) &&
	         WEXITSTATUS(status) == 2)
		rc = -EPERM;
	if (timed_out) {
		char why[REASON_MAX_LEN + 1];

		snprintf(why, sizeof(why),
		         "not collected: still reading after %u ms "
		         "([mail] collect_timeout_ms)",
		         timeout_ms);
		ga_log(GA_LOG_WARN,
		       "gpualert: spool: %s: file reader killed after %u ms; "
		       "the files not read are listed in the mail",
		       name, timeout_ms);
		for (size_t i = 0; i < n_logs; i++) {
			if (seen[i] || !log_paths[i] || !*log_paths[i])
				continue;
			ga_buf_puts(&manifest, "S\t-\t0\t");
			put_field(&manifest, why);
			ga_buf_putc(&manifest, '\t');
			put_field(&manifest, log_paths[i]);
			ga_buf_putc(&manifest, '\n');
		}
		if (!globs_done && globs && *globs) {
			ga_buf_puts(&manifest, "S\t-\t0\t");
			put_field(&manifest, why);
			ga_buf_putc(&manifest, '\t');
			put_field(&manifest, work_dir ? work_dir : "");
			ga_buf_putc(&manifest, '/');
			put_field(&manifest, globs);
			ga_buf_putc(&manifest, '\n');
		}
	}
	if (!rc && manifest.failed)
		rc = -ENOMEM;
	if (!rc)
		rc = ga_spool_write_file(tmpdir, "MANIFEST",
		                         manifest.data ? manifest.data : "",
		                         manifest.len);
	/* att/NAME is the slot's empty lock directory: rename(2) replaces
	 * an empty directory. */
	if (!rc && rename(tmpdir, dest) < 0)
		rc = -errno;
	if (!rc) {
		slot->att_used = total + manifest.len;
		ga_buf_finish(&manifest);
		free(seen);
		return 0;
	}
fail:
	ga_buf_finish(&manifest);
	free(seen);
	ga_log(GA_LOG_ERROR,
	       "gpualert: spool: cannot collect the files of "
	       "%s: %s (the report is spooled without them)",
	       name, strerror(-rc));
	ga_spool_remove_tree(tmpdir);
	return rc;
}
