/* SPDX-License-Identifier: MIT */
/* slurmstepd glue of the kernel evidence (common/kernlog.h): which
 * processes and GPUs are the step's, then the kernel log's NVIDIA fault
 * lines for its lifetime into the report.
 *
 * Identity (job, uid, pids) comes from spank items and the step's cgroup,
 * never from the job's environment.  The step's GPUs come from its
 * devices cgroup when Slurm constrains devices, else from
 * SLURM_STEP_GPUS/SLURM_JOB_GPUS (spank_getenv), which only map the step
 * to device minors: a line naming another job's pid is never the step's,
 * whatever the environment says.
 */
#include "plugin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernlog.h"
#include "log.h"

#define MAX_PIDS 4096
#define MAX_GPUS 64
/* The kernel stamps a line a little before or after the wall-clock
 * second the step started or ended in. */
#define SLACK_US (2 * 1000000LL)

static struct {
	pid_t pids[MAX_PIDS];
	size_t n;
	unsigned minors[MAX_GPUS]; /* from the step's devices cgroup */
	size_t n_minors;
	bool have_devices; /* the cgroup constrains devices */
} K;

static void add_pid(pid_t pid)
{
	if (pid <= 0 || K.n >= MAX_PIDS)
		return;
	for (size_t i = 0; i < K.n; i++)
		if (K.pids[i] == pid)
			return;
	K.pids[K.n++] = pid;
}

static void read_procs(const char *path)
{
	char line[32];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && K.n < MAX_PIDS)
		add_pid((pid_t)strtol(line, NULL, 10));
	fclose(f);
}

/* The GPUs the step may open, from its devices cgroup (task/cgroup with
 * ConstrainDevices): "c 195:N rwm" lines, N the device minor of
 * /dev/nvidiaN (195:255 is nvidiactl, 195:254 nvidia-modeset).  "a *:*
 * rwm" means no constraint: the environment is used instead. */
static void read_devices(const char *path)
{
	char line[128];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned major, minor;

		if (line[0] == 'a')
			break;
		if (sscanf(line, "c %u:%u", &major, &minor) == 2 &&
		    major == 195 && minor < 254) {
			K.have_devices = true;
			if (K.n_minors < MAX_GPUS)
				K.minors[K.n_minors++] = minor;
		} else if (line[0] == 'c' || line[0] == 'b') {
			K.have_devices = true;
		}
	}
	fclose(f);
}

/* The processes still in the step's cgroup (cgroup v1, proctrack/cgroup:
 * <memory>/slurm[_NODE]/uid_U/job_J/step_S/task_N): children and
 * threads of the tasks that outlived them. */
static void snapshot_cgroup(spank_t sp)
{
	uint32_t job = 0, step = 0;
	uid_t uid = 0;
	char node[256] = "", host[256] = "", base[PATH_MAX], stepname[32];
	const char *roots[3];
	DIR *d;

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		return;
	if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) !=
	    ESPANK_SUCCESS)
		node[0] = '\0';
	gethostname(host, sizeof(host) - 1);
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(stepname, sizeof(stepname), "batch");
	else
		snprintf(stepname, sizeof(stepname), "%u", step);
	roots[0] = node;
	roots[1] = host;
	roots[2] = NULL;
	for (int i = 0; i < 3; i++) {
		struct dirent *de;

		if (i < 2 && !roots[i][0])
			continue;
		snprintf(
		        base, sizeof(base),
		        "/sys/fs/cgroup/memory/slurm%s%s/uid_%u/job_%u/step_%s",
		        roots[i] ? "_" : "", roots[i] ? roots[i] : "",
		        (unsigned)uid, job, stepname);
		d = opendir(base);
		if (!d)
			continue;
		while ((de = readdir(d)) != NULL) {
			char path[PATH_MAX + 300];

			if (strncmp(de->d_name, "task_", 5))
				continue;
			snprintf(path, sizeof(path), "%s/%s/cgroup.procs", base,
			         de->d_name);
			read_procs(path);
		}
		closedir(d);
		{
			char path[PATH_MAX + 32];

			snprintf(path, sizeof(path), "%s/cgroup.procs", base);
			read_procs(path);
		}
		if (!K.have_devices) {
			char path[PATH_MAX + 32];

			snprintf(path, sizeof(path),
			         "/sys/fs/cgroup/devices/slurm%s%s/uid_%u/"
			         "job_%u/step_%s/devices.list",
			         roots[i] ? "_" : "", roots[i] ? roots[i] : "",
			         (unsigned)uid, job, stepname);
			read_devices(path);
		}
		return;
	}
}

