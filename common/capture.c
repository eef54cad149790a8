/* SPDX-License-Identifier: MIT */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "util.h"

/* 256 KiB pipes: fewer wake-ups than the default 64 KiB, while 256 tasks
 * of one user stay under the default pipe-user-pages-soft (64 MiB), past
 * which Linux shrinks every new pipe of that user (pipe(7)). */
#define PIPE_SIZE (256 * 1024)
#define COPY_BUF (256 * 1024)
/* Per-stream carry for the log in split mode (whole lines go to the log,
 * so stdout and stderr lines never interleave mid-line). */
#define LINE_CARRY (64 * 1024)
/* A background writer that keeps the pipe full must not keep a draining
 * helper busy forever. */
#define DRAIN_MAX (64u * 1024 * 1024)
/* The log is trimmed in steps of this much past log_max, so that a fast
 * writer costs one fallocate(2) per step, not one per write. */
#define TRIM_STEP (4u * 1024 * 1024)
#define BLOCK 4096u

bool ga_capture_pattern_has(const char *pattern, const char *convs)
{
	if (!pattern)
		return false;
	for (const char *c = convs; *c; c++) {
		bool found = false;

		for (const char *p = pattern; *p; p++) {
			if (*p != '%' || !p[1])
				continue;
			if (p[1] == *c)
				found = true;
			p++; /* skip the conversion, "%%" included */
		}
		if (!found)
			return false;
	}
	return true;
}

const char *ga_capture_mode_name(enum ga_capture_mode m)
{
	switch (m) {
	case GA_CAPTURE_MERGED:
		return "merged";
	case GA_CAPTURE_SPLIT:
		return "split";
	case GA_CAPTURE_STDERR:
		return "stderr";
	case GA_CAPTURE_STDOUT:
		return "stdout";
	case GA_CAPTURE_NONE:
		break;
	}
	return "none";
}

/* ---- messages ------------------------------------------------------------
 * From the task, before exec (SCM_RIGHTS: one read-only fd per "R" line):
 *   "GA2 P <task> <mode> <helper> <kind1> <kind2>\n"
 *   "R <L|F> <start> <path>\n" ...  "W <work_dir>\n"  "E <error>\n"
 * From the helper, at its start (SCM_RIGHTS: a pidfd of itself):
 *   "GA2 H <task>\n"
 * From the helper, at its end:
 *   "GA2 S <task> <bytes> <flags> <maxrss_kib> <log_cut> <cpu_ms>\n"
 */

