/* common/capture: the task/helper/collector triangle without Slurm.
 *
 * Each case forks a "task" that sets its stdout/stderr to files (as
 * slurmstepd does), starts the capture and execs /bin/sh; the test is the
 * collector, like slurmstepd's task_exit. */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "classifier.h"
#include "logfile.h"
#include "rules.h"
#include "tap.h"

static char dir[256];
static struct ga_collector *coll;
static uint32_t next_task;
/* Per-task log names: the zero-copy path may write them at its offsets. */
static bool private_log = true;

/* Where the task's stdout/stderr goes (run_dest). */
enum dest { D_FILE, D_APPEND, D_PIPE, D_SOCKET };

struct run {
	uint32_t task;
	int status;
	struct ga_task_capture *tc;
	double waited;
	double wall;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

/* In a forked child: create the durable log PL with its header, point
 * fd 1 and 2 at FO and FE, start the capture as the plugin's task_init
 * does, and exec sh -c CMD.  FSIZE (bytes, 0: none) then limits the files
 * the task and its helper may write (EFBIG, not SIGXFSZ). */
static void __attribute__((noreturn))
exec_captured(const char *cmd, const char *pl, uint32_t task, int fo, int fe,
              long fsize)
{
	int lf = ga_logfile_open(pl, 0600);
	enum ga_capture_mode mode;
	const char *why;
	struct ga_capture_opts o = {
	        .task_id = task,
	        .log_fd = lf,
	        .log_private = private_log,
	        .sock_fd = ga_collector_task_fd(coll),
	        .classify = true,
	        .max_rss = 256u << 20,
	        .work_dir = dir,
	};
	struct ga_log_header h = {"1",
	                          "0",
	                          task,
	                          "node",
	                          "user",
	                          3,
	                          (char *[]){"sh", "-c", (char *)cmd, NULL},
	                          time(NULL),
	                          "test"};

	ga_logfile_write_header(lf, &h);
	if (fsize) {
		struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};

		signal(SIGXFSZ, SIG_IGN); /* EFBIG instead */
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	dup2(fo, 1);
	dup2(fe, 2);
	ga_capture_start(&o, &mode, &why);
	close(lf);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/* KILL_HELPER: SIGKILL the helper as soon as it announced itself. */
static struct run run_task(const char *cmd, const char *out, const char *err,
                           const char *log, bool kill_helper)
{
	struct run r = {.task = next_task++};
	char po[PATH_MAX], pe[PATH_MAX], pl[PATH_MAX];
	double t0 = now();
	pid_t pid;

	path(po, out);
	path(pe, err ? err : out);
	path(pl, log);
	unlink(pl); /* a rerun under the same name starts afresh */
	pid = fork();
	if (pid == 0) {
		int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = err ? open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644)
		             : fo;

		exec_captured(cmd, pl, r.task, fo, fe, 0);
	}
	if (kill_helper) {
		for (int i = 0; i < 200; i++) {
			ga_collector_pump(coll, 10);
			r.tc = ga_collector_task(coll, r.task);
			if (r.tc && r.tc->started)
				break;
		}
		/* After the task has been released (killing the helper
		 * before that only makes the task run uncaptured). */
		usleep(100 * 1000);
		if (r.tc && r.tc->helper)
			kill(r.tc->helper, SIGKILL);
	}
	while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR)
		;
	r.tc = ga_collector_finish_task(coll, r.task, 5000, &r.waited);
	r.wall = now() - t0;
	return r;
}

/* Merged capture of CMD to OUT through DEST (a pipe or socket is read by
 * a cat(1) into OUT, as srun reads its pipe).  FSIZE (bytes, 0: none)
 * limits the files the task and its helper may write: the log fails
 * there (EFBIG) while the output, a pipe, goes on. */
static struct run run_dest(const char *cmd, const char *out, const char *log,
                           enum dest d, long fsize)
{
	struct run r = {.task = next_task++};
	char po[PATH_MAX], pl[PATH_MAX];
	int sv[2] = {-1, -1};
	pid_t pid, reader = -1;
	double t0 = now();

