/* SPDX-License-Identifier: MIT */
/* slurmstepd: a durable record for every task, verdicts and one report
 * per step.
 *
 * Order of events in slurmstepd: init (root) creates the collector
 * socket; user_init (euid = user) reads --gpualert; task_init (in each
 * forked task, as the user, before exec) records the task's output file,
 * or creates the durable log and interposes where the output is a pipe
 * (common/task.h); task_exit (root, per task, after waitpid) gets the
 * wait status and the cgroup OOM count, and lets a capture helper drain;
 * exit (root, once, after Slurm has killed what was left of the step)
 * hands the step to a report process of its own, which reads every task's
 * record as the job's user and spools the report while slurmstepd ends.
 * Nothing here may change the job's exit code, state or output: errors
 * are logged to slurmd.log and the hooks return 0.
 *
 * Identity (uid, gid, job, step, array ids) comes only from
 * spank_get_item and the password database: the job's environment is the
 * submitter's to set (SLURM_JOB_USER, SLURM_ARRAY_JOB_ID... can be
 * forged at sbatch time), so it names nothing security-relevant.
 */
#include "plugin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifacts.h"
#include "collector.h"
#include "ga-config.h"
#include "log.h"
#include "option.h"
#include "report.h"
#include "spool.h"
#include "task.h"
#include "util.h"

/* How long a report process waits for slurmstepd to exit before it
 * starts anyway: slurmstepd normally exits within tens of ms of
 * slurm_spank_exit, and a stuck one (unkillable processes) only delays
 * the report. */
#define REPORT_WAIT_MS 10000
/* And then how long it leaves srun, slurmd and the controller to finish
 * the step's completion (milliseconds after slurmstepd's exit). */
#define REPORT_SETTLE_MS 1000

struct task_rec {
	uint32_t id; /* global rank */
	uint32_t local_id;
	int wstatus;
	bool exited;
	double start, end; /* CLOCK_REALTIME */
	int oom_kills;
};

static struct {
	bool active;
	struct ga_alert alert;
	struct ga_collector *coll;
	uint32_t job_id, step_id;
	uid_t uid;
	gid_t gid;
	char job[32], step[32];
	char node[256], user[64], job_name[256];
	char array_job[32], array_task[32];
	char *command;
	double start;
	struct task_rec *tasks;
	size_t n, cap;
	bool sched_queried;
	bool array_claimed; /* an srun step said it is an array task */
	enum ga_sched_state sched;
} R;

/* A job-environment value, for display only: the submitter sets it.
 * Control characters become '?' (every renderer escapes the rest for
 * its own markup); SAFE: bytes outside [A-Za-z0-9._+-] become '_' too,
 * for values that end up in file names. */
static void getenv_into(spank_t sp, const char *var, char *buf, size_t size,
                        bool safe)
{
	buf[0] = '\0';
	if (spank_getenv(sp, var, buf, (int)size) != ESPANK_SUCCESS)
		buf[0] = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
		else if (safe && !ga_char_safe(*c, "._+-"))
			*c = '_';
}

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The job user's name from the password database, by the uid Slurm
 * vouches for; the uid in decimal when there is none. */
static void user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char tmp[4096];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, size, "%s", res->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)uid);
}

static struct task_rec *task_rec(uint32_t id)
{
	for (size_t i = 0; i < R.n; i++)
		if (R.tasks[i].id == id)
			return &R.tasks[i];
	if (R.n == R.cap) {
		size_t ncap = R.cap ? 2 * R.cap : 16;
		struct task_rec *nt = realloc(R.tasks, ncap * sizeof(*nt));

		if (!nt)
			return NULL;
		R.tasks = nt;
		R.cap = ncap;
	}
	memset(&R.tasks[R.n], 0, sizeof(R.tasks[0]));
	R.tasks[R.n].id = id;
	return &R.tasks[R.n++];
}

static char *join_argv(int argc, char **argv)
{
	struct ga_buf b;

	ga_buf_init(&b);
	for (int i = 0; i < argc && argv[i] && b.len < 4096; i++) {
		if (i)
			ga_buf_putc(&b, ' ');
		ga_buf_puts(&b, argv[i]);
	}
	return ga_buf_steal(&b);
}

/* slurm_spank_init, remote, root: the socket must exist before the tasks
 * fork, and only root can enlarge its buffers (SO_SNDBUFFORCE) for big
 * classifier states. */
