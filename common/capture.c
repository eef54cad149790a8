#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "classifier.h"
#include "log.h"
#include "rules.h"

/* 256 KiB pipes: fewer wake-ups than the default 64 KiB, while 256 tasks
 * of one user stay under the default pipe-user-pages-soft (64 MiB), past
 * which Linux shrinks every new pipe of that user (pipe(7)). */
#define PIPE_SIZE (256 * 1024)
#define COPY_BUF (256 * 1024)
/* Per-stream carry for the log in split mode (whole lines go to the log
 * and the classifier, so stdout and stderr lines never interleave mid-line). */
#define LINE_CARRY (64 * 1024)
/* A background writer that keeps the pipe full must not keep a draining
 * helper busy forever. */
#define DRAIN_MAX (64u * 1024 * 1024)
/* Merged mode classifies on a second thread, so that on a multi-core node
 * the task's output rate is bounded by the copy, not by the classifier.
 * The thread reads one of two sources:
 *
 *  - the durable log itself, read back with pread(2) from the page cache
 *    (the zero-copy path below): the copy loop only publishes how far the
 *    log has been written, so it never waits for the classifier and keeps
 *    no buffer of its own;
 *  - otherwise a ring the copy loop reads the pipe into (no extra copy).
 *    When the classifier is a whole ring behind, the copy loop does not
 *    wait: those bytes go unclassified (flagged).
 *
 * Either way the classifier is at most LAG_MAX behind, so what is left to
 * classify at the end (where failures show) is bounded in time; a reader
 * further behind skips ahead (flagged) rather than delay the report. */
#define RING_SIZE (16u * 1024 * 1024)
#define RING_MIN_READ (64u * 1024)
#define LAG_MAX (32u * 1024 * 1024)
#define READBACK (256u * 1024)

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *mem;     /* the ring, or the read-back buffer */
	int fd;        /* read-back source (the log), or -1 */
	uint64_t base; /* file offset of byte 0 of the stream */
	uint64_t head; /* written by the copy loop */
	uint64_t tail; /* consumed by the classifier thread */
	bool done;
	bool skipped; /* read-back: some bytes were not classified */
	struct ga_classifier *cls;
	pthread_t thread;
};

/* Read-back: classify [tail, head) of the log.  Called and returns with
 * the mutex held. */
static void readback_step(struct ring *r)
{
	uint64_t off, len;
	ssize_t n;

	if (r->head - r->tail > LAG_MAX) {
		r->tail = r->head - LAG_MAX;
		r->skipped = true;
	}
	off = r->tail;
	len = r->head - r->tail;
	if (len > READBACK)
		len = READBACK;
	pthread_mutex_unlock(&r->mu);
	do
		n = pread(r->fd, r->mem, (size_t)len, (off_t)(r->base + off));
	while (n < 0 && errno == EINTR);
	if (n > 0)
		ga_classifier_feed(r->cls, r->mem, (size_t)n);
	pthread_mutex_lock(&r->mu);
	if (n > 0) {
		r->tail += (uint64_t)n;
	} else {
		/* The user truncated the log, or it became unreadable: what
		 * was published cannot be read back. */
		r->tail = r->head;
		r->skipped = true;
	}
}

static void *ring_main(void *arg)
{
	struct ring *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		uint64_t off, len;

		while (r->head == r->tail && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->head == r->tail)
			break;
		if (r->fd >= 0) {
			readback_step(r);
			continue;
		}
		off = r->tail % RING_SIZE;
		len = r->head - r->tail;
		if (len > RING_SIZE - off)
			len = RING_SIZE - off;
		pthread_mutex_unlock(&r->mu);
		ga_classifier_feed(r->cls, r->mem + off, (size_t)len);
		pthread_mutex_lock(&r->mu);
		r->tail += len;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* FD < 0: a ring the copy loop fills; else classify FD from BASE on. */
static struct ring *ring_start(struct ga_classifier *cls, int fd, uint64_t base)
{
	struct ring *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	int rc;

	if (!r)
		return NULL;
	r->mem = malloc(fd >= 0 ? READBACK : RING_SIZE);
	r->cls = cls;
	r->fd = fd;
	r->base = base;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	/* The classifier thread must not take the drain signal: it inherits
	 * the helper's mask, which blocks SIGUSR1 outside ppoll. */
	rc = r->mem ? pthread_create(&r->thread, &attr, ring_main, r) : -1;
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(r->mem);
		free(r);
		return NULL;
	}
	return r;
}