	path(po, out);
	path(pl, log);
	unlink(pl);
	if (d == D_PIPE && pipe(sv) < 0)
		return r;
	if (d == D_SOCKET && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return r;
	if (sv[0] >= 0) {
		reader = fork();
		if (reader == 0) {
			int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			dup2(sv[0], 0);
			dup2(fo, 1);
			close(sv[1]);
			execl("/bin/cat", "cat", (char *)NULL);
			_exit(127);
		}
		close(sv[0]);
	}
	pid = fork();
	if (pid == 0) {
		int fo = sv[1];

		if (d == D_FILE || d == D_APPEND) {
			fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (d == D_APPEND) {
				/* sbatch --open-mode=append: a file with a
				 * head, opened O_APPEND */
				(void)!write(fo, "previous run\n", 13);
				close(fo);
				fo = open(po, O_WRONLY | O_APPEND);
			}
		}
		exec_captured(cmd, pl, r.task, fo, fo, fsize);
	}
	if (sv[1] >= 0)
		close(sv[1]);
	while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR)
		;
	r.tc = ga_collector_finish_task(coll, r.task, 5000, &r.waited);
	if (reader > 0)
		while (waitpid(reader, NULL, 0) < 0 && errno == EINTR)
			;
	r.wall = now() - t0;
	return r;
}

static char *slurp(const char *name, size_t *len)
{
	char p[PATH_MAX];
	char *text = NULL;

	path(p, name);
	if (ga_read_file(p, 1u << 30, &text, len) < 0)
		return NULL;
	return text;
}

static const char *verdict_class(const struct run *r)
{
	static char name[64];
	struct ga_ruleset *rs = ga_rules_load(NULL, NULL, NULL);
	struct ga_classifier *c = ga_classifier_create(rs);
	struct ga_verdict v;
	struct ga_status st;
	const char *err;

	ga_verdict_init(&v);
	ga_status_from_wait(&st, r->status);
	snprintf(name, sizeof(name), "(no state)");
	if (r->tc && r->tc->have_state &&
	    ga_classifier_read_state(c, r->tc->state, r->tc->state_len, &err) ==
	            0) {
		ga_classifier_finish(c, &st, &v);
		snprintf(name, sizeof(name), "%s", ga_class_name(v.cls));
	}
	ga_verdict_finish(&v);
	ga_classifier_destroy(c);
	ga_ruleset_destroy(rs);
	return name;
}

/* The log minus its header. */
static const char *log_body(const char *log)
{
	const char *p = log ? strstr(log, GA_LOG_HEADER_END) : NULL;

	return p ? p + strlen(GA_LOG_HEADER_END) : NULL;
}

static void test_large(void)
{
	size_t olen = 0, llen = 0, elen = 0;
	struct ga_buf exp;
	struct run r;
	char *out, *log;
	const char *body;

	ga_buf_init(&exp);
	for (int i = 1; i <= 1000000; i++)
		ga_buf_printf(&exp, "%d\n", i);
	ga_buf_puts(&exp, "LAST-LINE\n");
	r = run_task("seq 1 1000000; echo LAST-LINE", "large.out", NULL,
	             "large.log", false);
	out = slurp("large.out", &olen);
	log = slurp("large.log", &llen);
	body = log_body(log);
	elen = exp.len;
	ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0,
	   "1,000,000 lines: task exit 0");
	ok(out && olen == elen && !memcmp(out, exp.data, elen),
	   "1,000,000 lines: output byte-identical (%zu bytes)", olen);
	ok(body && (size_t)(llen - (size_t)(body - log)) == elen &&
	           !memcmp(body, exp.data, elen),
	   "1,000,000 lines: durable log = header + the same bytes");
	ok(r.tc && r.tc->have_state && r.tc->bytes == elen,
	   "helper reported %llu bytes",
	   r.tc ? (unsigned long long)r.tc->bytes : 0ULL);
	ok(r.tc && r.tc->mode == GA_CAPTURE_MERGED,
	   "same file on fd 1 and 2: one pipe");
	printf("# 1M lines: wall %.3f s, collector waited %.2f ms after exit\n",
	       r.wall, r.waited);
	free(out);
	free(log);
	ga_buf_finish(&exp);
}