static void remote_init(spank_t sp)
{
	if (R.coll)
		return;
	if (spank_get_item(sp, S_JOB_UID, &R.uid) != ESPANK_SUCCESS)
		return;
	R.coll = ga_collector_create(R.uid);
	if (!R.coll)
		ga_log(GA_LOG_ERROR,
		       "gpualert: init: cannot create the collector "
		       "socket: %s",
		       strerror(errno));
}

int ga_remote_user_init(spank_t sp)
{
	struct ga_plugin *p = &ga_plugin_state;
	char *optval = NULL, err[512];
	const char *value = NULL;
	int argc = 0, rc;
	char **argv = NULL;
	uint32_t array_id = 0, array_task = 0;
	static struct spank_option probe = {"gpualert", "MODE", "", 2, 0, NULL};

	remote_init(sp);
	R.start = now_real();
	if (spank_get_item(sp, S_JOB_ID, &R.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &R.step_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &R.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &R.gid) != ESPANK_SUCCESS) {
		ga_log(GA_LOG_ERROR, "gpualert: user_init: Slurm did not give "
		                     "the job's ids: gpualert is off for this "
		                     "step");
		ga_collector_destroy(R.coll);
		R.coll = NULL;
		return 0;
	}
	snprintf(R.job, sizeof(R.job), "%u", R.job_id);
	if (R.step_id == SLURM_BATCH_SCRIPT)
		snprintf(R.step, sizeof(R.step), "batch");
	else
		snprintf(R.step, sizeof(R.step), "%u", R.step_id);
	/* A job that is not an array task has its own id as array id and
	 * NO_VAL as task id.  Only a batch step's come from the controller;
	 * an srun step's are srun's to say (it takes them from the
	 * submitter's environment), so exit checks a claimed array with the
	 * controller.  A claim left out only loses the grouping. */
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_id) == ESPANK_SUCCESS &&
	    spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) ==
	            ESPANK_SUCCESS &&
	    array_id != 0 && array_task != NO_VAL && array_task != INFINITE) {
		if (R.step_id == SLURM_BATCH_SCRIPT) {
			snprintf(R.array_job, sizeof(R.array_job), "%u",
			         array_id);
			snprintf(R.array_task, sizeof(R.array_task), "%u",
			         array_task);
		} else {
			R.array_claimed = true;
		}
	}
	user_name(R.uid, R.user, sizeof(R.user));
	getenv_into(sp, "SLURMD_NODENAME", R.node, sizeof(R.node), true);
	if (!R.node[0])
		gethostname(R.node, sizeof(R.node) - 1);
	getenv_into(sp, "SLURM_JOB_NAME", R.job_name, sizeof(R.job_name),
	            false);
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS)
		R.command = join_argv(argc, argv);

	/* The value comes from the user's environment: check it again. */
	if (spank_option_getopt(sp, &probe, &optval) == ESPANK_SUCCESS)
		value = optval ? optval : "email";
	else if (p->opt_seen)
		value = p->opt_value ? p->opt_value : "email";
	rc = ga_alert_parse(value, &p->cfg, R.user, &R.alert, err, sizeof(err));
	if (rc < 0) {
		/* Bypassed the submission check: keep the record and report,
		 * and say once, to the user, that no mail will come. */
		slurm_spank_log(
		        "gpualert: --gpualert: %s; this step gets a report but "
		        "no notification",
		        err[0] ? err : "out of memory");
		ga_alert_parse("log", &p->cfg, R.user, &R.alert, err,
		               sizeof(err));
	}
	R.active = R.alert.mode != GA_MODE_OFF && R.coll;
	if (!R.active && R.coll) {
		ga_collector_destroy(R.coll);
		R.coll = NULL;
	}
	return 0;
}

int ga_remote_task_init(spank_t sp)
{
	struct ga_plugin *p = &ga_plugin_state;
	char cwd[PATH_MAX];
	uint32_t gtid = 0;
	int argc = 0;
	char **argv = NULL;
	struct ga_task_ids ids;

	if (!R.active)
		return 0;
	spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid);
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS) {
		argc = 0;
		argv = NULL;
	}
	ids = (struct ga_task_ids){
	        .job_id = R.job,
	        .step_id = R.step,
	        .task_id = gtid,
	        .user = R.user,
	        .job_name = R.job_name,
	        .node = R.node,
	        .work_dir = cwd,
	        .argc = argc,
	        .argv = argv,
	        .start = time(NULL),
	        .unique = true, /* Slurm's job, step and task ids */
	};
	ga_task_begin(&p->cfg, &ids, ga_collector_task_fd(R.coll), NULL);
	return 0;
}