static void ring_publish(struct ring *r, uint64_t n)
{
	pthread_mutex_lock(&r->mu);
	r->head += n;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Wait until the thread has seen everything published, then free R.
 * Returns whether bytes were skipped on read-back. */
static bool ring_stop(struct ring *r)
{
	bool skipped;

	pthread_mutex_lock(&r->mu);
	r->done = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	skipped = r->skipped;
	free(r->mem);
	free(r);
	return skipped;
}

bool ga_capture_pattern_has(const char *pattern, const char *convs)
{
	for (; convs && *convs; convs++) {
		bool found = false;

		for (const char *p = pattern; p && *p && !found; p++)
			if (*p == '%' && p[1]) {
				found = p[1] == *convs;
				p++; /* "%%" is a literal '%' */
			}
		if (!found)
			return false;
	}
	return pattern != NULL;
}

const char *ga_capture_mode_name(enum ga_capture_mode m)
{
	switch (m) {
	case GA_CAPTURE_MERGED:
		return "merged";
	case GA_CAPTURE_SPLIT:
		return "split";
	case GA_CAPTURE_NONE:
		break;
	}
	return "none";
}

/* ---- messages ------------------------------------------------------------
 * "GA1 P <task> <mode> <has_helper>\n<work_dir>\n<error>"   start
 * "GA1 S <task> <bytes> <flags> <maxrss_kib>\n<classifier state JSON>"  final state
 */

static int send_msg(int sock, const struct ga_buf *b)
{
	ssize_t n;

	if (sock < 0)
		return -EBADF;
	if (b->failed)
		return -ENOMEM;
	if (b->len > GA_MSG_MAX)
		return -EMSGSIZE;
	do
		n = send(sock, b->data, b->len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

static void send_start(int sock, uint32_t task, enum ga_capture_mode mode,
                       bool has_helper, const char *work_dir, const char *error)
{
	struct ga_buf b;

	if (sock < 0)
		return;
	ga_buf_init(&b);
	ga_buf_printf(&b, "GA1 P %" PRIu32 " %d %d\n", task, (int)mode,
	              has_helper ? 1 : 0);
	ga_buf_puts(&b, work_dir ? work_dir : "");
	ga_buf_putc(&b, '\n');
	ga_buf_puts(&b, error ? error : "");
	(void)send_msg(sock, &b);
	ga_buf_finish(&b);
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
	int log_fd;
	bool log_dead;
	struct ga_classifier *cls;
	struct ring *ring; /* merged mode: classify on a thread */
	bool zc;           /* merged mode: the zero-copy path */
	int side[2];       /* zc: tee(2) target, drained into the log */
	int log_rw;        /* zc: the log reopened read-write, no O_APPEND */
	uint64_t log_off;  /* zc: where the next byte of the log goes */
	uint64_t log_base; /* zc: log offset of the stream's first byte */
	size_t late_len;   /* the newest unclassified read, still in buf */
	uint64_t bytes;
	unsigned flags;
	char *buf;
};

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
	if (h->log_fd >= 0 && !h->log_dead &&
	    write_all(h->log_fd, p, len) < 0) {
		h->log_dead = true; /* e.g. ENOSPC: the task's output goes on */
		h->flags |= GA_CAPTURE_F_LOG_LOST;
	}
	if (h->cls && !h->ring)
		ga_classifier_feed(h->cls, p, len);
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
		char *dst = h->buf;
		size_t cap = COPY_BUF;
		bool in_ring = false;
		ssize_t n;

		if (h->ring) {
			uint64_t used, off = h->ring->head % RING_SIZE, avail;

			pthread_mutex_lock(&h->ring->mu);
			used = h->ring->head - h->ring->tail;
			pthread_mutex_unlock(&h->ring->mu);
			avail = RING_SIZE - used;
			if (avail > RING_SIZE - off)
				avail = RING_SIZE - off;
			if (avail >= RING_MIN_READ) {
				dst = h->ring->mem + off;
				cap = avail < COPY_BUF ? (size_t)avail
				                       : COPY_BUF;
				in_ring = true;
			}
		}
		n = read(s->in, dst, cap);

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
		consume(h, s, dst, (size_t)n);
		total += (size_t)n;
		if (in_ring) {
			ring_publish(h->ring, (uint64_t)n);
			h->late_len = 0;
		} else if (h->ring) {
			h->flags |= GA_CAPTURE_F_CLS_SKIPPED;
			h->late_len = (size_t)n;
		}
	}
	return total;
}

/* ---- zero-copy path (merged mode) ----------------------------------------
 * The task's stdout/stderr is a pipe, so the bytes need not pass through
 * user memory: tee(2) duplicates the task pipe's buffers into a side pipe
 * (page references, no copy), splice(2) moves the originals to where the
 * task's output went (a pipe for srun: no copy; a file for batch: one
 * copy, into its page cache) and the duplicates to the durable log (one
 * copy).  The classifier thread reads the log back from the page cache.
 *
 * The log is opened O_APPEND, and splice(2) refuses to write to an
 * O_APPEND file (EINVAL; still so on Linux 6.x), so the helper reopens it
 * read-write without O_APPEND and writes at its own offsets.  That is
 * only safe when no other process appends to the same file meanwhile:
 * the caller says so (ga_capture_opts.log_private), and an exclusive
 * flock(2) keeps two helpers of this code off one file.  Anything the
 * path cannot do falls back to the read/write loop above, which keeps
 * every guarantee: output first, the log never holding up the output. */

/* The task pipe and the side pipe must be empty at the top of the loop,
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
	bool logged = true;

	while (n) {
		ssize_t k;

		if (logged) {
			loff_t off = (loff_t)h->log_off;

			k = splice(h->side[0], NULL, h->log_rw, &off, n,
			           SPLICE_F_MOVE);
			if (k > 0) {
				h->log_off += (uint64_t)k;
				if (h->ring)
					ring_publish(h->ring, (uint64_t)k);
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
	return logged;
}

/* Leave the zero-copy path for the read/write loop (the log stays where
 * it is: O_APPEND writes land at its end).  LOG_FAILED: the log is lost. */
static void zc_leave(struct helper *h, bool log_failed)
{
	if (h->ring) {
		if (ring_stop(h->ring))
			h->flags |= GA_CAPTURE_F_CLS_SKIPPED;
		h->ring = NULL;
	}
	if (log_failed) {
		h->log_dead = true;
		h->flags |= GA_CAPTURE_F_LOG_LOST;
		/* Bytes discarded from the side pipe were not classified. */
		h->flags |= GA_CAPTURE_F_CLS_SKIPPED;
	}
	close(h->side[0]);
	close(h->side[1]);
	close(h->log_rw);
	h->side[0] = h->side[1] = h->log_rw = -1;
	h->zc = false;
	if (h->cls)
		h->ring = ring_start(h->cls, -1, 0); /* NULL: classify inline */
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

/* Set up the zero-copy path for merged mode; false leaves the helper on
 * the read/write loop with nothing changed. */
static bool zc_enter(struct helper *h, bool log_private)
{
	char proc[64];
	struct stat a, b;
	int sz, fl;

	h->side[0] = h->side[1] = h->log_rw = -1;
	if (!log_private || h->log_fd < 0 || h->n != 1)
		return false;
	/* flock(2): not advisory for a second helper of this code on the
	 * same file (a requeued job's log), which then stays on O_APPEND. */
	if (flock(h->log_fd, LOCK_EX | LOCK_NB) < 0)
		return false;
	/* Same inode, read-write (the read-back), no O_APPEND (splice). */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", h->log_fd);
	h->log_rw = open(proc, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (h->log_rw < 0 || fstat(h->log_fd, &a) < 0 ||
	    fstat(h->log_rw, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || !S_ISREG(b.st_mode))
		goto no;
	h->log_off = h->log_base = (uint64_t)b.st_size;
	if (pipe2(h->side, O_CLOEXEC) < 0) {
		h->side[0] = h->side[1] = -1;
		goto no;
	}
	/* tee(2) duplicates whole pipe buffers (one slot per write of the
	 * task), so the side pipe gets as many slots as the task pipe. */
	sz = fcntl(h->s[0].in, F_GETPIPE_SZ);
	if (sz > 0)
		(void)fcntl(h->side[1], F_SETPIPE_SZ, sz);
	fl = fcntl(h->s[0].out, F_GETFL);
	/* splice(2) to an O_APPEND file fails with EINVAL: copy to it. */
	h->s[0].out_splice = fl >= 0 && !(fl & O_APPEND);
	if (h->cls) {
		h->ring = ring_start(h->cls, h->log_rw, h->log_base);
		if (!h->ring)
			goto no;
	}
	h->zc = true;
	return true;
no:
	for (int *fd = (int[]){h->log_rw, h->side[0], h->side[1], -2};
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	h->side[0] = h->side[1] = h->log_rw = -1;
	(void)flock(h->log_fd, LOCK_UN);
	return false;
}

static void limit_memory(uint64_t budget)
{
	struct rlimit rl = {0, 0};
	unsigned long pages = 0;
	FILE *f;

	(void)setrlimit(RLIMIT_CORE, &rl);
	if (!budget)
		return;
	/* The helper is a fork of the task process (slurmstepd's image in the
	 * plugin), so bound what it may add to what it already maps. */
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	rl.rlim_cur = rl.rlim_max = (rlim_t)pages *
	                                    (rlim_t)sysconf(_SC_PAGESIZE) +
	                            budget;
	(void)setrlimit(RLIMIT_AS, &rl);
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
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (nul >= 0) {
		for (int fd = 0; fd <= 2; fd++)
			dup2(nul, fd);
		if (nul > 2)
			close(nul);
	}
	for (int i = 0; i < n; i++)
		if (*fds[i] >= 0)
			*fds[i] = fcntl(*fds[i], F_DUPFD_CLOEXEC, 64);
	for (int i = 0; i < n; i++)
		if (*fds[i] >= 0) {
			int t = 3 + i;

			dup3(*fds[i], t, O_CLOEXEC);
			*fds[i] = t;
		}
	close_range(3 + (unsigned)n, ~0U, 0);
}

static void __attribute__((noreturn))
helper_main(const struct ga_capture_opts *o, int in1, int in2, int out1,
            int out2, int log_fd, int sock, enum ga_capture_mode mode)
{
	struct helper h;
	struct sigaction sa;
	sigset_t block, waitmask;
	struct ga_ruleset *rs = NULL;
	struct ga_buf msg;
	uint64_t maxrss = 0;
	char *carry[2] = {NULL, NULL};
	int *fds[] = {&in1, &in2, &out1, &out2, &log_fd, &sock};

	/* Own session: the program's kill(0, ...) or a terminal's ^C cannot
	 * reach the copy loop; Slurm's final SIGKILL of the cgroup still does. */
	(void)setsid();
	ga_log_set_sink(quiet_sink, NULL);
	keep_fds(fds, (int)(sizeof(fds) / sizeof(fds[0])));

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_drain; /* no SA_RESTART: interrupt ppoll */
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGUSR1);
	limit_memory(o->max_rss);

	/* Start message first, from the helper itself, so the collector gets
	 * the helper's pid from the kernel. */
	send_start(sock, o->task_id, mode, true, o->work_dir, o->log_error);

	memset(&h, 0, sizeof(h));
	h.log_fd = log_fd;
	h.n = mode == GA_CAPTURE_SPLIT ? 2 : 1;
	h.s[0] = (struct stream){.in = in1, .out = out1};
	h.s[1] = (struct stream){.in = in2, .out = out2, .eof = h.n < 2};
	h.buf = malloc(COPY_BUF);
	if (h.n == 2) {
		carry[0] = h.s[0].carry = malloc(LINE_CARRY);
		carry[1] = h.s[1].carry = malloc(LINE_CARRY);
	}
	if (!h.buf)
		_exit(1); /* cannot happen short of a broken budget */
	if (o->classify) {
		rs = ga_rules_load(o->rules_dir, NULL, NULL);
		h.cls = rs ? ga_classifier_create(rs) : NULL;
		if (h.cls && o->tail_lines)
			ga_classifier_set_tail(h.cls, o->tail_lines, 16 * 1024);
		if (!h.cls)
			h.flags |= GA_CAPTURE_F_NO_RULES;
	}
	if (!zc_enter(&h, o->log_private) && h.cls && h.n == 1)
		h.ring = ring_start(h.cls, -1, 0); /* NULL: classify inline */

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

	if (h.ring) {
		/* The classifier has seen the ring, or the log up to LAG_MAX
		 * from its end. */
		if (ring_stop(h.ring))
			h.flags |= GA_CAPTURE_F_CLS_SKIPPED;
		/* If the very last read had to skip the classifier, classify
		 * it now: the end of the output is where failures show. */
		if (h.late_len)
			ga_classifier_feed(h.cls, h.buf, h.late_len);
	}
	ga_buf_init(&msg);
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			maxrss = (uint64_t)ru.ru_maxrss;
	}
	ga_buf_printf(&msg, "GA1 S %" PRIu32 " %" PRIu64 " %u %" PRIu64 "\n",
	              o->task_id, h.bytes, h.flags, maxrss);
	if (h.cls) {
		ga_classifier_write_state(h.cls, &msg);
		if (msg.len > GA_MSG_MAX || msg.failed) {
			ga_buf_reset(&msg);
			ga_buf_printf(&msg,
			              "GA1 S %" PRIu32 " %" PRIu64
			              " %u %" PRIu64 "\n",
			              o->task_id, h.bytes,
			              h.flags | GA_CAPTURE_F_STATE_BIG, maxrss);
		}
	}
	if (sock >= 0) {
		struct timeval tv = {.tv_sec = 10};

		setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		(void)send_msg(sock, &msg);
	}
	/* _exit releases the rest. */
	(void)carry;
	_exit(0);
}

/* ---- task side ----------------------------------------------------------- */

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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

int ga_capture_start(const struct ga_capture_opts *o,
                     enum ga_capture_mode *mode_out, const char **why)
{
	enum ga_capture_mode mode;
	int p1[2] = {-1, -1}, p2[2] = {-1, -1};
	int out1 = -1, out2 = -1;
	pid_t mid;
	int status;

	*mode_out = GA_CAPTURE_NONE;
	*why = NULL;
	if (isatty(STDOUT_FILENO)) {
		*why = "stdout is a terminal (--pty): output not captured";
		goto none;
	}
	mode = same_file(STDOUT_FILENO, STDERR_FILENO) ? GA_CAPTURE_MERGED
	                                               : GA_CAPTURE_SPLIT;
	if (fcntl(STDERR_FILENO, F_GETFD) < 0)
		mode = GA_CAPTURE_MERGED; /* no stderr at all: keep it so */
	if (make_pipe(p1) < 0 ||
	    (mode == GA_CAPTURE_SPLIT && make_pipe(p2) < 0)) {
		*why = "cannot create the capture pipes";
		goto fail;
	}
	out1 = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (mode == GA_CAPTURE_SPLIT)
		out2 = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (out1 < 0 || (mode == GA_CAPTURE_SPLIT && out2 < 0)) {
		*why = "cannot duplicate the task's stdout/stderr";
		goto fail;
	}
	mid = fork();
	if (mid < 0) {
		*why = "cannot fork the capture helper";
		goto fail;
	}
	if (mid == 0) {
		/* Double fork: the helper must not be a child of the program,
		 * which may wait() for all its children (SLURM-NOTES §6). */
		pid_t h = fork();

		if (h != 0)
			_exit(h < 0 ? 1 : 0);
		close(p1[1]);
		if (p2[1] >= 0)
			close(p2[1]);
		helper_main(o, p1[0], p2[0], out1, out2, o->log_fd, o->sock_fd,
		            mode);
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	/* The intermediate exits 0 only once the helper exists, and the
	 * helper holds the pipes' read ends from its birth: redirecting is
	 * safe now.  Not waiting for its announcement keeps its start-up off
	 * the task's path; the collector waits for it instead when the task
	 * ends first. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*why = "cannot fork the capture helper";
		goto fail;
	}
	if (dup2(p1[1], STDOUT_FILENO) < 0 ||
	    dup2(mode == GA_CAPTURE_SPLIT ? p2[1] : p1[1], STDERR_FILENO) < 0) {
		/* Put back what we can: the helper copies to the originals. */
		dup2(out1, STDOUT_FILENO);
		if (out2 >= 0)
			dup2(out2, STDERR_FILENO);
		*why = "cannot redirect stdout/stderr";
		goto fail_quiet;
	}
	close(p1[0]);
	close(p1[1]);
	if (p2[0] >= 0) {
		close(p2[0]);
		close(p2[1]);
	}
	close(out1);
	if (out2 >= 0)
		close(out2);
	*mode_out = mode;
	return 0;

fail:
	send_start(o->sock_fd, o->task_id, GA_CAPTURE_NONE, false, o->work_dir,
	           *why);
fail_quiet:
	for (int *fd = (int[]){p1[0], p1[1], p2[0], p2[1], out1, out2, -2};
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	return 1;
none:
	send_start(o->sock_fd, o->task_id, GA_CAPTURE_NONE, false, o->work_dir,
	           o->log_error ? o->log_error : *why);
	return 1;
}

/* ---- collector ----------------------------------------------------------- */

struct ga_collector {
	int fd;      /* ours */
	int task_fd; /* tasks' and helpers' */
	uid_t uid;
	struct ga_task_capture *tasks;
	size_t n, cap;
	char *buf;
};

struct ga_collector *ga_collector_create(bool as_root, uid_t expect_uid)
{
	struct ga_collector *c = calloc(1, sizeof(*c));
	int sv[2], one = 1, size = 2 * GA_MSG_MAX;

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
	if (as_root) {
		setsockopt(c->task_fd, SOL_SOCKET, SO_SNDBUFFORCE, &size,
		           sizeof(size));
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
		           sizeof(size));
	} else {
		setsockopt(c->task_fd, SOL_SOCKET, SO_SNDBUF, &size,
		           sizeof(size));
	}
	return c;
}

static void task_free(struct ga_task_capture *t)
{
	free(t->work_dir);
	free(t->error);
	free(t->state);
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
	for (size_t i = 0; i < c->n; i++)
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

static void handle(struct ga_collector *c, char *m, size_t len,
                   const struct ucred *cred)
{
	struct ga_task_capture *t;
	uint64_t task, a, b, rss = 0;
	const char *p = m + 6, *body;
	char type;

	m[len] = '\0';
	if (len < 8 || memcmp(m, "GA1 ", 4) || m[5] != ' ')
		return;
	type = m[4];
	if (!(p = parse_u64(p, UINT32_MAX, &task)) || *p++ != ' ' ||
	    !(p = parse_u64(p, UINT64_MAX, &a)) || *p++ != ' ' ||
	    !(p = parse_u64(p, UINT32_MAX, &b)))
		return;
	if (*p == ' ' && !(p = parse_u64(p + 1, UINT64_MAX, &rss)))
		return;
	if (*p++ != '\n')
		return;
	body = p;
	t = task_get(c, (uint32_t)task);
	if (!t)
		return;
	if (type == 'P') {
		const char *nl = memchr(body, '\n', len - (size_t)(body - m));

		if (t->started || a > GA_CAPTURE_SPLIT || b > 1)
			return; /* first announcement wins */
		t->started = true;
		t->mode = (enum ga_capture_mode)a;
		t->helper = b && cred ? cred->pid : 0;
		if (nl) {
			t->work_dir = dup_clean(body, (size_t)(nl - body),
			                        PATH_MAX);
			if (nl[1])
				t->error = dup_clean(nl + 1, strlen(nl + 1),
				                     512);
		}
	} else if (type == 'S') {
		/* Only the helper that announced itself speaks for the task. */
		if (!t->started || !t->helper || !cred ||
		    cred->pid != t->helper || t->have_state)
			return;
		t->have_state = true;
		t->bytes = a;
		t->flags = (unsigned)b & 0xff;
		t->helper_maxrss_kib = rss;
		t->state_len = len - (size_t)(body - m);
		t->state = malloc(t->state_len + 1);
		if (t->state) {
			memcpy(t->state, body, t->state_len);
			t->state[t->state_len] = '\0';
		} else {
			t->state_len = 0;
		}
	}
}

int ga_collector_pump(struct ga_collector *c, int timeout_ms)
{
	int got = 0;

	for (;;) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred))];
		} ctl;
		struct iovec iov = {c->buf, GA_MSG_MAX};
		struct msghdr mh = {
		        .msg_iov = &iov,
		        .msg_iovlen = 1,
		        .msg_control = ctl.b,
		        .msg_controllen = sizeof(ctl.b),
		};
		struct ucred *cred = NULL;
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
		if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
			continue;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
		     cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_CREDENTIALS)
				cred = (struct ucred *)CMSG_DATA(cm);
		/* A sender may pass descriptors we never asked for: close
		 * them, or a user could fill slurmstepd's fd table. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
		     cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS) {
				int *fds = (int *)CMSG_DATA(cm);
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) /
				           sizeof(int);

				for (size_t i = 0; i < k; i++)
					close(fds[i]);
			}
		if (!cred || (c->uid != (uid_t)-1 && cred->uid != c->uid &&
		              cred->uid != 0))
			continue;
		handle(c, c->buf, (size_t)n, cred);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Is PID gone (or a zombie)? */