/* The zero-copy path to each kind of destination, and its fallbacks. */
static void test_dest(enum dest d, const char *name, long fsize)
{
	static const char *cmd =
	        "seq 1 500000; echo 'RuntimeError: CUDA out of memory. "
	        "Tried to allocate 2.00 GiB' >&2; echo LAST-LINE; exit 1";
	char out[64], log[64];
	size_t olen = 0, llen = 0, skip = 0;
	struct ga_buf exp;
	struct run r;
	char *o, *l;
	const char *body;

	ga_buf_init(&exp);
	for (int i = 1; i <= 500000; i++)
		ga_buf_printf(&exp, "%d\n", i);
	ga_buf_puts(
	        &exp,
	        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
	        "LAST-LINE\n");
	snprintf(out, sizeof(out), "dest-%s.out", name);
	snprintf(log, sizeof(log), "dest-%s.log", name);
	r = run_dest(cmd, out, log, d, fsize);
	o = slurp(out, &olen);
	l = slurp(log, &llen);
	body = log_body(l);
	if (d == D_APPEND)
		skip = 13; /* "previous run\n" */
	ok(o && olen == exp.len + skip &&
	           !memcmp(o + skip, exp.data, exp.len) &&
	           (!skip || !memcmp(o, "previous run\n", skip)),
	   "%s: output byte-identical (%zu bytes)", name, olen);
	ok(r.tc && r.tc->have_state && r.tc->bytes == exp.len &&
	           !(r.tc->flags & GA_CAPTURE_F_OUT_LOST),
	   "%s: helper copied %llu bytes, flags 0x%x", name,
	   r.tc ? (unsigned long long)r.tc->bytes : 0ULL,
	   r.tc ? r.tc->flags : 0);
	if (!fsize) {
		ok(body && llen - (size_t)(body - l) == exp.len &&
		           !memcmp(body, exp.data, exp.len),
		   "%s: durable log = header + the same bytes", name);
		ok(!strcmp(verdict_class(&r), "cuda_oom"), "%s: classified %s",
		   name, verdict_class(&r));
	} else {
		size_t blen = body ? llen - (size_t)(body - l) : 0;

		ok(r.tc && (r.tc->flags & GA_CAPTURE_F_LOG_LOST) && body &&
		           blen < exp.len && !memcmp(body, exp.data, blen),
		   "%s: the log stops where it failed (%zu bytes), a clean prefix",
		   name, blen);
		ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1,
		   "%s: the task ran on unaffected (status 0x%x)", name,
		   r.status);
	}
	free(o);
	free(l);
	ga_buf_finish(&exp);
}

static void test_binary(void)
{
	size_t a = 0, b = 0;
	char *src, *out;
	char cmd[PATH_MAX * 2];
	char p[PATH_MAX];
	struct run r;

	path(p, "random.bin");
	snprintf(cmd, sizeof(cmd), "head -c 20000000 /dev/urandom > '%s'", p);
	(void)!system(cmd);
	snprintf(cmd, sizeof(cmd), "cat '%s'", p);
	r = run_task(cmd, "bin.out", NULL, "bin.log", false);
	src = slurp("random.bin", &a);
	out = slurp("bin.out", &b);
	ok(src && out && a == b && !memcmp(src, out, a) && r.tc &&
	           r.tc->bytes == a,
	   "20 MB of random bytes copied byte for byte");
	free(src);
	free(out);
}

static void test_merged_order(void)
{
	struct ga_buf exp;
	size_t len = 0;
	char *out;

	ga_buf_init(&exp);
	for (int i = 0; i < 300; i++)
		ga_buf_printf(&exp, "o%d\ne%d\n", i, i);
	run_task(
	        "i=0; while [ $i -lt 300 ]; do echo o$i; echo e$i >&2; i=$((i+1)); done",
	        "merged.out", NULL, "merged.log", false);
	out = slurp("merged.out", &len);
	ok(out && len == exp.len && !memcmp(out, exp.data, len),
	   "merged: stdout/stderr order preserved in the shared file");
	free(out);
	ga_buf_finish(&exp);
}

