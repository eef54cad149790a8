/* SPDX-License-Identifier: MIT */
/* The task pipeline without Slurm (common/task, capture, record): each
 * case forks a "task" whose stdout/stderr are set the way slurmstepd sets
 * them (a file for sbatch, a pipe for srun), runs ga_task_begin as the
 * plugin's task_init does and execs /bin/sh; the test is the collector,
 * like slurmstepd's task_exit and exit. */
#include "collector.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "classifier.h"
#include "config.h"
#include "log.h"
#include "logfile.h"
#include "report.h"
#include "task.h"
#include "tap.h"
#include "util.h"

static char dir[256];
/* Where outputs go and the tasks run (a long path in one case). */
static const char *work = dir;
static struct ga_config cfg;
static struct ga_collector *coll;
static uint32_t next_task;
/* The task is short of address space: no room for the stack of a
 * helper sharing its memory, which is then forked. */
static bool tight_address_space;
/* Called while the task runs, once its helper has announced itself. */
static void (*on_helper)(const struct ga_task_capture *tc);

/* Where the task's stdout/stderr goes. */
enum dest { D_FILE, D_APPEND, D_PIPE, D_SOCKET, D_SPLIT_PIPES };

struct run {
	uint32_t task;
	int status;
	struct ga_task_capture *tc;
	struct ga_report rep;
	const struct ga_task_report *tr;
	char out[PATH_MAX], err[PATH_MAX];
};

static char *slurp(const char *p, size_t *len)
{
	char *text = NULL;

	*len = 0;
	if (ga_read_file(p, 1u << 30, &text, len) < 0)
		return NULL;
	return text;
}

/* A cat(1) copying FD to the file P, as srun reads its pipe. */
static pid_t reader(int fd, const char *p, int other)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fo = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 0);
		dup2(fo, 1);
		(void)other;
		close_range(3, ~0U, 0); /* no other pipe's write end */
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(fd);
	return pid;
}

/* The task: stdio set, the pipeline started, sh -c CMD.  PREP runs just
 * before exec (NULL: nothing). */