int ga_remote_task_post_fork(spank_t sp)
{
	uint32_t gtid;
	struct task_rec *t;

	if (!R.active ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid) != ESPANK_SUCCESS)
		return 0;
	t = task_rec(gtid);
	if (t)
		t->start = now_real();
	return 0;
}

/* cgroup v1 keeps an oom_kill counter per task cgroup in
 * memory.oom_control; it is not hierarchical, so only the task's own
 * cgroup counts its kills (the step's and job's say 0).  In task_exit the
 * controller does not know of the OOM yet; the counter does.  Absent file
 * (no cgroup, or v2) = 0. */
static int read_oom_kills(uint32_t local_id)
{
	char path[PATH_MAX], line[128], host[256] = "";
	const char *names[2] = {R.node, host};
	int kills = 0;

	gethostname(host, sizeof(host) - 1);
	for (int i = 0; i < 2; i++) {
		FILE *f;

		snprintf(
		        path, sizeof(path),
		        "/sys/fs/cgroup/memory/slurm_%s/uid_%u/job_%u/step_%s/task_%u/memory.oom_control",
		        names[i], (unsigned)R.uid, R.job_id, R.step, local_id);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "oom_kill %d", &kills) == 1)
				break;
		fclose(f);
		return kills;
	}
	return 0;
}

/* Once per step and node, and only after a signal death: one RPC to
 * slurmctld (about 2 ms on a local controller).  In task_exit the job
 * already shows TIMEOUT/CANCELLED/PREEMPTED (as COMPLETING | state), and
 * a time limit has state_reason FAIL_TIMEOUT ("TimeLimit", 25). */
static void query_scheduler(void)
{
	job_info_msg_t *msg = NULL;

	R.sched_queried = true;
	if (slurm_load_job(&msg, R.job_id, SHOW_ALL) != 0 || !msg) {
		ga_log(GA_LOG_INFO,
		       "gpualert: task_exit: slurm_load_job(%u) failed",
		       R.job_id);
		return;
	}
	if (msg->record_count > 0) {
		job_info_t *j = &msg->job_array[0];

		/* The controller's array ids: an srun step's own come from
		 * srun, which takes them from the submitter's environment. */
		R.array_job[0] = R.array_task[0] = '\0';
		if (j->array_job_id && j->array_task_id != NO_VAL &&
		    j->array_task_id != INFINITE) {
			snprintf(R.array_job, sizeof(R.array_job), "%u",
			         j->array_job_id);
			snprintf(R.array_task, sizeof(R.array_task), "%u",
			         j->array_task_id);
		}

		switch (j->job_state & JOB_STATE_BASE) {
		case JOB_TIMEOUT:
			R.sched = GA_STATE_TIMEOUT;
			break;
		case JOB_CANCELLED:
			R.sched = GA_STATE_CANCELLED;
			break;
		case JOB_PREEMPTED:
			R.sched = GA_STATE_PREEMPTED;
			break;
		case JOB_NODE_FAIL:
			R.sched = GA_STATE_NODE_FAIL;
			break;
		case JOB_DEADLINE:
			R.sched = GA_STATE_DEADLINE;
			break;
		case JOB_OOM:
			R.sched = GA_STATE_OUT_OF_MEMORY;
			break;
		default:
			break;
		}
		if (j->state_reason == FAIL_TIMEOUT)
			R.sched = GA_STATE_TIMEOUT;
	}
	slurm_free_job_info_msg(msg);
}

