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
/* Merged mode classifies on a second thread, from a ring the copy loop
 * reads the pipe into (no extra copy): on a multi-core node the task's
 * output rate is then bounded by the copy (pipe -> output + log), not by
 * the classifier.  When the classifier is a whole ring behind, the copy
 * loop does not wait: those bytes go unclassified (flagged). */
#define RING_SIZE (16u * 1024 * 1024)
#define RING_MIN_READ (64u * 1024)

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *mem;
	uint64_t head;          /* written by the copy loop */
	uint64_t tail;          /* consumed by the classifier thread */
	bool done;
	struct ga_classifier *cls;
	pthread_t thread;
};

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

static struct ring *ring_start(struct ga_classifier *cls)
{
	struct ring *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	int rc;

	if (!r)
		return NULL;
	r->mem = malloc(RING_SIZE);
	r->cls = cls;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	/* The classifier thread must not take the drain signal. */
	rc = r->mem ? pthread_create(&r->thread, &attr, ring_main, r) : -1;
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(r->mem);
		free(r);
		return NULL;
	}
	return r;
}

static void ring_stop(struct ring *r)
{
	pthread_mutex_lock(&r->mu);
	r->done = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
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
	int in;                 /* pipe read end, O_NONBLOCK */
	int out;                /* the original destination */
	bool eof;
	bool out_dead;
	char *carry;            /* split mode: unfinished line for the log */
	size_t carry_len;
};

struct helper {
	struct stream s[2];
	int n;
	int log_fd;
	bool log_dead;
	struct ga_classifier *cls;
	struct ring *ring;      /* merged mode: classify on a thread */
	size_t late_len;        /* the newest unclassified read, still in buf */
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
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

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
	if (h->log_fd >= 0 && !h->log_dead && write_all(h->log_fd, p, len) < 0) {
		h->log_dead = true;     /* e.g. ENOSPC: the task's output goes on */
		h->flags |= GA_CAPTURE_F_LOG_LOST;
	}
	if (h->cls && !h->ring)
		ga_classifier_feed(h->cls, p, len);
}

static void consume(struct helper *h, struct stream *s, const char *p, size_t len)
{
	h->bytes += len;
	if (!s->out_dead && write_all(s->out, p, len) < 0) {
		s->out_dead = true;     /* EPIPE: srun went away; keep the log */
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
				cap = avail < COPY_BUF ? (size_t)avail : COPY_BUF;
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
			pthread_mutex_lock(&h->ring->mu);
			h->ring->head += (uint64_t)n;
			pthread_cond_signal(&h->ring->cv);
			pthread_mutex_unlock(&h->ring->mu);
			h->late_len = 0;
		} else if (h->ring) {
			h->flags |= GA_CAPTURE_F_CLS_SKIPPED;
			h->late_len = (size_t)n;
		}
	}
	return total;
}