static void __attribute__((noreturn))
task_main(const char *cmd, uint32_t task, int fo, int fe)
{
	struct ga_task_ids ids = {
	        .job_id = "1",
	        .step_id = "0",
	        .task_id = task,
	        .user = "user",
	        .job_name = "t",
	        .node = "node",
	        .work_dir = work,
	        .argc = 3,
	        .argv = (char *[]){"sh", "-c", (char *)cmd, NULL},
	        .start = time(NULL),
	        .unique = true,
	};
	char job[32];

	/* One log per task: the pattern's %j is the task number here. */
	snprintf(job, sizeof(job), "%u", task);
	ids.job_id = job;
	dup2(fo, 1);
	dup2(fe, 2);
	if (fo > 2)
		close(fo);
	if (fe > 2 && fe != fo)
		close(fe);
	if (tight_address_space) {
		unsigned long pages = 0;
		FILE *f = fopen("/proc/self/statm", "re");

		if (f && fscanf(f, "%lu", &pages) == 1) {
			/* under the 1 MiB stack, over the helper's buffers */
			rlim_t as = (rlim_t)pages * 4096 + 768 * 1024;
			struct rlimit rl = {as, as};

			setrlimit(RLIMIT_AS, &rl);
		}
		if (f)
			fclose(f);
	}
	ga_task_begin(&cfg, &ids, ga_collector_task_fd(coll), NULL);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/* KILL_HELPER: SIGKILL the helper once it announced itself. */
static void run(struct run *r, const char *cmd, enum dest d, bool kill_helper,
                int kill_task_after_ms)
{
	int sv[2] = {-1, -1}, sv2[2] = {-1, -1};
	pid_t pid, rd = -1, rd2 = -1;
	struct ga_task_end end;

	memset(r, 0, sizeof(*r));
	ga_report_init(&r->rep);
	r->task = next_task++;
	snprintf(r->out, sizeof(r->out), "%s/t%u.out", work, r->task);
	snprintf(r->err, sizeof(r->err), "%s/t%u.err", work, r->task);
	if ((d == D_PIPE || d == D_SPLIT_PIPES) && pipe(sv) < 0)
		return;
	if (d == D_SPLIT_PIPES && pipe(sv2) < 0)
		return;
	if (d == D_SOCKET && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	if (sv[0] >= 0)
		rd = reader(sv[0], r->out, sv[1]);
	if (sv2[0] >= 0)
		rd2 = reader(sv2[0], r->err, sv2[1]);
	pid = fork();
	if (pid == 0) {
		int fo = sv[1], fe = sv2[1] >= 0 ? sv2[1] : sv[1];

		if (d == D_FILE || d == D_APPEND) {
			fo = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (d == D_APPEND) {
				/* sbatch --open-mode=append: a file with a
				 * head, opened O_APPEND */
				(void)!write(fo, "previous run\n", 13);
				close(fo);
				fo = open(r->out, O_WRONLY | O_APPEND);
			}
			fe = fo;
		}
		task_main(cmd, r->task, fo, fe);
	}
	if (sv[1] >= 0)
		close(sv[1]);
	if (sv2[1] >= 0)
		close(sv2[1]);
	end = (struct ga_task_end){.task_id = r->task, .node = "node"};
	if (kill_helper || on_helper) {
		for (int i = 0; i < 300; i++) {
			ga_collector_pump(coll, 10);
			r->tc = ga_collector_task(coll, r->task);
			if (r->tc && r->tc->helper_pidfd >= 0 && r->tc->started)
				break;
		}
		if (on_helper && r->tc && r->tc->helper_pidfd >= 0)
			on_helper(r->tc);
	}
	if (kill_helper) {
		usleep(100 * 1000);
		if (r->tc && r->tc->helper_pidfd >= 0)
			pidfd_send_signal(r->tc->helper_pidfd, SIGKILL, NULL,
			                  0);
	}
	if (kill_task_after_ms) {
		usleep((useconds_t)kill_task_after_ms * 1000);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
		;
	end.wstatus = r->status;
	r->tc = ga_collector_finish_task(coll, r->task, 5000, NULL);
	if (kill_task_after_ms && r->tc && r->tc->helper_pidfd >= 0)
		/* As Slurm's SIGKILL of the step cgroup would. */
		pidfd_send_signal(r->tc->helper_pidfd, SIGKILL, NULL, 0);
	if (rd > 0)
		while (waitpid(rd, NULL, 0) < 0 && errno == EINTR)
			;
	if (rd2 > 0)
		while (waitpid(rd2, NULL, 0) < 0 && errno == EINTR)
			;
	ga_task_conclude(&cfg, coll, NULL, &end, 1, getuid(), getgid(), false,
	                 &r->rep);
	r->tr = r->rep.n_tasks ? &r->rep.tasks[0] : NULL;
}

static const char *cls(const struct run *r)
{
	return r->tr ? ga_class_name(r->tr->verdict.cls) : "(none)";
}

static void done(struct run *r)
{
	ga_report_finish(&r->rep);
}

static const char *body_of(const char *log)
{
	const char *p = log ? strstr(log, GA_LOG_HEADER_END) : NULL;

	return p ? p + strlen(GA_LOG_HEADER_END) : NULL;
}

static const char *oom_cmd =
        "seq 1 300000; echo 'RuntimeError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB' >&2; echo LAST-LINE; exit 1";

static void expected(struct ga_buf *exp)
{
	ga_buf_init(exp);
	for (int i = 1; i <= 300000; i++)
		ga_buf_printf(exp, "%d\n", i);
	ga_buf_puts(exp, "RuntimeError: CUDA out of memory. Tried to "
	                 "allocate 2.00 GiB\nLAST-LINE\n");
}

/* A file output: nothing interposed, no second copy, the file classified. */
static void test_file(enum dest d, const char *name)
{
	struct ga_buf exp;
	struct run r;
	size_t len, skip = d == D_APPEND ? 13 : 0;
	char *o, logdir[PATH_MAX];
	struct stat st;

	expected(&exp);
	run(&r, oom_cmd, d, false, 0);
	o = slurp(r.out, &len);
	ok(o && len == exp.len + skip && !memcmp(o + skip, exp.data, exp.len),
	   "%s: output byte-identical (%zu bytes)", name, len);
	ok(r.tc && r.tc->mode == GA_CAPTURE_NONE && !r.tc->helper &&
	           r.tc->kind[0] == GA_FD_FILE,
	   "%s: nothing interposed, no helper", name);
	snprintf(logdir, sizeof(logdir), "%s/gpualert-%u", dir, r.task);
	ok(stat(logdir, &st) < 0 && errno == ENOENT,
	   "%s: no durable log, no folder: the file is the record", name);
	ok(r.tr && r.tr->record.present && !r.tr->record.is_log &&
	           r.tr->record.start == skip &&
	           r.tr->record.end == exp.len + skip && r.tr->log_path &&
	           !strcmp(r.tr->log_path, r.out),
	   "%s: record names the file and the byte range %llu..%llu", name,
	   r.tr ? (unsigned long long)r.tr->record.start : 0ULL,
	   r.tr ? (unsigned long long)r.tr->record.end : 0ULL);
	ok(!strcmp(cls(&r), "cuda_oom") && !r.tr->capture_error,
	   "%s: classified %s", name, cls(&r));
	free(o);
	ga_buf_finish(&exp);
	done(&r);
}

/* What a task sees of its stdout is what it had without gpualert. */
static void test_file_semantics(void)
{
	struct run r;
	char *o;
	size_t len;

	/* Reopening /dev/stdout truncates the file (a pipe would not). */
	run(&r,
	    "echo first; echo second > /dev/stdout; [ -f /dev/stdout ] && "
	    "echo is-a-file",
	    D_FILE, false, 0);
	o = slurp(r.out, &len);
	/* "second\n" at 0 (O_TRUNC), then the shell's fd 1 goes on at its
	 * own offset 6, over the newline: exactly as without gpualert. */
	ok(o && !strcmp(o, "secondis-a-file\n"),
	   "/dev/stdout reopened with O_TRUNC, [ -f /dev/stdout ] holds (%zu "
	   "bytes)",
	   o ? strlen(o) : 0);
	free(o);
	done(&r);
	/* O_NONBLOCK on stdout: a file never returns EAGAIN. */
	run(&r,
	    "python3 -c 'import os,fcntl; "
	    "fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | "
	    "os.O_NONBLOCK)' ; seq 1 200000 | tail -n 1",
	    D_FILE, false, 0);
	o = slurp(r.out, &len);
	ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && o &&
	           !strcmp(o, "200000\n"),
	   "O_NONBLOCK on a file output: no EAGAIN");
	free(o);
	done(&r);
}

/* A pipe output: interposed, the same bytes reach the reader and the log. */
static void test_pipe(enum dest d, const char *name)
{
	struct ga_buf exp;
	struct run r;
	size_t len, llen;
	char *o, *l;
	const char *body;

	expected(&exp);
	run(&r, oom_cmd, d, false, 0);
	o = slurp(r.out, &len);
	ok(o && len == exp.len && !memcmp(o, exp.data, exp.len),
	   "%s: output byte-identical (%zu bytes)", name, len);
	ok(r.tc && r.tc->mode == GA_CAPTURE_MERGED && r.tc->have_end &&
	           r.tc->bytes == exp.len && !r.tc->flags,
	   "%s: helper copied %llu bytes, flags 0x%x", name,
	   r.tc ? (unsigned long long)r.tc->bytes : 0ULL,
	   r.tc ? r.tc->flags : 0);
	l = r.tr && r.tr->log_path ? slurp(r.tr->log_path, &llen) : NULL;
	ok(r.tr && r.tr->record.is_log, "%s: the record is the log (%s)", name,
	   r.tr && r.tr->log_path ? r.tr->log_path : "none");
	/* keep = failed: a failed task's log stays. */
	body = body_of(l);
	ok(body && llen - (size_t)(body - l) == exp.len &&
	           !memcmp(body, exp.data, exp.len),
	   "%s: durable log = header + the same bytes", name);
	ok(!strcmp(cls(&r), "cuda_oom"), "%s: classified %s", name, cls(&r));
	free(o);
	free(l);
	ga_buf_finish(&exp);
	done(&r);
}

static void test_split(void)
{
	struct run r;
	size_t a, b;
	char *o, *e;

	run(&r, "echo out1; echo err1 >&2; echo out2; exit 3", D_SPLIT_PIPES,
	    false, 0);
	o = slurp(r.out, &a);
	e = slurp(r.err, &b);
	ok(o && e && !strcmp(o, "out1\nout2\n") && !strcmp(e, "err1\n"),
	   "split: stdout and stderr stay apart");
	ok(r.tc && r.tc->mode == GA_CAPTURE_SPLIT, "split: two pipes");
	ok(r.tr && r.tr->verdict.status.exit_code == 3, "split: exit 3");
	free(o);
	free(e);
	done(&r);
}

/* keep = failed: a successful task's log and folder go away. */
static void test_keep(void)
{
	struct run r;
	char logdir[PATH_MAX];
	struct stat st;

	run(&r, "echo all good", D_PIPE, false, 0);
	snprintf(logdir, sizeof(logdir), "%s/gpualert-%u", dir, r.task);
	ok(!strcmp(cls(&r), "success") && stat(logdir, &st) < 0,
	   "keep=failed: a successful step leaves no log behind");
	done(&r);
	cfg.keep_logs = GA_KEEP_ALL;
	run(&r, "echo all good", D_PIPE, false, 0);
	snprintf(logdir, sizeof(logdir), "%s/gpualert-%u", dir, r.task);
	ok(stat(logdir, &st) == 0, "keep=all: the log stays");
	cfg.keep_logs = GA_KEEP_FAILED;
	done(&r);
}

/* log_max: disk use stays bounded; the head and the newest tail stay. */
static void test_log_max(void)
{
	struct run r;
	struct stat st;
	uint64_t saved = cfg.log_max;

	cfg.log_max = 2u << 20;
	run(&r,
	    "echo FIRST-LINE; yes 'training step: loss 0.123 lr 0.001' | "
	    "head -c 60000000; echo; echo 'Traceback (most recent call "
	    "last):'; echo 'ValueError: bad shape' ; exit 1",
	    D_PIPE, false, 0);
	memset(&st, 0, sizeof(st));
	if (r.tr && r.tr->log_path)
		(void)stat(r.tr->log_path, &st);
	ok((uint64_t)st.st_blocks * 512 <= (8u << 20) &&
	           (uint64_t)st.st_blocks * 512 >= (1u << 20),
	   "log_max 2 MiB: 60 MB of output use %llu KiB of disk (%s)",
	   (unsigned long long)st.st_blocks / 2,
	   r.tr && r.tr->log_path ? r.tr->log_path : "");
	{
		size_t len = 0;
		char *l = r.tr && r.tr->log_path ? slurp(r.tr->log_path, &len)
		                                 : NULL;

		ok(l && len > 1000 && strstr(l, "FIRST-LINE") &&
		           memmem(l + len - 1000, 1000, "ValueError", 10),
		   "the log keeps its head and its newest tail");
		free(l);
	}
	ok(r.tr && r.tr->record.cut > 50000000 && !r.tr->capture_error,
	   "the middle was dropped (%llu bytes), and said",
	   r.tr ? (unsigned long long)r.tr->record.cut : 0ULL);
	ok(!strcmp(cls(&r), "code_error"), "the tail is classified: %s",
	   cls(&r));
	cfg.log_max = saved;
	done(&r);
}

/* SIGKILL of the task (time limit, OOM): the evidence is in the record. */
static void test_killed(enum dest d, const char *name)
{
	struct run r;

	run(&r,
	    "echo 'RuntimeError: CUDA error: an illegal memory access was "
	    "encountered'; exec sleep 30",
	    d, false, 400);
	ok(WIFSIGNALED(r.status) && !strcmp(cls(&r), "cuda_kernel") &&
	           r.tr->verdict.tail &&
	           strstr(r.tr->verdict.tail, "illegal memory access"),
	   "%s: SIGKILLed task: verdict %s and tail from the record", name,
	   cls(&r));
	done(&r);
}

/* The job kills its helper: reported, and the log keeps what it had. */
static void test_helper_killed(void)
{
	struct run r;

	run(&r,
	    "sleep 0.5; echo 'ModuleNotFoundError: No module named x'; "
	    "exit 1",
	    D_PIPE, true, 0);
	ok(r.tr && r.tr->capture_error,
	   "helper killed: the report says so (%s)",
	   r.tr && r.tr->capture_error ? r.tr->capture_error : "nothing");
	done(&r);
}

/* A working directory and output paths near PATH_MAX: the start message
 * still fits, and the record is there. */
static void test_long_paths(void)
{
	static char deep[PATH_MAX];
	size_t n = (size_t)snprintf(deep, sizeof(deep), "%s", dir);
	struct run r;

	while (n + 256 < PATH_MAX - 300) {
		deep[n++] = '/';
		memset(deep + n, 'd', 250);
		n += 250;
		deep[n] = '\0';
		mkdir(deep, 0755);
	}
	work = deep;
	run(&r, "echo 'ModuleNotFoundError: No module named x' >&2; exit 1",
	    D_FILE, false, 0);
	ok(r.tr && r.tr->record.present && !strcmp(cls(&r), "import_error"),
	   "a %zu-byte working directory: recorded and classified (%s)", n,
	   cls(&r));
	work = dir;
	done(&r);
}

/* A helper message carrying a pidfd of another process is refused: root
 * must never be made to signal it. */
static void test_forged_pidfd(void)
{
	int sock = ga_collector_task_fd(coll);
	pid_t victim = fork();
	pid_t sender;
	struct ga_task_capture *tc;
	uint32_t task = next_task++;

	if (victim == 0) {
		pause();
		_exit(0);
	}
	sender = fork();
	if (sender == 0) {
		char msg[64];
		int pfd = pidfd_open(victim, 0);
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} ctl;
		struct iovec iov;
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		struct cmsghdr *cm;

		snprintf(msg, sizeof(msg), "GA2 H %u\n", task);
		iov = (struct iovec){msg, strlen(msg)};
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pfd, sizeof(int));
		_exit(sendmsg(sock, &mh, 0) < 0);
	}
	waitpid(sender, NULL, 0);
	ga_collector_pump(coll, 200);
	tc = ga_collector_task(coll, task);
	ok(!tc || tc->helper_pidfd < 0,
	   "a pidfd of another process is refused as a helper's");
	(void)ga_collector_finish_task(coll, task, 300, NULL);
	ok(waitpid(victim, NULL, WNOHANG) == 0,
	   "and the other process was not signalled");
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
}