int ga_remote_task_exit(spank_t sp)
{
	struct ga_plugin *p = &ga_plugin_state;
	uint32_t gtid = 0, ltid = 0;
	struct task_rec *t;
	int ws = 0;
	double waited = 0;
	char node[256];
	struct ga_task_capture *tc;

	if (!R.active)
		return 0;
	spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid);
	spank_get_item(sp, S_TASK_ID, &ltid);
	spank_get_item(sp, S_TASK_EXIT_STATUS, &ws);
	t = task_rec(gtid);
	if (!t)
		return 0;
	/* SLURMD_NODENAME is in the job environment only once the tasks are
	 * launched; user_init may have fallen back to the host name. */
	getenv_into(sp, "SLURMD_NODENAME", node, sizeof(node), true);
	if (node[0])
		snprintf(R.node, sizeof(R.node), "%s", node);
	t->local_id = ltid;
	t->wstatus = ws;
	t->exited = true;
	t->end = now_real();
	t->oom_kills = read_oom_kills(ltid);
	ga_plugin_sample_memory(R.node, (uint32_t)R.uid, R.job_id);
	/* Wait (bounded) for the helper: after the last task_exit Slurm
	 * kills whatever is left in the step cgroup, helper included. */
	tc = ga_collector_finish_task(R.coll, gtid,
	                              (int)p->cfg.drain_timeout_ms, &waited);
	ga_log(GA_LOG_INFO,
	       "gpualert: task_exit: task %u status 0x%x, capture %s, waited "
	       "%.1f ms (%llu bytes copied, helper peak RSS %llu KiB)",
	       gtid, (unsigned)ws,
	       tc ? ga_capture_mode_name(tc->mode) : "unannounced", waited,
	       tc ? (unsigned long long)tc->bytes : 0ULL,
	       tc ? (unsigned long long)tc->helper_maxrss_kib : 0ULL);
	if (WIFSIGNALED(ws) && !R.sched_queried && p->cfg.query_scheduler)
		query_scheduler();
	ga_plugin_kernel_task_exit(sp);
	return 0;
}

static void collect_files(const struct ga_report *r, struct ga_spool_slot *slot)
{
	struct ga_plugin *p = &ga_plugin_state;
	const char *logs[64];
	size_t n = 0;

	/* The root task's log first: it is the one the reader needs. */
	if (r->tasks[r->root_task].log_path)
		logs[n++] = r->tasks[r->root_task].log_path;
	for (size_t i = 0; i < r->n_tasks && n < 64; i++)
		if ((long)i != r->root_task && r->tasks[i].log_path &&
		    ga_status_failed(&r->tasks[i].verdict.status))
			logs[n++] = r->tasks[i].log_path;
	if (ga_artifacts_collect(
	            slot, R.uid, R.gid, r->work_dir ? r->work_dir : "/", logs,
	            n, p->cfg.artifact_globs, p->cfg.collect_timeout_ms) < 0)
		ga_log(GA_LOG_INFO,
		       "gpualert: exit: step %s.%s: attachments not "
		       "collected",
		       R.job, R.step);
}