static void limit_memory(uint64_t budget)
{
	struct rlimit rl = { 0, 0 };
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
	rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + budget;
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
	char *carry[2] = { NULL, NULL };
	int *fds[] = { &in1, &in2, &out1, &out2, &log_fd, &sock };

	/* Own session: the program's kill(0, ...) or a terminal's ^C cannot
	 * reach the copy loop; Slurm's final SIGKILL of the cgroup still does. */
	(void)setsid();
	ga_log_set_sink(quiet_sink, NULL);
	keep_fds(fds, (int)(sizeof(fds) / sizeof(fds[0])));

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_drain;       /* no SA_RESTART: interrupt ppoll */
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
	h.s[0] = (struct stream){ .in = in1, .out = out1 };
	h.s[1] = (struct stream){ .in = in2, .out = out2, .eof = h.n < 2 };
	h.buf = malloc(COPY_BUF);
	if (h.n == 2) {
		carry[0] = h.s[0].carry = malloc(LINE_CARRY);
		carry[1] = h.s[1].carry = malloc(LINE_CARRY);
	}
	if (!h.buf)
		_exit(1);       /* cannot happen short of a broken budget */
	if (o->classify) {
		rs = ga_rules_load(o->rules_dir, NULL, NULL);
		h.cls = rs ? ga_classifier_create(rs) : NULL;
		if (h.cls && o->tail_lines)
			ga_classifier_set_tail(h.cls, o->tail_lines, 16 * 1024);
		if (!h.cls)
			h.flags |= GA_CAPTURE_F_NO_RULES;
		else if (h.n == 1)
			h.ring = ring_start(h.cls);   /* NULL: classify inline */
	}

	for (;;) {
		struct pollfd pfd[2];
		int np = 0;

		for (int i = 0; i < h.n; i++)
			if (!h.s[i].eof)
				pfd[np++] = (struct pollfd){ .fd = h.s[i].in, .events = POLLIN };
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
					r += pump_stream(&h, &h.s[i], DRAIN_MAX);
				got += r;
				if (r == 0 || got >= DRAIN_MAX)
					break;
			}
			for (int i = 0; i < h.n; i++)
				if (!h.s[i].eof) {
					h.flags |= GA_CAPTURE_F_DRAINED;
					if (h.s[i].carry && h.s[i].carry_len)
						to_log(&h, h.s[i].carry, h.s[i].carry_len);
				}
			break;
		}
		if (ppoll(pfd, (nfds_t)np, NULL, &waitmask) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < h.n; i++)
			pump_stream(&h, &h.s[i], SIZE_MAX);
	}

	if (h.ring) {
		ring_stop(h.ring);      /* the classifier has seen the ring */
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
			ga_buf_printf(&msg, "GA1 S %" PRIu32 " %" PRIu64 " %u %" PRIu64 "\n",
				      o->task_id, h.bytes,
				      h.flags | GA_CAPTURE_F_STATE_BIG, maxrss);
		}
	}
	if (sock >= 0) {
		struct timeval tv = { .tv_sec = 10 };

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
	int p1[2] = { -1, -1 }, p2[2] = { -1, -1 };
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
		mode = GA_CAPTURE_MERGED;       /* no stderr at all: keep it so */
	if (make_pipe(p1) < 0 || (mode == GA_CAPTURE_SPLIT && make_pipe(p2) < 0)) {
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
	for (int *fd = (int[]){ p1[0], p1[1], p2[0], p2[1], out1, out2, -2 };
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
	int fd;                 /* ours */
	int task_fd;            /* tasks' and helpers' */
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
	if (!c->buf || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
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
		setsockopt(c->task_fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	} else {
		setsockopt(c->task_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
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
		return NULL;    /* bound what one step's users can make us keep */
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 8;
		struct ga_task_capture *nt = realloc(c->tasks, ncap * sizeof(*nt));

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
		d[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
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
			return;         /* first announcement wins */
		t->started = true;
		t->mode = (enum ga_capture_mode)a;
		t->helper = b && cred ? cred->pid : 0;
		if (nl) {
			t->work_dir = dup_clean(body, (size_t)(nl - body), PATH_MAX);
			if (nl[1])
				t->error = dup_clean(nl + 1, strlen(nl + 1), 512);
		}
	} else if (type == 'S') {
		/* Only the helper that announced itself speaks for the task. */
		if (!t->started || !t->helper || !cred || cred->pid != t->helper ||
		    t->have_state)
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
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred))];
		} ctl;
		struct iovec iov = { c->buf, GA_MSG_MAX };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.b, .msg_controllen = sizeof(ctl.b),
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
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
				cred = (struct ucred *)CMSG_DATA(cm);
		/* A sender may pass descriptors we never asked for: close
		 * them, or a user could fill slurmstepd's fd table. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				int *fds = (int *)CMSG_DATA(cm);
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (size_t i = 0; i < k; i++)
					close(fds[i]);
			}
		if (!cred || (c->uid != (uid_t)-1 && cred->uid != c->uid && cred->uid != 0))
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
			break;          /* never captured: nothing to wait for */
		if (!t && now_ms() - t0 > 200)
			break;          /* the task never announced itself */
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
