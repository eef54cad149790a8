/* SPDX-License-Identifier: MIT */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "log.h"
#include "rules.h"
#include "util.h"

#define CHUNK (1024 * 1024)
/* The answer: a counts line and the classifier state, which holds at most
 * a few evidence lines per rule and the tail. */
#define ANSWER_MAX (4 * 1024 * 1024)

double ga_record_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void quiet_sink(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

/* Take the job user's identity for good (supplementary groups too): from
 * here on this process can read only what the user can, and the user
 * cannot trace it (credentials changed: not dumpable). */
static int become(uid_t uid, gid_t gid)
{
	if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return -1;
	return getuid() == uid && geteuid() == uid ? 0 : -1;
}

/* Feed [from, end) of FD; from may fall mid-line, whose rest is dropped. */
static uint64_t feed(struct ga_classifier *c, int fd, uint64_t from,
                     uint64_t end, bool mid_line, char *buf)
{
	uint64_t done = 0;

	while (from < end) {
		size_t want = end - from < CHUNK ? (size_t)(end - from) : CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)from);
		const char *p = buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		from += (uint64_t)n;
		if (mid_line) {
			/* A line ends at '\n', or at '\r' for the line reader
			 * (progress bars redraw with '\r' only). */
			const char *nl = memchr(buf, '\n', (size_t)n);
			const char *cr = memchr(buf, '\r', (size_t)n);

			if (!nl || (cr && cr < nl))
				nl = cr;
			if (!nl)
				continue;
			mid_line = false;
			p = nl + 1;
		}
		ga_classifier_feed(c, p, (size_t)n - (size_t)(p - buf));
		done += (uint64_t)n;
	}
	return done;
}

static void remove_log(const struct ga_record *r)
{
	struct stat st;
	char dir[PATH_MAX];

	if (!r->path || r->path[0] != '/' || lstat(r->path, &st) < 0 ||
	    (uint64_t)st.st_dev != r->dev || (uint64_t)st.st_ino != r->ino)
		return;
	if (unlink(r->path) < 0)
		return;
	snprintf(dir, sizeof(dir), "%s", r->path);
	(void)rmdir(dirname(dir)); /* the job's folder, once empty */
}

/* The bytes of record R that child_main() reads: from its start to its
 * end, the newest MAX_BYTES of it at most (0: all).  False when it cannot
 * be read at all. */
static bool record_range(const struct ga_record *r, uint64_t max_bytes,
                         uint64_t *from, uint64_t *end)
{
	struct stat s;

	if (r->fd < 0 || fstat(r->fd, &s) < 0)
		return false;
	*from = r->start;
	*end = (uint64_t)s.st_size;
	if (max_bytes && *end > *from && *end - *from > max_bytes)
		*from = *end - max_bytes;
	return true;
}

/* How many bytes child_main() will read of RECS. */
static uint64_t bytes_to_read(const struct ga_record *recs, size_t n,
                              uint64_t max_bytes)
{
	uint64_t total = 0, from, end;

	for (size_t i = 0; i < n; i++)
		if (record_range(&recs[i], max_bytes, &from, &end) &&
		    end > from)
			total += end - from;
	return total;
}