/* gpualert's log lines, from the tasks too (they are forks of this
 * process), appended to a file. */
static char log_lines[PATH_MAX];

static void file_sink(enum ga_log_level level, const char *msg, void *ctx)
{
	FILE *f = fopen(log_lines, "a");

	(void)level;
	(void)ctx;
	if (f) {
		fprintf(f, "%s\n", msg);
		fclose(f);
	}
}

static bool logged(const char *text)
{
	size_t len;
	char *l = slurp(log_lines, &len);
	bool found = l && strstr(l, text);

	free(l);
	return found;
}

/* What test_sibling saw of the helper while its task ran. */
static pid_t sibling_ppid = -1;
static char sibling_comm[64];

static void inspect_sibling(const struct ga_task_capture *tc)
{
	pid_t hp = ga_pidfd_pid(tc->helper_pidfd);
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)hp);
	f = hp > 0 ? fopen(path, "re") : NULL;
	if (f &&
	    fscanf(f, "%*d (%63[^)]) %*c %d", sibling_comm, &sibling_ppid) != 2)
		sibling_ppid = -1;
	if (f)
		fclose(f);
}

/* The helper of a task that execs next is a sibling of the task: a child
 * of the task's parent (here, this process), named gpualert-helper,
 * reaped by ga_collector_finish_task, never left for the parent's wait
 * loop. */
