/* SPDX-License-Identifier: MIT */
#include "collector.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

struct ga_collector {
	int fd;      /* ours */
	int task_fd; /* tasks' and helpers' */
	uid_t uid;
	struct ga_task_capture *tasks;
	size_t n, cap;
	char *buf;
};

struct ga_collector *ga_collector_create(uid_t expect_uid)
{
	struct ga_collector *c = calloc(1, sizeof(*c));
	int sv[2], one = 1;

	if (!c)
		return NULL;
	c->buf = malloc(GA_MSG_MAX + 1);
	if (!c->buf ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;

		free(c->buf);
		free(c);
		errno = e;
		return NULL;
	}
	c->fd = sv[0];
	c->task_fd = sv[1];
	c->uid = expect_uid;
	/* Kernel-checked sender credentials on every message. */
	setsockopt(c->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return c;
}

static void task_free(struct ga_task_capture *t)
{
	for (size_t i = 0; i < t->n_rec; i++) {
		if (t->rec[i].fd >= 0)
			close(t->rec[i].fd);
		free(t->rec[i].path);
	}
	if (t->helper_pidfd >= 0)
		close(t->helper_pidfd);
	free(t->work_dir);
	free(t->error);
}

void ga_collector_destroy(struct ga_collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		task_free(&c->tasks[i]);
	free(c->tasks);
	free(c->buf);
	if (c->fd >= 0)
		close(c->fd);
	if (c->task_fd >= 0)
		close(c->task_fd);
	free(c);
}

int ga_collector_task_fd(const struct ga_collector *c)
{
	return c ? c->task_fd : -1;
}

void ga_collector_close_task_end(struct ga_collector *c)
{
	if (c && c->task_fd >= 0) {
		close(c->task_fd);
		c->task_fd = -1;
	}
}

struct ga_task_capture *ga_collector_task(struct ga_collector *c,
                                          uint32_t task_id)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (c->tasks[i].task_id == task_id)
			return &c->tasks[i];
	return NULL;
}

static struct ga_task_capture *task_get(struct ga_collector *c, uint32_t id)
{
	struct ga_task_capture *t = ga_collector_task(c, id);

	if (t)
		return t;
	if (c->n >= 65536)
		return NULL; /* bound what one step's users can make us keep */
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 8;
		struct ga_task_capture *nt = realloc(c->tasks,
		                                     ncap * sizeof(*nt));

		if (!nt)
			return NULL;
		c->tasks = nt;
		c->cap = ncap;
	}
	t = &c->tasks[c->n++];
	memset(t, 0, sizeof(*t));
	t->task_id = id;
	t->helper_pidfd = -1;
	return t;
}

static char *dup_clean(const char *s, size_t len, size_t max)
{
	char *d;

	if (len > max)
		len = max;
	d = malloc(len + 1);
	if (!d)
		return NULL;
	for (size_t i = 0; i < len; i++)
		d[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?'
		                                                    : s[i];
	d[len] = '\0';
	return d;
}

/* Strict unsigned decimal: digits only, at most MAX. */
static const char *parse_u64(const char *p, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return p;
}

/* Parse " N" fields into V[0..N-1]; NULL on any deviation. */
static const char *parse_fields(const char *p, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (*p++ != ' ' || !(p = parse_u64(p, UINT64_MAX, &v[i])))
			return NULL;
	return p;
}

/* Accept FD as the helper's pidfd only if it is a pidfd of the very
 * process that sent it: the sender's pid comes from the kernel
 * (SCM_CREDENTIALS, uid already checked), and while that process lives no
 * other can have its pid.  A pidfd of any other process (a user could
 * send one for a victim's process) is refused, and signals sent later
 * through an accepted pidfd can only reach the helper: once it has
 * exited they fail with ESRCH, whoever reuses its pid. */
static bool pidfd_is_sender(int fd, const struct ucred *cred)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	return ga_pidfd_pid(fd) == cred->pid &&
	       pidfd_send_signal(fd, 0, NULL, 0) == 0;
}