void ga_plugin_kernel_task_exit(spank_t sp)
{
	pid_t pid = 0;

	if (!ga_plugin_state.cfg.kernel_log)
		return;
	if (spank_get_item(sp, S_TASK_PID, &pid) == ESPANK_SUCCESS)
		add_pid(pid);
	snapshot_cgroup(sp);
}

/* "0,1" or "0-3" (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES): device minors.
 * A UUID list ("GPU-...") maps nothing. */
static size_t parse_gpus(const char *s, unsigned *out, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		char *e;
		long a = strtol(s, &e, 10), b;

		if (e == s || a < 0 || a > 4095)
			return n;
		b = a;
		if (*e == '-') {
			s = e + 1;
			b = strtol(s, &e, 10);
			if (e == s || b < a || b > 4095)
				return n;
		}
		for (long i = a; i <= b && n < max; i++)
			out[n++] = (unsigned)i;
		if (*e != ',')
			break;
		s = e + 1;
	}
	return n;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

void ga_plugin_kernel_evidence(spank_t sp, struct ga_report *r)
{
	const struct ga_config *cfg = &ga_plugin_state.cfg;
	char env[1024], bus[MAX_GPUS][GA_BUS_ID_LEN];
	char alloc[MAX_GPUS][GA_BUS_ID_LEN];
	unsigned minors[MAX_GPUS];
	size_t n_minors = 0, n_alloc = 0;
	struct ga_kernel_query q;
	struct ga_kernel_evidence e;
	struct timespec t0;
	int rc;

	if (!r)
		goto out;
	/* For gpualert stats: failures by partition. */
	if (spank_getenv(sp, "SLURM_JOB_PARTITION", env, sizeof(env)) ==
	    ESPANK_SUCCESS)
		ga_report_put(&r->partition, env);
	if (!cfg->kernel_log)
		goto out;
	/* Only a failure needs explaining, and a node without the NVIDIA
	 * driver has nothing to find: one stat(2) there. */
	if (r->root_task < 0 || access(cfg->nvidia_gpus_dir, R_OK | X_OK) < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (K.have_devices) {
		n_minors = K.n_minors;
		memcpy(minors, K.minors, n_minors * sizeof(minors[0]));
	} else if (spank_getenv(sp, "SLURM_STEP_GPUS", env, sizeof(env)) ==
	                   ESPANK_SUCCESS ||
	           spank_getenv(sp, "SLURM_JOB_GPUS", env, sizeof(env)) ==
	                   ESPANK_SUCCESS) {
		n_minors = parse_gpus(env, minors, MAX_GPUS);
	}
	if (n_minors && ga_kernel_gpu_bus_ids(cfg->nvidia_gpus_dir, minors,
	                                      n_minors, bus) > 0) {
		struct ga_buf b;

		ga_buf_init(&b);
		for (size_t i = 0; i < n_minors; i++) {
			if (!bus[i][0])
				continue;
			memcpy(alloc[n_alloc++], bus[i], GA_BUS_ID_LEN);
			ga_buf_printf(&b, "%s%s", b.len ? "," : "", bus[i]);
		}
		if (b.len)
			ga_report_put(&r->gpus, b.data);
		ga_buf_finish(&b);
	}
	memset(&q, 0, sizeof(q));
	q.since_us = ga_kernel_clock_from_unix(r->start_time) - SLACK_US;
	q.until_us = 0;
	q.pids = K.pids;
	q.n_pids = K.n;
	q.bus_ids = (const char(*)[GA_BUS_ID_LEN])alloc;
	q.n_bus_ids = n_alloc;
	q.max_ms = cfg->kernel_log_max_ms;
	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	if (rc < 0)
		ga_log(GA_LOG_INFO,
		       "gpualert: exit: kernel log not read: %s (the report "
		       "has no kernel evidence)",
		       strerror(-rc));
	ga_report_apply_kernel(r, &e);
	ga_log(GA_LOG_INFO,
	       "gpualert: exit: kernel log: %u records, %u NVIDIA fault "
	       "line(s), %zu of this step (%zu pids, %zu GPUs)%s in %.1f ms",
	       e.records, e.nv_lines, e.n_lines, K.n, n_alloc,
	       e.truncated ? ", truncated" : "", ms_since(&t0));
	ga_kernel_evidence_finish(&e);
out:
	memset(&K, 0, sizeof(K));
}