static void __attribute__((noreturn))
child_main(const struct ga_record *recs, size_t n,
           const struct ga_record_opts *o, int out)
{
	const struct ga_ruleset *rs;
	struct ga_classifier *c;
	struct ga_record_stats st = {0};
	struct ga_buf b;
	char *buf;

	ga_log_set_sink(quiet_sink, NULL);
	if (o->drop && become(o->uid, o->gid) < 0)
		_exit(3);
	ga_limit_memory(o->max_rss);
	rs = o->rules ? o->rules : ga_rules_load(o->rules_dir, NULL, NULL);
	c = rs ? ga_classifier_create(rs) : NULL;
	buf = malloc(CHUNK);
	if (!c || !buf)
		_exit(4);
	if (o->tail_lines)
		ga_classifier_set_tail(c, o->tail_lines, 16 * 1024);
	ga_classifier_expect(c, bytes_to_read(recs, n, o->max_bytes));
	for (size_t i = 0; i < n; i++) {
		uint64_t from, end;
		off_t data;

		if (!record_range(&recs[i], o->max_bytes, &from, &end))
			continue;
		if (i == 0)
			st.end = end;
		if (end <= from)
			continue;
		st.skipped += from - recs[i].start; /* over max_bytes */
		/* A log whose middle was punched out: start at its data. */
		data = lseek(recs[i].fd, (off_t)from, SEEK_DATA);
		if (data > (off_t)from && (uint64_t)data < end) {
			st.skipped += (uint64_t)data - from;
			from = (uint64_t)data;
		}
		st.read += feed(c, recs[i].fd, from, end, from > recs[i].start,
		                buf);
		ga_classifier_feed(c, "\n", 1); /* close a last partial line */
	}
	if (o->remove_logs_on_success) {
		struct ga_verdict v;

		ga_verdict_init(&v);
		if (ga_classifier_finish(c, &o->status, &v) == 0 &&
		    v.cls == GA_CLASS_SUCCESS &&
		    !ga_status_failed(&o->status)) {
			for (size_t i = 0; i < n; i++)
				if (recs[i].is_log)
					remove_log(&recs[i]);
			st.removed = true;
		}
		ga_verdict_finish(&v);
	}
	ga_buf_init(&b);
	ga_buf_printf(&b, "GA2 C %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
	              st.read, st.skipped, st.end, st.removed ? 1 : 0);
	ga_classifier_write_state(c, &b);
	if (b.failed)
		_exit(4);
	for (size_t off = 0; off < b.len;) {
		ssize_t k = write(out, b.data + off, b.len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			_exit(5);
		off += (size_t)k;
	}
	_exit(0);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every descriptor above 2 but the records and OUT: the child
 * holds nothing of the collector's (slurmstepd's sockets) while it reads
 * the user's bytes. */
static void close_others(const struct ga_record *recs, size_t n, int out)
{
	int keep[GA_CAPTURE_STREAMS * 4 + 1];
	size_t k = 0;
	unsigned from = 3;

	for (size_t i = 0; i < n && k < GA_CAPTURE_STREAMS * 4; i++)
		if (recs[i].fd > 2)
			keep[k++] = recs[i].fd;
	keep[k++] = out;
	qsort(keep, k, sizeof(int), cmp_int);
	for (size_t i = 0; i < k; i++) {
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

int ga_record_classify_start(const struct ga_record *recs, size_t n,
                             const struct ga_record_opts *o,
                             struct ga_record_job *j)
{
	int p[2];
	pid_t pid;

	j->pid = -1;
	j->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		/* Nothing of the collector's but the records and the answer
		 * pipe: the records are the fds it holds, all close-on-exec,
		 * and this child never execs. */
		ga_stdio_to_null();
		close(p[0]);
		close_others(recs, n, p[1]);
		child_main(recs, n, o, p[1]);
	}
	close(p[1]);
	j->pid = pid;
	j->fd = p[0];
	return 0;
}

static int parse_counts(const char *s, size_t len, struct ga_record_stats *st,
                        size_t *body)
{
	const char *nl = memchr(s, '\n', len);
	char line[128];
	unsigned long long a, b, c;
	int removed;

	if (!nl || (size_t)(nl - s) >= sizeof(line))
		return -EPROTO;
	memcpy(line, s, (size_t)(nl - s));
	line[nl - s] = '\0';
	if (sscanf(line, "GA2 C %llu %llu %llu %d", &a, &b, &c, &removed) != 4)
		return -EPROTO;
	st->read = a;
	st->skipped = b;
	st->end = c;
	st->removed = removed != 0;
	*body = (size_t)(nl + 1 - s);
	return 0;
}

int ga_record_classify_finish(struct ga_record_job *j, double deadline_ms,
                              struct ga_buf *state, struct ga_record_stats *st)
{
	struct ga_buf in;
	char chunk[65536];
	int rc = 0, ws;
	size_t body = 0;
	struct rusage ru;
	double cpu;

	memset(st, 0, sizeof(*st));
	if (j->pid <= 0)
		return -ECHILD;
	ga_buf_init(&in);
	for (;;) {
		struct pollfd pfd = {.fd = j->fd, .events = POLLIN};
		double left = deadline_ms - ga_record_now_ms();
		ssize_t n;
		int pr;

		if (left <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		pr = poll(&pfd, 1, (int)left + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0)
			continue; /* the deadline check above ends it */
		n = read(j->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (in.len + (size_t)n > ANSWER_MAX) {
			rc = -EPROTO;
			break;
		}
		ga_buf_append(&in, chunk, (size_t)n);
	}
	/* Our own unreaped child: its pid cannot have been reused. */
	if (rc < 0)
		kill(j->pid, SIGKILL);
	memset(&ru, 0, sizeof(ru));
	while (wait4(j->pid, &ws, 0, &ru) < 0 && errno == EINTR)
		;
	cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	close(j->fd);
	j->fd = -1;
	j->pid = -1;
	if (rc == 0 &&
	    (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || !in.len || in.failed))
		rc = -EPROTO;
	if (rc == 0)
		rc = parse_counts(in.data, in.len, st, &body);
	if (rc == 0)
		ga_buf_append(state, in.data + body, in.len - body);
	st->cpu_ms = cpu;
	ga_buf_finish(&in);
	return rc;
}