static void test_sibling(void)
{
	struct run r;
	char *o;
	size_t len;
	siginfo_t si;
	pid_t left;

	on_helper = inspect_sibling;
	run(&r, "sleep 0.5; echo 'Segmentation fault (core dumped)'; exit 139",
	    D_PIPE, false, 0);
	on_helper = NULL;
	ok(sibling_ppid == getpid(),
	   "sibling helper: a child of the task's parent (ppid %d, us %d)",
	   (int)sibling_ppid, (int)getpid());
	ok(!strcmp(sibling_comm, "gpualert-helper"), "sibling helper: named %s",
	   sibling_comm);
	memset(&si, 0, sizeof(si));
	left = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0
	               ? si.si_pid
	               : 0;
	ok(left == 0,
	   "sibling helper: reaped by finish_task, no child left (pid %d)",
	   (int)left);
	o = slurp(r.out, &len);
	ok(o && strstr(o, "Segmentation fault"),
	   "sibling helper: the output reached its reader");
	ok(r.tr && !strcmp(cls(&r), "segfault") && !r.tr->capture_error,
	   "sibling helper: classified (%s)", cls(&r));
	free(o);
	done(&r);
	ok(!logged("forked one instead"),
	   "every helper so far was a sibling, none forked");
}

/* A task whose address space has no room for the helper's stack: the
 * helper is forked instead, nothing is lost, and the log says so. */