static void take_record(struct ga_task_capture *t, char kind, uint64_t start,
                        const char *path, size_t path_len, int fd)
{
	struct ga_record *r;
	struct stat st;

	if (fd < 0 || t->n_rec >= GA_CAPTURE_STREAMS || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	r = &t->rec[t->n_rec++];
	r->fd = fd;
	r->start = start;
	r->dev = (uint64_t)st.st_dev;
	r->ino = (uint64_t)st.st_ino;
	r->is_log = kind == 'L';
	r->path = dup_clean(path, path_len, PATH_MAX);
}

/* The start message: records (one fd each, in order), work dir, error. */
static void handle_start(struct ga_task_capture *t, const uint64_t *v,
                         const char *body, const char *end, int *fds,
                         size_t n_fds)
{
	size_t next_fd = 0;

	if (t->started || v[0] > GA_CAPTURE_STDOUT || v[1] > 1 ||
	    v[2] > GA_FD_PIPE || v[3] > GA_FD_PIPE)
		return; /* first announcement wins */
	t->started = true;
	t->mode = (enum ga_capture_mode)v[0];
	t->helper = v[1] != 0;
	t->kind[0] = (enum ga_fd_kind)v[2];
	t->kind[1] = (enum ga_fd_kind)v[3];
	while (body < end) {
		const char *nl = memchr(body, '\n', (size_t)(end - body));
		size_t len = nl ? (size_t)(nl - body) : (size_t)(end - body);

		if (len >= 4 && body[0] == 'R' && body[1] == ' ' &&
		    (body[2] == 'L' || body[2] == 'F') && body[3] == ' ') {
			uint64_t start;
			const char *p = parse_u64(body + 4, UINT64_MAX, &start);

			if (p && *p == ' ' && next_fd < n_fds) {
				take_record(t, body[2], start, p + 1,
				            len - (size_t)(p + 1 - body),
				            fds[next_fd]);
				fds[next_fd++] = -1;
			}
		} else if (len >= 2 && body[0] == 'W' && body[1] == ' ' &&
		           !t->work_dir) {
			t->work_dir = dup_clean(body + 2, len - 2, PATH_MAX);
		} else if (len >= 2 && body[0] == 'E' && body[1] == ' ' &&
		           !t->error) {
			t->error = dup_clean(body + 2, len - 2, 512);
		}
		body += len + (nl ? 1 : 0);
	}
}

static void handle(struct ga_collector *c, char *m, size_t len,
                   const struct ucred *cred, int *fds, size_t n_fds)
{
	struct ga_task_capture *t;
	uint64_t task, v[5] = {0};
	const char *p, *end = m + len;
	char type;

	m[len] = '\0';
	if (len < 8 || memcmp(m, "GA2 ", 4) || m[5] != ' ')
		return;
	type = m[4];
	if (!(p = parse_u64(m + 6, UINT32_MAX, &task)))
		return;
	t = task_get(c, (uint32_t)task);
	if (!t)
		return;
	if (type == 'P') {
		if (!(p = parse_fields(p, v, 4)) || *p++ != '\n')
			return;
		handle_start(t, v, p, end, fds, n_fds);
	} else if (type == 'H') {
		if (*p != '\n' || n_fds != 1 || t->helper_pidfd >= 0 ||
		    !pidfd_is_sender(fds[0], cred))
			return;
		t->helper_pidfd = fds[0];
		fds[0] = -1;
	} else if (type == 'S') {
		/* Only the helper that announced itself speaks for the task. */
		if (!(p = parse_fields(p, v, 5)) || *p != '\n' || t->have_end ||
		    t->helper_pidfd < 0 ||
		    ga_pidfd_pid(t->helper_pidfd) != cred->pid)
			return;
		t->have_end = true;
		t->bytes = v[0];
		t->flags = (unsigned)(v[1] & 0xff);
		t->helper_maxrss_kib = v[2];
		t->log_cut = v[3];
		t->helper_cpu_ms = v[4];
	}
}

int ga_collector_pump(struct ga_collector *c, int timeout_ms)
{
	int got = 0;

	for (;;) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred)) +
			       CMSG_SPACE(sizeof(int) * 8)];
		} ctl;
		struct iovec iov = {c->buf, GA_MSG_MAX};
		struct msghdr mh = {
		        .msg_iov = &iov,
		        .msg_iovlen = 1,
		        .msg_control = ctl.b,
		        .msg_controllen = sizeof(ctl.b),
		};
		struct ucred *cred = NULL;
		int fds[8];
		size_t n_fds = 0;
		ssize_t n;
		int pr = poll(&pfd, 1, got ? 0 : timeout_ms);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0 || !(pfd.revents & POLLIN))
			return pr < 0 ? -errno : got;
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : got;
		got++;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
		     cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET)
				continue;
			if (cm->cmsg_type == SCM_CREDENTIALS) {
				cred = (struct ucred *)CMSG_DATA(cm);
			} else if (cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) /
				           sizeof(int);

				for (size_t i = 0; i < k; i++) {
					int fd;

					memcpy(&fd,
					       CMSG_DATA(cm) + i * sizeof(int),
					       sizeof(int));
					if (n_fds < 8)
						fds[n_fds++] = fd;
					else
						close(fd);
				}
			}
		}
		if (!(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && cred &&
		    (c->uid == (uid_t)-1 || cred->uid == c->uid))
			handle(c, c->buf, (size_t)n, cred, fds, n_fds);
		/* Whatever was not taken: a user could otherwise fill
		 * slurmstepd's descriptor table. */
		for (size_t i = 0; i < n_fds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Has the process behind PIDFD exited?  (A pidfd polls readable then.) */
static bool pidfd_exited(int pidfd, int timeout_ms)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) > 0;
}