static int send_msg(int sock, const struct ga_buf *b, const int *fds,
                    size_t n_fds)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * GA_CAPTURE_STREAMS * 2)];
	} ctl;
	struct iovec iov = {b->data, b->len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (sock < 0)
		return -EBADF;
	if (b->failed)
		return -ENOMEM;
	if (b->len > GA_MSG_MAX || n_fds > GA_CAPTURE_STREAMS * 2)
		return -EMSGSIZE;
	if (n_fds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* Append S as one line's rest: control characters become '?'. */
static void put_line(struct ga_buf *b, const char *s, size_t max)
{
	for (size_t i = 0; s && s[i] && i < max; i++)
		ga_buf_putc(b, ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
		                       ? '?'
		                       : s[i]);
	ga_buf_putc(b, '\n');
}

/* ---- helper -------------------------------------------------------------- */

static volatile sig_atomic_t drain_requested;

static void on_drain(int sig)
{
	(void)sig;
	drain_requested = 1;
}

struct stream {
	int in;  /* pipe read end, O_NONBLOCK */
	int out; /* the original destination */
	bool eof;
	bool out_dead;
	bool out_splice; /* zero-copy: splice(2) to OUT works */
	char *carry;     /* split mode: unfinished line for the log */
	size_t carry_len;
};

struct helper {
	struct stream s[2];
	int n;
	int log_fd; /* O_APPEND */
	int log_rw; /* the log reopened read-write, no O_APPEND */
	bool log_dead;
	bool zc;           /* merged mode: the zero-copy path */
	int side[2];       /* zc: tee(2) target, drained into the log */
	uint64_t log_off;  /* zc: where the next byte of the log goes */
	uint64_t log_base; /* log offset of the output's first byte */
	uint64_t log_end;  /* where the log ends now */
	uint64_t log_max;  /* 0: unbounded */
	uint64_t punched;  /* the hole reaches up to here (0: none yet) */
	uint64_t log_cut;  /* bytes dropped from the log */
	uint64_t bytes;
	unsigned flags;
	char *buf;
};

/* Keep the log within log_max: the first quarter of the output (where
 * set-up errors show) and the newest rest (where failures show).  The
 * middle is punched out (fallocate(2) PUNCH_HOLE: the file keeps its size
 * and offsets, so the zero-copy writer and an O_APPEND writer go on
 * unaffected, and the reader skips the hole with SEEK_DATA).  Where the
 * file system cannot punch holes (NFSv3), the log keeps its head and
 * stops growing: bounded either way, and the report says which. */
static void log_trim(struct helper *h)
{
	uint64_t head, from, to;

	if (!h->log_max || h->log_dead ||
	    h->log_end - h->log_base <= h->log_max + TRIM_STEP)
		return;
	head = h->log_max / 4;
	from = (h->log_base + head + BLOCK - 1) / BLOCK * BLOCK;
	if (h->punched > from)
		from = h->punched;
	to = (h->log_end - (h->log_max - head)) / BLOCK * BLOCK;
	if (to <= from)
		return;
	if (h->log_rw >= 0 &&
	    fallocate(h->log_rw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	              (off_t)from, (off_t)(to - from)) == 0) {
		h->log_cut += to - from;
		h->punched = to;
		h->flags |= GA_CAPTURE_F_LOG_CUT;
		return;
	}
	h->log_dead = true;
	h->flags |= GA_CAPTURE_F_LOG_STOP;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* Someone set O_NONBLOCK on the shared destination. */
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};

			(void)poll(&pfd, 1, 1000);
			continue;
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void to_log(struct helper *h, const char *p, size_t len)
{
	if (h->log_fd < 0 || h->log_dead)
		return;
	if (write_all(h->log_fd, p, len) < 0) {
		h->log_dead = true; /* e.g. ENOSPC: the task's output goes on */
		h->flags |= GA_CAPTURE_F_LOG_LOST;
		return;
	}
	h->log_end += len;
	log_trim(h);
}

static void consume(struct helper *h, struct stream *s, const char *p,
                    size_t len)
{
	h->bytes += len;
	if (!s->out_dead && write_all(s->out, p, len) < 0) {
		s->out_dead = true; /* EPIPE: srun went away; keep the log */
		h->flags |= GA_CAPTURE_F_OUT_LOST;
	}
	if (h->n == 1 || !s->carry) {
		to_log(h, p, len);
		return;
	}
	/* Split: hand whole lines to the log so the two streams interleave
	 * line by line, as a terminal would show them. */
	while (len) {
		const char *nl = memrchr(p, '\n', len);
		size_t room = LINE_CARRY - s->carry_len;

		if (!nl) {
			size_t take = len < room ? len : room;

			memcpy(s->carry + s->carry_len, p, take);
			s->carry_len += take;
			p += take;
			len -= take;
			if (s->carry_len == LINE_CARRY) {
				to_log(h, s->carry, s->carry_len);
				s->carry_len = 0;
			}
			continue;
		}
		if (s->carry_len) {
			to_log(h, s->carry, s->carry_len);
			s->carry_len = 0;
		}
		to_log(h, p, (size_t)(nl - p) + 1);
		len -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
}

/* Read S until EAGAIN or EOF.  Returns bytes read, or stops past LIMIT. */
static size_t pump_stream(struct helper *h, struct stream *s, size_t limit)
{
	size_t total = 0;

	while (!s->eof && total < limit) {
		ssize_t n = read(s->in, h->buf, COPY_BUF);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			s->eof = true;
			if (s->carry && s->carry_len) {
				to_log(h, s->carry, s->carry_len);
				s->carry_len = 0;
			}
			break;
		}
		consume(h, s, h->buf, (size_t)n);
		total += (size_t)n;
	}
	return total;
}

/* ---- zero-copy path (merged mode) ----------------------------------------
 * The task's stdout/stderr is a pipe, so the bytes need not pass through
 * user memory: tee(2) duplicates the task pipe's buffers into a side pipe
 * (page references, no copy), splice(2) moves the originals to where the
 * task's output went (a pipe for srun: no copy) and the duplicates to the
 * durable log (one copy).
 *
 * The log is opened O_APPEND, and splice(2) refuses to write to an
 * O_APPEND file (EINVAL; still so on Linux 6.x), so the helper writes
 * through its read-write descriptor at its own offsets.  That is only
 * safe when no other process appends to the same file meanwhile: the
 * caller says so (ga_capture_opts.log_private), and an exclusive flock(2)
 * keeps two helpers of this code off one file.  Anything the path cannot
 * do falls back to the read/write loop above, which keeps every
 * guarantee: output first, the log never holding up the output.
 *
 * The task pipe and the side pipe must be empty at the top of the loop,
 * and each step moves exactly the N bytes tee(2) duplicated, so both pipes
 * always hold the same bytes in the same order. */

/* Move exactly N bytes (known to be in the pipe) from S->in to S->out. */
static void zc_out(struct helper *h, struct stream *s, size_t n)
{
	while (n) {
		size_t want = n < COPY_BUF ? n : COPY_BUF;
		ssize_t k;

		if (!s->out_dead && s->out_splice) {
			k = splice(s->in, NULL, s->out, NULL, n, SPLICE_F_MOVE);
			if (k > 0) {
				n -= (size_t)k;
				continue;
			}
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && errno == EAGAIN) {
				/* The task pipe is O_NONBLOCK, so a pipe-to-pipe
				 * splice(2) does not wait for room in srun's
				 * pipe: wait here, as write(2) would. */
				struct pollfd pfd = {.fd = s->out,
				                     .events = POLLOUT};

				(void)poll(&pfd, 1, 1000);
				continue;
			}
			if (k < 0 && (errno == EINVAL || errno == ENOSYS ||
			              errno == EOPNOTSUPP)) {
				/* splice(2): the destination cannot take it (a
				 * tty, an O_APPEND file, a file system without
				 * splice_write).  Nothing moved: copy instead. */
				s->out_splice = false;
				continue;
			}
			/* EPIPE (the reader went away; SIGPIPE is ignored
			 * here), EIO, ENOSPC: as write_all failing. */
			s->out_dead = true;
			h->flags |= GA_CAPTURE_F_OUT_LOST;
			continue;
		}
		k = read(s->in, h->buf, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* cannot happen: the bytes are there */
		if (!s->out_dead && write_all(s->out, h->buf, (size_t)k) < 0) {
			s->out_dead = true; /* keep the log going */
			h->flags |= GA_CAPTURE_F_OUT_LOST;
		}
		n -= (size_t)k;
	}
}

/* Move exactly N bytes from the side pipe to the log.  Returns false when
 * the log failed (the rest of the N bytes are discarded). */
static bool zc_log(struct helper *h, size_t n)
{
	bool logged = !h->log_dead;

	while (n) {
		ssize_t k;

		if (logged) {
			loff_t off = (loff_t)h->log_off;

			k = splice(h->side[0], NULL, h->log_rw, &off, n,
			           SPLICE_F_MOVE);
			if (k > 0) {
				h->log_off += (uint64_t)k;
				h->log_end = h->log_off;
				n -= (size_t)k;
				continue;
			}
			if (k < 0 && errno == EINTR)
				continue;
			logged = false; /* ENOSPC, EDQUOT, EIO, EFBIG... */
			continue;
		}
		k = read(h->side[0], h->buf, n < COPY_BUF ? n : COPY_BUF);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n -= (size_t)k;
	}
	if (logged)
		log_trim(h);
	return logged || h->log_dead;
}

/* Leave the zero-copy path for the read/write loop (the log stays where
 * it is: O_APPEND writes land at its end).  LOG_FAILED: the log is lost. */
static void zc_leave(struct helper *h, bool log_failed)
{
	if (log_failed) {
		h->log_dead = true;
		h->flags |= GA_CAPTURE_F_LOG_LOST;
	}
	close(h->side[0]);
	close(h->side[1]);
	h->side[0] = h->side[1] = -1;
	h->zc = false;
}

/* Like pump_stream, on the zero-copy path while it lasts. */
static size_t zc_pump(struct helper *h, struct stream *s, size_t limit)
{
	size_t total = 0;

	while (h->zc && !s->eof && total < limit) {
		/* SPLICE_F_NONBLOCK: an empty task pipe returns EAGAIN (the
		 * drain's "empty"); 0 means no writer is left (tee(2)). */
		ssize_t n = tee(s->in, h->side[1], SIZE_MAX >> 1,
		                SPLICE_F_NONBLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return total;
		if (n < 0) {
			zc_leave(h, false); /* nothing duplicated */
			break;
		}
		if (n == 0) {
			s->eof = true;
			return total;
		}
		zc_out(h, s, (size_t)n);
		h->bytes += (uint64_t)n;
		total += (size_t)n;
		if (!zc_log(h, (size_t)n))
			zc_leave(h, true);
	}
	if (!s->eof && total < limit)
		total += pump_stream(h, s, limit - total);
	return total;
}

/* The log's read-write descriptor (same inode, no O_APPEND): for splice
 * and for punching holes. */
static void open_log_rw(struct helper *h)
{
	char proc[64];
	struct stat a, b;

	h->log_rw = -1;
	if (h->log_fd < 0 || fstat(h->log_fd, &a) < 0)
		return;
	h->log_base = h->log_end = (uint64_t)a.st_size;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", h->log_fd);
	h->log_rw = open(proc, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (h->log_rw >= 0 &&
	    (fstat(h->log_rw, &b) < 0 || a.st_dev != b.st_dev ||
	     a.st_ino != b.st_ino || !S_ISREG(b.st_mode))) {
		close(h->log_rw);
		h->log_rw = -1;
	}
}

/* Set up the zero-copy path for merged mode; false leaves the helper on
 * the read/write loop with nothing changed. */
static bool zc_enter(struct helper *h, bool log_private)
{
	int sz, fl;

	h->side[0] = h->side[1] = -1;
	if (!log_private || h->log_rw < 0 || h->n != 1)
		return false;
	/* flock(2): not advisory for a second helper of this code on the
	 * same file (a requeued job's log), which then stays on O_APPEND. */
	if (flock(h->log_fd, LOCK_EX | LOCK_NB) < 0)
		return false;
	h->log_off = h->log_end;
	if (pipe2(h->side, O_CLOEXEC) < 0) {
		h->side[0] = h->side[1] = -1;
		(void)flock(h->log_fd, LOCK_UN);
		return false;
	}
	/* tee(2) duplicates whole pipe buffers (one slot per write of the
	 * task), so the side pipe gets as many slots as the task pipe. */
	sz = fcntl(h->s[0].in, F_GETPIPE_SZ);
	if (sz > 0)
		(void)fcntl(h->side[1], F_SETPIPE_SZ, sz);
	fl = fcntl(h->s[0].out, F_GETFL);
	/* splice(2) to an O_APPEND file fails with EINVAL: copy to it. */
	h->s[0].out_splice = fl >= 0 && !(fl & O_APPEND);
	h->zc = true;
	return true;
}

static void quiet_sink(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

/* Move the fds we keep to 3.., close the rest.  FDS are updated. */
static void keep_fds(int *fds[], int n)
{
	ga_stdio_to_null();
	for (int i = 0; i < n; i++)
		if (*fds[i] >= 0)
			*fds[i] = fcntl(*fds[i], F_DUPFD_CLOEXEC, 64);
	for (int i = 0; i < n; i++)
		if (*fds[i] >= 0) {
			int t = 3 + i;

			dup3(*fds[i], t, O_CLOEXEC);
			*fds[i] = t;
		} else {
			/* An unused slot (one stream, no socket) still holds
			 * whatever the task had there: slurmstepd's end of a
			 * pipe or a socket must not live on in the helper. */
			close(3 + i);
		}
	close_range(3 + (unsigned)n, ~0U, 0);
}

static void send_hello(int sock, uint32_t task)
{
	struct ga_buf b;
	int pidfd = pidfd_open(getpid(), 0);

	ga_buf_init(&b);
	ga_buf_printf(&b, "GA2 H %" PRIu32 "\n", task);
	/* Without pidfds (Linux < 5.3) the collector gets no way to signal
	 * the helper and waits for its EOF instead. */
	(void)send_msg(sock, &b, &pidfd, pidfd >= 0 ? 1 : 0);
	if (pidfd >= 0)
		close(pidfd);
	ga_buf_finish(&b);
}

/* What the helper holds: the pipes' read ends and the task's original
 * stdout/stderr (the second of each -1 with one stream), the log, the
 * collector's socket, and the task itself when the helper is its
 * sibling (clone_helper(); -1 for a detached helper). */
struct helper_fds {
	int in[2];
	int out[2];
	int log;
	int sock;
	int task_pidfd;
};

static void __attribute__((noreturn))
helper_main(const struct ga_capture_opts *o, struct helper_fds f, int n_streams)
{
	struct helper h;
	struct sigaction sa;
	sigset_t block, waitmask;
	struct ga_buf msg;
	uint64_t maxrss = 0, cpu_ms = 0;
	int *fds[] = {&f.in[0], &f.in[1], &f.out[0],    &f.out[1],
	              &f.log,   &f.sock,  &f.task_pidfd};

	/* Own session: the program's kill(0, ...) or a terminal's ^C cannot
	 * reach the copy loop; Slurm's final SIGKILL of the cgroup still
	 * does, and the record (the log) outlives it.  One name in ps(1),
	 * a sibling or forked (either would be called slurmstepd). */
	(void)setsid();
	(void)prctl(PR_SET_NAME, "gpualert-helper", 0, 0, 0);
	/* Its image is a copy of the task's before exec (slurmstepd's in
	 * the plugin): not for the user's debugger or /proc/PID/mem. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	ga_log_set_sink(quiet_sink, NULL);
	keep_fds(fds, (int)(sizeof(fds) / sizeof(fds[0])));

	/* None of the task's signal handlers (slurmstepd's, in a copy of
	 * its image) may run here, and none of the signals it blocked stays
	 * blocked: only SIGUSR1, outside ppoll. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_drain; /* no SA_RESTART: interrupt ppoll */
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_SETMASK, &block, NULL);
	sigemptyset(&waitmask);
	/* The helper is a fork of the task process (slurmstepd's image in
	 * the plugin): its budget is over what that already maps. */
	ga_limit_memory(o->max_rss);
	send_hello(f.sock, o->task_id);

	memset(&h, 0, sizeof(h));
	h.log_fd = f.log;
	h.log_max = o->log_max;
	h.n = n_streams;
	h.s[0] = (struct stream){.in = f.in[0], .out = f.out[0]};
	h.s[1] = (struct stream){
	        .in = f.in[1], .out = f.out[1], .eof = h.n < 2};
	h.buf = malloc(COPY_BUF);
	if (h.n == 2) {
		h.s[0].carry = malloc(LINE_CARRY);
		h.s[1].carry = malloc(LINE_CARRY);
	}
	if (!h.buf)
		_exit(1); /* cannot happen short of a broken budget */
	open_log_rw(&h);
	(void)zc_enter(&h, o->log_private);

	for (;;) {
		struct pollfd pfd[2];
		int np = 0;

		for (int i = 0; i < h.n; i++)
			if (!h.s[i].eof)
				pfd[np++] = (struct pollfd){.fd = h.s[i].in,
				                            .events = POLLIN};
		if (np == 0)
			break;
		if (drain_requested) {
			/* The task has exited: every byte it wrote is in the
			 * pipe.  Take what is there and stop, whoever else
			 * still holds the write end. */
			size_t got = 0;

			for (;;) {
				size_t r = 0;

				for (int i = 0; i < h.n; i++)
					r += zc_pump(&h, &h.s[i], DRAIN_MAX);
				got += r;
				if (r == 0 || got >= DRAIN_MAX)
					break;
			}
			for (int i = 0; i < h.n; i++)
				if (!h.s[i].eof) {
					h.flags |= GA_CAPTURE_F_DRAINED;
					if (h.s[i].carry && h.s[i].carry_len)
						to_log(&h, h.s[i].carry,
						       h.s[i].carry_len);
				}
			break;
		}
		if (ppoll(pfd, (nfds_t)np, NULL, &waitmask) < 0 &&
		    errno != EINTR)
			break;
		for (int i = 0; i < h.n; i++)
			zc_pump(&h, &h.s[i], SIZE_MAX);
	}

	/* Everything is copied: let go of the task's original stdout and
	 * stderr before the report.  slurmstepd sees their end (and srun
	 * the end of the task's output) only when the last copy closes. */
	for (int i = 0; i < h.n; i++)
		if (h.s[i].out >= 0) {
			close(h.s[i].out);
			h.s[i].out = -1;
		}
	ga_buf_init(&msg);
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0) {
			maxrss = (uint64_t)ru.ru_maxrss;
			cpu_ms = (uint64_t)(ru.ru_utime.tv_sec +
			                    ru.ru_stime.tv_sec) *
			                 1000 +
			         (uint64_t)(ru.ru_utime.tv_usec +
			                    ru.ru_stime.tv_usec) /
			                 1000;
		}
	}
	ga_buf_printf(&msg,
	              "GA2 S %" PRIu32 " %" PRIu64 " %u %" PRIu64 " %" PRIu64
	              " %" PRIu64 "\n",
	              o->task_id, h.bytes, h.flags, maxrss, h.log_cut, cpu_ms);
	if (f.sock >= 0) {
		struct timeval tv = {.tv_sec = 10};

		setsockopt(f.sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		(void)send_msg(f.sock, &msg, NULL, 0);
	}
	/* A sibling of the task exits only once the task has: the parent
	 * they share reaps the task first, then the helper, which it waits
	 * for (slurmstepd's task wait loop sleeps 100 ms whenever it reaps
	 * a child that is not a task). */
	if (f.task_pidfd >= 0) {
		struct pollfd p = {.fd = f.task_pidfd, .events = POLLIN};

		(void)GA_RETRY_EINTR(poll(&p, 1, -1));
	}
	_exit(0);
}

/* ---- starting the helper ----------------------------------------------- */

/* The helper's stack.  Its top page holds what the helper starts with,
 * copied there: the task never looks at that memory again. */
#define HELPER_STACK (1024 * 1024)

struct helper_start {
	struct ga_capture_opts o; /* its pointers cleared */
	struct helper_fds fds;
	int n_streams;
	/* Nonzero until the task execs or exits: the kernel then clears it
	 * and wakes its futex (set_tid_address(2)), in this memory, which
	 * the task has left by then. */
	volatile uint32_t gate;
};

/* Until its gate opens the helper runs in the task's memory, on a stack
 * no sanitizer knows: nothing of a sanitizer's runtime (which keeps
 * per-thread state, and warns on stderr about unknown stacks) may run
 * there. */
#define IN_TASK_MEMORY __attribute__((no_sanitize_address))

/* clone()'s entry point (it returns nothing: helper_main exits). */
static int IN_TASK_MEMORY helper_entry(void *arg)
{
	struct helper_start *hs = arg;

	/* Until the gate opens the task runs in this same memory (its heap,
	 * its errno): nothing is touched and nothing is called that could
	 * fail.  FUTEX_WAIT returns at once when the gate is already open.
	 * Then the task has become its program (or is gone), and this image
	 * is the helper's alone. */
	while (hs->gate)
		syscall(SYS_futex, &hs->gate, FUTEX_WAIT, 1u, NULL, NULL, 0);
	helper_main(&hs->o, hs->fds, hs->n_streams);
}

/* Start the helper as a sibling of the task: a child of the task's
 * parent, so the program the task becomes never finds it among its
 * children, and sharing the task's memory instead of copying it, so the
 * task's start pays neither a fork of slurmstepd's image nor an exec.
 * The helper copies nothing until the task has exec'd or exited; it
 * adds the task's pidfd to FDS.  Returns 0 when a helper holds the fds,
 * -1 when none was started. */
static int clone_helper(const struct ga_capture_opts *o, struct helper_fds fds,
                        int n_streams)
{
	struct helper_start *hs;
	sigset_t all, old;
	char *stack;
	int task_pidfd;
	pid_t pid;

	stack = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
	             -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	task_pidfd = pidfd_open(getpid(), 0);
	if (task_pidfd < 0) {
		munmap(stack, HELPER_STACK);
		return -1;
	}
	(void)mprotect(stack, 4096, PROT_NONE); /* a guard page */
	hs = (struct helper_start *)(stack + HELPER_STACK - 4096);
	fds.task_pidfd = task_pidfd;
	*hs = (struct helper_start){
	        .o = *o, .fds = fds, .n_streams = n_streams, .gate = 1};
	hs->o.log_error = hs->o.work_dir = NULL;
	/* From here the kernel clears the gate when this process execs or
	 * exits (its mm_release()), in the memory the helper keeps. */
	(void)syscall(SYS_set_tid_address, &hs->gate);
	/* No handler of the task's may run in the helper before it has
	 * reset them: it starts with every signal blocked. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(helper_entry, (char *)hs - 64,
	            CLONE_VM | CLONE_PARENT | SIGCHLD, hs);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(task_pidfd);
	if (pid < 0) {
		(void)syscall(SYS_set_tid_address, NULL);
		munmap(stack, HELPER_STACK);
		return -1;
	}
	return 0;
}

/* ---- task side ----------------------------------------------------------- */

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static enum ga_fd_kind fd_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return GA_FD_OTHER;
	if (S_ISREG(st.st_mode))
		return GA_FD_FILE;
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return GA_FD_PIPE;
	return GA_FD_OTHER; /* a terminal (srun -u, --pty), /dev/null... */
}

void ga_capture_probe(enum ga_fd_kind kind[GA_CAPTURE_STREAMS])
{
	kind[0] = fd_kind(STDOUT_FILENO);
	kind[1] = fd_kind(STDERR_FILENO);
}

bool ga_capture_needs_log(const enum ga_fd_kind kind[GA_CAPTURE_STREAMS])
{
	return kind[0] == GA_FD_PIPE || kind[1] == GA_FD_PIPE;
}

static int make_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	(void)fcntl(p[0], F_SETPIPE_SZ, PIPE_SIZE);
	/* The read end lives only in the helper: non-blocking there lets the
	 * drain stop at "empty" instead of waiting for every writer. */
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	return 0;
}

/* A read-only descriptor of the file behind FD, opened anew through
 * /proc/self/fd as the calling user: the kernel checks that the user may
 * read it, and the task's own descriptor (its offset, its flags) is not
 * shared.  O_NONBLOCK: never hang on what fstat said was a file. */
static int reopen_ro(int fd)
{
	char proc[64];
	struct stat a, b;
	int r;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	r = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (r < 0)
		return -1;
	if (fstat(fd, &a) < 0 || fstat(r, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || !S_ISREG(b.st_mode)) {
		close(r);
		return -1;
	}
	return r;
}

/* Where the task's next byte to FD will land. */
static uint64_t output_offset(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	off_t off;

	if (fstat(fd, &st) < 0)
		return 0;
	if (fl >= 0 && (fl & O_APPEND))
		return (uint64_t)st.st_size;
	off = lseek(fd, 0, SEEK_CUR);
	return off < 0 ? 0 : (uint64_t)off;
}

struct announce {
	struct ga_buf b;
	int fds[GA_CAPTURE_STREAMS + 1];
	size_t n;
};

static void add_record(struct announce *a, int fd, bool is_log, uint64_t start,
                       int shown_fd)
{
	char proc[64], path[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", shown_fd);
	n = readlink(proc, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	ga_buf_printf(&a->b, "R %c %" PRIu64 " ", is_log ? 'L' : 'F', start);
	put_line(&a->b, path, PATH_MAX);
	a->fds[a->n++] = fd;
}

static void announce(const struct ga_capture_opts *o, struct announce *a,
                     enum ga_capture_mode mode, bool helper,
                     const enum ga_fd_kind kind[2], const char *error)
{
	struct ga_buf head;

	ga_buf_init(&head);
	ga_buf_printf(&head, "GA2 P %" PRIu32 " %d %d %d %d\n", o->task_id,
	              (int)mode, helper ? 1 : 0, (int)kind[0], (int)kind[1]);
	ga_buf_append(&head, a->b.data ? a->b.data : "", a->b.len);
	ga_buf_puts(&head, "W ");
	put_line(&head, o->work_dir, PATH_MAX);
	if (error) {
		ga_buf_puts(&head, "E ");
		put_line(&head, error, 512);
	}
	(void)send_msg(o->sock_fd, &head, a->fds, a->n);
	ga_buf_finish(&head);
	for (size_t i = 0; i < a->n; i++)
		close(a->fds[i]);
	ga_buf_finish(&a->b);
}

/* Interpose pipes for the streams that are pipes.  Returns the mode, or
 * GA_CAPTURE_NONE with *WHY set when nothing was changed. */
static enum ga_capture_mode interpose(const struct ga_capture_opts *o,
                                      const enum ga_fd_kind kind[2],
                                      const char **why)
{
	enum ga_capture_mode mode;
	int p1[2] = {-1, -1}, p2[2] = {-1, -1};
	int out1 = -1, out2 = -1, first_fd, n_streams, forked;
	struct helper_fds fds;

	if (kind[0] == GA_FD_PIPE && kind[1] == GA_FD_PIPE)
		mode = same_file(STDOUT_FILENO, STDERR_FILENO)
		               ? GA_CAPTURE_MERGED
		               : GA_CAPTURE_SPLIT;
	else
		mode = kind[0] == GA_FD_PIPE ? GA_CAPTURE_STDOUT
		                             : GA_CAPTURE_STDERR;
	first_fd = mode == GA_CAPTURE_STDERR ? STDERR_FILENO : STDOUT_FILENO;
	n_streams = mode == GA_CAPTURE_SPLIT ? 2 : 1;
	if (make_pipe(p1) < 0 || (n_streams == 2 && make_pipe(p2) < 0)) {
		*why = "cannot create the capture pipes";
		goto fail;
	}
	out1 = fcntl(first_fd, F_DUPFD_CLOEXEC, 3);
	if (n_streams == 2)
		out2 = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (out1 < 0 || (n_streams == 2 && out2 < 0)) {
		*why = "cannot duplicate the task's stdout/stderr";
		goto fail;
	}
	/* The helper must not be a child of the program, which may wait()
	 * for all its children: a sibling of the task when the task execs
	 * next (nothing is copied), else detached (a fork). */
	forked = -1;
	fds = (struct helper_fds){.in = {p1[0], p2[0]},
	                          .out = {out1, out2},
	                          .log = o->log_fd,
	                          .sock = o->sock_fd,
	                          .task_pidfd = -1};
	if (o->task_execs) {
		if (clone_helper(o, fds, n_streams) == 0)
			forked = 1;
		else
			ga_log(GA_LOG_INFO,
			       "gpualert: task %" PRIu32 ": cannot start a "
			       "capture helper in the task's memory (%s): "
			       "forked one instead",
			       o->task_id, strerror(errno));
	}
	if (forked < 0)
		forked = ga_fork_detached();
	if (forked == 0) {
		close(p1[1]);
		if (p2[1] >= 0)
			close(p2[1]);
		helper_main(o, fds, n_streams);
	}
	/* Returned once the helper exists, and the helper holds the pipes'
	 * read ends from its birth: redirecting is safe now. */
	if (forked < 0) {
		*why = "cannot fork the capture helper";
		goto fail;
	}
	if ((mode != GA_CAPTURE_STDERR && dup2(p1[1], STDOUT_FILENO) < 0) ||
	    (mode == GA_CAPTURE_MERGED && dup2(p1[1], STDERR_FILENO) < 0) ||
	    (mode == GA_CAPTURE_STDERR && dup2(p1[1], STDERR_FILENO) < 0) ||
	    (mode == GA_CAPTURE_SPLIT && dup2(p2[1], STDERR_FILENO) < 0)) {
		/* Put back what we can: the helper copies to the originals. */
		dup2(out1, first_fd);
		if (out2 >= 0)
			dup2(out2, STDERR_FILENO);
		*why = "cannot redirect stdout/stderr";
	}
	for (int *fd = (int[]){p1[0], p1[1], p2[0], p2[1], out1, out2, -2};
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	return mode;
fail:
	for (int *fd = (int[]){p1[0], p1[1], p2[0], p2[1], out1, out2, -2};
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	return GA_CAPTURE_NONE;
}

int ga_capture_start(const struct ga_capture_opts *o,
                     enum ga_capture_mode *mode_out, const char **why)
{
	enum ga_fd_kind kind[GA_CAPTURE_STREAMS];
	enum ga_capture_mode mode = GA_CAPTURE_NONE;
	struct announce a = {.n = 0};
	const char *note = NULL;

	*mode_out = GA_CAPTURE_NONE;
	*why = NULL;
	ga_buf_init(&a.b);
	ga_capture_probe(kind);
	/* Files: followed from where the task starts writing, untouched. */
	for (int i = 0; i < GA_CAPTURE_STREAMS; i++) {
		int fd = STDOUT_FILENO + i, r;

		if (kind[i] != GA_FD_FILE ||
		    (i == 1 && kind[0] == GA_FD_FILE &&
		     same_file(STDOUT_FILENO, STDERR_FILENO)))
			continue;
		r = reopen_ro(fd);
		if (r < 0) {
			note = "the task's output file cannot be read by its "
			       "user: not recorded";
			continue;
		}
		add_record(&a, r, false, output_offset(fd), fd);
	}
	/* Pipes: interposed, recorded in the durable log. */
	if (ga_capture_needs_log(kind)) {
		int r = o->log_fd >= 0 ? reopen_ro(o->log_fd) : -1;

		if (r < 0) {
			note = o->log_error ? o->log_error
			                    : "no durable log: output not "
			                      "captured";
		} else {
			struct stat st;
			uint64_t start = fstat(o->log_fd, &st) == 0
			                         ? (uint64_t)st.st_size
			                         : 0;

			mode = interpose(o, kind, &note);
			if (mode != GA_CAPTURE_NONE)
				add_record(&a, r, true, start, o->log_fd);
			else
				close(r);
		}
	} else if (kind[0] == GA_FD_OTHER && kind[1] == GA_FD_OTHER) {
		note = "stdout and stderr are neither files nor pipes: output "
		       "not captured";
	}
	*mode_out = mode;
	*why = note;
	/* What the log's creation had to say (a fresh name was used...). */
	if (!note && o->log_error)
		note = o->log_error;
	{
		bool any = a.n > 0;

		announce(o, &a, mode, mode != GA_CAPTURE_NONE, kind, note);
		return any ? 0 : 1;
	}
}