static void test_forked(void)
{
	struct run r;
	char *o;
	size_t len;

	tight_address_space = true;
	run(&r,
	    "echo 'ModuleNotFoundError: No module named flash_attn'; "
	    "exit 1",
	    D_PIPE, false, 0);
	tight_address_space = false;
	o = slurp(r.out, &len);
	ok(o && strstr(o, "No module named flash_attn"),
	   "forked helper: the output still reaches its reader");
	ok(r.tc && r.tc->helper && r.tc->have_end && r.tr &&
	           !r.tr->capture_error && !strcmp(cls(&r), "import_error"),
	   "forked helper: it captured the output (%s)", cls(&r));
	ok(logged("cannot start a capture helper in the task's memory"),
	   "forked helper: the log says why");
	free(o);
	done(&r);
}

int main(void)
{
	enum ga_log_level level = ga_log_get_level();

	snprintf(dir, sizeof(dir), "/tmp/ga-capture-XXXXXX");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	signal(SIGPIPE, SIG_IGN);
	ga_config_init(&cfg);
	ga_config_set(&cfg, "rules_dir", "", "test", NULL);
	coll = ga_collector_create(getuid());
	if (!coll)
		tap_skip_all("no collector");
	/* What the pipeline logs, for the checks that it said why */
	snprintf(log_lines, sizeof(log_lines), "%s/log-lines", dir);
	ga_log_set_sink(file_sink, NULL);
	ga_log_set_level(GA_LOG_INFO);
	test_file(D_FILE, "file");
	test_file(D_APPEND, "append");
	test_file_semantics();
	test_pipe(D_PIPE, "pipe");
	test_pipe(D_SOCKET, "socket");
	test_split();
	test_keep();
	test_log_max();
	test_killed(D_FILE, "file");
	test_killed(D_PIPE, "pipe");
	test_helper_killed();
	test_forged_pidfd();
	test_long_paths();
	test_sibling();
	test_forked();
	ga_log_set_sink(NULL, NULL);
	ga_log_set_level(level);
	ga_collector_destroy(coll);
	ga_config_finish(&cfg);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return tap_done();
}