struct ga_task_capture *ga_collector_finish_task(struct ga_collector *c,
                                                 uint32_t task_id,
                                                 int timeout_ms,
                                                 double *waited_ms)
{
	double t0 = now_ms(), left;
	struct ga_task_capture *t;
	bool signalled = false;

	ga_collector_pump(c, 0);
	t = ga_collector_task(c, task_id);
	for (;;) {
		left = timeout_ms - (now_ms() - t0);
		if (left <= 0)
			break;
		if (!t && now_ms() - t0 > 200)
			break; /* the task never announced itself */
		if (t && t->started && (!t->helper || t->have_end))
			break;
		if (t && t->helper_pidfd >= 0 && !signalled) {
			/* Every byte the task wrote is in the pipe now; drain
			 * it without waiting for a background holder's EOF.
			 * Through the pidfd: never another process. */
			(void)pidfd_send_signal(t->helper_pidfd, SIGUSR1, NULL,
			                        0);
			signalled = true;
		} else if (t && t->helper_pidfd >= 0 &&
		           pidfd_exited(t->helper_pidfd, 0)) {
			ga_collector_pump(c, 0);
			break;
		}
		ga_collector_pump(c, left < 20 ? (int)left + 1 : 20);
		t = ga_collector_task(c, task_id);
	}
	/* The final counts are the helper's last act; let it finish exiting
	 * too.  Slurm kills what is left in the step's cgroup after the last
	 * task_exit and proctrack then polls once a second, so a helper
	 * caught mid-exit costs the step a second.  A helper that is a
	 * sibling of the task is our child: reaped here, through its pidfd
	 * (slurmstepd's task wait loop would sleep 100 ms on reaping it);
	 * a detached one is not ours, and waitid() says so. */
	if (t && t->helper_pidfd >= 0 &&
	    pidfd_exited(t->helper_pidfd, t->have_end ? 100 : 0)) {
		siginfo_t si;

		(void)waitid(P_PIDFD, (id_t)t->helper_pidfd, &si,
		             WEXITED | WNOHANG);
	}
	if (waited_ms)
		*waited_ms = now_ms() - t0;
	return t;
}