static void test_split(void)
{
	size_t lo = 0, le = 0, ll = 0;
	char *o, *e, *l;
	const char *body;
	struct run r;
	int lines_ok = 1;

	r = run_task(
	        "i=0; while [ $i -lt 2000 ]; do echo out-line-$i; echo err-line-$i >&2; "
	        "i=$((i+1)); done",
	        "split.out", "split.err", "split.log", false);
	o = slurp("split.out", &lo);
	e = slurp("split.err", &le);
	l = slurp("split.log", &ll);
	body = log_body(l);
	ok(r.tc && r.tc->mode == GA_CAPTURE_SPLIT,
	   "different files: two pipes");
	ok(o && e && !strstr(o, "err-") && !strstr(e, "out-") &&
	           strstr(o, "out-line-1999\n") && strstr(e, "err-line-1999\n"),
	   "split: stdout and stderr stay in their own files");
	/* Every log line is a whole line of one stream. */
	for (const char *p = body; p && *p && lines_ok;) {
		const char *nl = strchr(p, '\n');

		if (!nl ||
		    (strncmp(p, "out-line-", 9) && strncmp(p, "err-line-", 9)))
			lines_ok = 0;
		p = nl ? nl + 1 : NULL;
	}
	ok(body && lines_ok && ll - (size_t)(body - l) == lo + le,
	   "split: the log has both streams, whole lines, nothing lost");
	free(o);
	free(e);
	free(l);
}

static void test_background(void)
{
	size_t len = 0;
	char *out;
	struct run r = run_task("sleep 30 & echo bye", "bg.out", NULL, "bg.log",
	                        false);

	out = slurp("bg.out", &len);
	ok(r.tc && r.tc->have_state && r.waited < 1000,
	   "a background child holding the pipe: drained in %.1f ms", r.waited);
	ok(r.tc && (r.tc->flags & GA_CAPTURE_F_DRAINED), "reported as drained");
	ok(out && !strcmp(out, "bye\n"), "its output arrived");
	free(out);
	(void)!system("pkill -x -f 'sleep 30' 2>/dev/null");
}

static void test_fast_exit(void)
{
	struct run r = run_task("exec /nonexistent/program", "exec.out", NULL,
	                        "exec.log", false);
	size_t len = 0;
	char *log = slurp("exec.log", &len);

	ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 127,
	   "exec failure: status 127");
	ok(log && strstr(log, GA_LOG_HEADER_END) && strstr(log, "nonexistent"),
	   "exec failure: the log has the header and the shell's message");
	ok(r.tc && r.tc->have_state, "exec failure: state arrived");
	free(log);
}

static void test_classify(void)
{
	struct run r = run_task(
	        "echo step 1; echo 'RuntimeError: CUDA out of memory. "
	        "Tried to allocate 2.00 GiB' >&2; exit 1",
	        "oom.out", NULL, "oom.log", false);

	ok(!strcmp(verdict_class(&r), "cuda_oom"),
	   "classified through the helper's state: %s", verdict_class(&r));
	r = run_task("echo fine", "ok.out", NULL, "ok.log", false);
	ok(!strcmp(verdict_class(&r), "success"), "success: %s",
	   verdict_class(&r));
}

static void test_helper_killed(void)
{
	struct run r = run_task(
	        "echo first; sleep 0.3; echo second; echo third", "killed.out",
	        NULL, "killed.log", true);

	/* Documented behaviour: like tee(1) going away, the task's next
	 * write gets SIGPIPE (srun: "Broken pipe", rc 141). */
	ok(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGPIPE,
	   "helper killed: the task's next write gets SIGPIPE (status 0x%x)",
	   r.status);
	ok(r.tc && r.tc->started && !r.tc->have_state && r.waited < 1000,
	   "helper killed: the collector notices in %.1f ms, no state",
	   r.waited);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/ga-capture-XXXXXX");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	signal(SIGPIPE, SIG_DFL);
	coll = ga_collector_create(false, getuid());
	if (!coll)
		tap_skip_all("socketpair failed");
	test_large();
	private_log = false; /* the read/write loop, as for a shared log */
	test_large();
	test_classify();
	private_log = true;
	test_dest(D_FILE, "file", 0);
	test_dest(D_APPEND, "append", 0);
	test_dest(D_PIPE, "pipe", 0);
	test_dest(D_SOCKET, "socket", 0);
	test_dest(D_PIPE, "log-full", 1 << 20);
	test_binary();
	test_merged_order();
	test_split();
	test_background();
	test_fast_exit();
	test_classify();
	test_helper_killed();
	ga_collector_destroy(coll);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return tap_done();
}