static bool gone(pid_t pid)
{
	char path[64], st[256];
	FILE *f;
	char *p;
	bool dead = true;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(st, sizeof(st), f) && (p = strrchr(st, ')')) && p[1] == ' ')
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
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
	while (t == NULL || !t->have_state) {
		left = timeout_ms - (now_ms() - t0);
		if (left <= 0)
			break;
		if (t && t->started && !t->helper)
			break; /* never captured: nothing to wait for */
		if (!t && now_ms() - t0 > 200)
			break; /* the task never announced itself */
		if (t && t->helper && !signalled) {
			/* Every byte the task wrote is in the pipe now; drain
			 * it without waiting for a background holder's EOF. */
			kill(t->helper, SIGUSR1);
			signalled = true;
		} else if (t && t->helper && gone(t->helper)) {
			ga_collector_pump(c, 0);
			break;
		}
		ga_collector_pump(c, left < 20 ? (int)left + 1 : 20);
		t = ga_collector_task(c, task_id);
	}
	/* The state is the helper's last act; let it finish exiting too.
	 * Slurm kills what is left in the step's cgroup after the last
	 * task_exit and proctrack then polls once a second, so a helper
	 * caught mid-exit costs the step a second (SLURM-NOTES §6). */
	if (t && t->have_state && t->helper) {
		double until = now_ms() + 100;

		while (!gone(t->helper) && now_ms() < until)
			usleep(200);
	}
	if (waited_ms)
		*waited_ms = now_ms() - t0;
	return t;
}