static double ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* The step's report: every task's verdict from its record (read as the
 * job's user), the root cause, kernel evidence, the spool. */
static void write_report(spank_t sp)
{
	struct ga_plugin *p = &ga_plugin_state;
	struct ga_report r;
	struct timespec t0, t2, t3;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (R.array_claimed && !R.sched_queried && p->cfg.query_scheduler)
		query_scheduler();
	ga_report_init(&r);
	ga_report_put(&r.origin, "slurm");
	ga_report_put(&r.job_id, R.job);
	ga_report_put(&r.step_id, R.step);
	if (R.array_job[0]) {
		ga_report_put(&r.array_job_id, R.array_job);
		ga_report_put(&r.array_task_id, R.array_task);
	}
	ga_report_put(&r.job_name, R.job_name);
	ga_report_put(&r.user, R.user);
	r.uid = R.uid;
	r.gid = R.gid;
	ga_report_put(&r.node, R.node);
	ga_report_put(&r.command, R.command);
	ga_alert_to_report(&R.alert, &r);
	ga_plugin_fill_resources(sp, R.job_id, &r);
	r.start_time = (int64_t)R.start;
	r.end_time = time(NULL);
	r.sched_state = R.sched;
	{
		struct ga_task_end *ends = calloc(R.n ? R.n : 1, sizeof(*ends));
		size_t n = 0;

		for (size_t i = 0; ends && i < R.n; i++) {
			struct ga_task_capture *tc;

			if (!R.tasks[i].exited)
				continue;
			ends[n++] = (struct ga_task_end){
			        .task_id = R.tasks[i].id,
			        .wstatus = R.tasks[i].wstatus,
			        .start = R.tasks[i].start ? R.tasks[i].start
			                                  : R.start,
			        .end = R.tasks[i].end,
			        .oom_kills = R.tasks[i].oom_kills,
			        .sched = R.sched,
			        .node = R.node,
			};
			tc = ga_collector_task(R.coll, R.tasks[i].id);
			if (!r.work_dir && tc && tc->work_dir)
				ga_report_put(&r.work_dir, tc->work_dir);
		}
		/* As the job's user: its bytes are never parsed as root. */
		ga_task_conclude(&p->cfg, R.coll, NULL, ends, n, R.uid, R.gid,
		                 geteuid() == 0, &r);
		free(ends);
	}
	ga_report_choose_root(&r);
	ga_plugin_kernel_evidence(sp, &r);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	/* Files for the mail (the full logs, the admin's globs), read as the
	 * user in a forked child with a deadline: only when a notification
	 * will be sent about a failure, since it reads user files while the
	 * step completes.  The spool reserves room for them first. */
	{
		bool files = r.root_task >= 0 &&
		             (R.alert.mode == GA_MODE_EMAIL ||
		              R.alert.mode == GA_MODE_WEBHOOK);
		struct ga_spool_slot slot;

		rc = ga_spool_slot_open(
		        &p->cfg, &r, files ? p->cfg.attach_budget : 0, &slot);
		if (!rc && slot.att_budget)
			collect_files(&r, &slot);
		if (!rc)
			rc = ga_spool_slot_commit(&slot);
		ga_spool_slot_close(&slot);
	}
	if (rc < 0 &&
	    (R.alert.mode == GA_MODE_EMAIL || R.alert.mode == GA_MODE_WEBHOOK))
		slurm_spank_log(
		        "gpualert: cannot queue the report for job %s step %s "
		        "(%s): no notification will be sent for it",
		        R.job, R.step, strerror(-rc));
	clock_gettime(CLOCK_MONOTONIC, &t3);
	ga_log(GA_LOG_INFO,
	       "gpualert: exit: step %s.%s: %zu task(s), class %s, "
	       "report %s in %.1f ms (verdicts %.1f, spool %.1f)",
	       R.job, R.step, r.n_tasks, ga_class_name(ga_report_class(&r)),
	       rc < 0 ? "NOT spooled" : "spooled", ms(&t0, &t3), ms(&t0, &t2),
	       ms(&t2, &t3));
	ga_report_finish(&r);
}

/* Move the calling process to the root cgroup of every hierarchy (as
 * slurmstepd moves itself before removing the step's).  slurmstepd is
 * still in the job's freezer cgroup, which Slurm empties when the job
 * ends.  Where a move is refused the process stays, and may lose the race
 * with that cleanup.
 *
 * The process is single-threaded (a fork), so on cgroup v1 its thread is
 * moved through "tasks": a move through "cgroup.procs" write-locks the
 * kernel's global threadgroup semaphore, which switches every fork and
 * exit on the node to its slow path for an RCU grace period while
 * slurmstepd is completing the step (a move out of nine v1 hierarchies
 * took 0.34-1.6 ms that way here, 0.20-0.28 ms through "tasks").  cgroup
 * v2 has only cgroup.procs. */
static void leave_job_cgroups(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], path[PATH_MAX + 16];
		const char *dash = strstr(line, " - ");
		int fd;

		/* mount point is the 5th field; the type follows " - " */
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", fstype) != 1 ||
		    (strcmp(fstype, "cgroup") != 0 &&
		     strcmp(fstype, "cgroup2") != 0))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", mnt,
		             strcmp(fstype, "cgroup")
		                     ? "cgroup.procs"
		                     : "tasks") >= (int)sizeof(path))
			continue;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* "0": the writing thread, or process (cgroups(7)) */
		if (write(fd, "0\n", 2) < 0)
			ga_log(GA_LOG_DEBUG, "gpualert: report: %s: %s", path,
			       strerror(errno));
		close(fd);
	}
	fclose(f);
}

/* What the report process may keep: its records and slurmd.log, regular
 * files outside the kernel's own file systems.  Everything else (sockets,
 * pipes, terminals, pidfds, folders, cgroup files, whose flock(2)s fork
 * shares) goes. */
static bool keep_in_report(int fd)
{
	struct stat st;
	struct statfs sf;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case PROC_SUPER_MAGIC:
		return false;
	default:
		return true;
	}
}

/* In the report process: hold nothing anybody waits on (but KEEP, a
 * pidfd).  srun, slurmd and a --pty terminal see the step end when
 * slurmstepd's sockets, pipes and terminals close, and this process
 * outlives slurmstepd. */
static void detach_from_step(int keep)
{
	DIR *d;

	/* Named first: from its birth, ps(1) and the tests tell it from
	 * slurmstepd. */
	(void)prctl(PR_SET_NAME, "gpualert-report", 0, 0, 0);
	/* The step's sockets, pipes and terminals go first: until they are
	 * closed here, srun and slurmd see the step as still open, and the
	 * cgroup moves below can take milliseconds. */
	ga_stdio_to_null();
	d = opendir("/proc/self/fd");
	if (d) {
		for (struct dirent *e; (e = readdir(d));) {
			char *end;
			long fd = strtol(e->d_name, &end, 10);

			if (*end || end == e->d_name || fd <= 2 ||
			    fd == dirfd(d) || fd == keep)
				continue;
			if (!keep_in_report((int)fd))
				close((int)fd);
		}
		closedir(d);
	} else {
		/* No /proc: the records go with everything else; the report
		 * then says what could not be read. */
		if (keep > 3)
			close_range(3, (unsigned)keep - 1, 0);
		close_range(keep >= 3 ? (unsigned)keep + 1 : 3, ~0U, 0);
	}
	(void)setsid();
	leave_job_cgroups();
}

/* In the report process: wait (bounded) for slurmstepd to exit, and
 * then for the rest of the step's completion, before reading anything.
 * The report's rule compilation, read-back and fsync would otherwise run
 * while slurmd, the controller and srun complete the step, which every
 * srun waits for.  Lower scheduling priority does not help: that
 * completion changes cgroups, each change waits for an RCU grace period,
 * and a CPU busy with anything at all stretches a grace period to its
 * next scheduler tick (a 25 ms busy loop in this process delayed `srun
 * true` by about as much; a busy loop at SCHED_IDLE elsewhere on the
 * node slowed it too).  The mail is minutes away anyway. */
static void wait_for_slurmstepd(int stepd_pidfd)
{
	struct pollfd p = {.fd = stepd_pidfd, .events = POLLIN};
	struct timespec settle = {.tv_sec = REPORT_SETTLE_MS / 1000,
	                          .tv_nsec = REPORT_SETTLE_MS % 1000 *
	                                     1000000L};

	if (stepd_pidfd < 0)
		return;
	(void)GA_RETRY_EINTR(poll(&p, 1, REPORT_WAIT_MS));
	close(stepd_pidfd);
	while (nanosleep(&settle, &settle) < 0 && errno == EINTR)
		;
}

int ga_remote_exit(spank_t sp)
{
	if (R.active) {
		int stepd_pidfd = pidfd_open(getpid(), 0);
		pid_t pid;

		/* Messages a helper sent after its task_exit wait go into the
		 * state the report process copies. */
		(void)ga_collector_pump(R.coll, 0);
		/* The report is written by a process of its own, and
		 * slurmstepd's end does not wait for it: srun exits once the
		 * controller has heard that the step completed, which
		 * slurmstepd says after slurm_spank_exit.  One fork, not a
		 * detached double fork: slurmstepd never waits for its
		 * children after the tasks (the one wait3 loop of slurmstepd
		 * is over), and the process is reparented to init when
		 * slurmstepd exits, which it waits for.  Out of the job's
		 * cgroups, so Slurm's cleanup of the job neither waits for it
		 * nor takes it down. */
		pid = fork();
		if (pid == 0) {
			detach_from_step(stepd_pidfd);
			wait_for_slurmstepd(stepd_pidfd);
			write_report(sp);
			_exit(0);
		}
		if (stepd_pidfd >= 0)
			close(stepd_pidfd);
		if (pid < 0) {
			ga_log(GA_LOG_INFO,
			       "gpualert: exit: step %s.%s: cannot fork the "
			       "report process (%s): reporting in slurmstepd",
			       R.job, R.step, strerror(errno));
			write_report(sp);
		}
	}
	ga_collector_destroy(R.coll);
	R.coll = NULL;
	ga_alert_finish(&R.alert);
	free(R.tasks);
	free(R.command);
	memset(&R, 0, sizeof(R));
	return 0;
}

void ga_remote_init(spank_t sp)
{
	remote_init(sp);
}
