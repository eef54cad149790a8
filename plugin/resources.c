/* SPDX-License-Identifier: MIT */
/* Resource context for the mail: what the job asked for and what it used,
 * from slurmctld (slurm_load_job) and the job's memory cgroup.  Called
 * once per step from ga_remote_exit, as root, before the report is
 * spooled.  Every failure leaves the fields unknown: the mail then says
 * less, the job is never affected. */
#include "plugin.h"

#include <fcntl.h>
#include <inttypes.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* GPUs (and other generic resources) per node, in Slurm's spelling
 * without the "gres:"/"gres/" prefixes: tres_per_node is what was asked
 * ("gres:gpu:a100:2", Slurm 22.05), tres_alloc_str what was allocated
 * ("cpu=4,mem=16G,node=1,billing=4,gres/gpu=2").  "" when the job has no
 * GPU. */
static void gres_string(const job_info_t *j, char *out, size_t size)
{
	size_t o = 0;

	out[0] = '\0';
	if (j->tres_per_node && *j->tres_per_node) {
		const char *p = j->tres_per_node;

		while (*p && o + 1 < size) {
			if (!strncmp(p, "gres:", 5) || !strncmp(p, "gres/", 5))
				p += 5;
			while (*p && *p != ',' && o + 1 < size)
				out[o++] = *p++;
			if (*p == ',' && o + 2 < size) {
				out[o++] = ',';
				out[o++] = ' ';
				p++;
			}
		}
		out[o] = '\0';
		return;
	}
	if (j->tres_alloc_str) {
		for (const char *p = strstr(j->tres_alloc_str, "gres/"); p;
		     p = strstr(p, "gres/")) {
			size_t n = strcspn(p + 5, ",");

			if (o && o + 2 < size) {
				out[o++] = ',';
				out[o++] = ' ';
			}
			if (o + n + 1 < size) {
				memcpy(out + o, p + 5, n);
				o += n;
			}
			p += 5 + n;
		}
		out[o] = '\0';
	}
}

/* The job cgroup's memory high-water mark on this node (cgroup v1, where
 * Slurm 22.05 puts it: memory/slurm_<node>/uid_<uid>/job_<id>, or
 * memory/slurm/... with a single slurmd per host).  0 if unknown. */
static uint64_t read_u64(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static uint64_t cgroup_peak(const char *node, uint32_t uid, uint32_t job_id)
{
	char path[512];
	uint64_t v = 0;

	if (node && !strchr(node, '/')) {
		snprintf(path, sizeof(path),
		         "/sys/fs/cgroup/memory/slurm_%s/uid_%" PRIu32
		         "/job_%" PRIu32 "/memory.max_usage_in_bytes",
		         node, uid, job_id);
		v = read_u64(path);
	}
	if (!v) {
		snprintf(path, sizeof(path),
		         "/sys/fs/cgroup/memory/slurm/uid_%" PRIu32
		         "/job_%" PRIu32 "/memory.max_usage_in_bytes",
		         uid, job_id);
		v = read_u64(path);
	}
	return v;
}

/* The highest job-level peak sampled in task_exit by this slurmstepd. */
static uint64_t sampled_peak;

void ga_plugin_sample_memory(const char *node, uint32_t uid, uint32_t job_id)
{
	uint64_t v = cgroup_peak(node, uid, job_id);

	if (v > sampled_peak)
		sampled_peak = v;
}

void ga_plugin_fill_resources(spank_t sp, uint32_t job_id, struct ga_report *r)
{
	job_info_msg_t *msg = NULL;
	char gres[256];

	(void)sp;
	/* One RPC to slurmctld per step: only for steps that notify. */
	if (!r->mode ||
	    (strcmp(r->mode, "email") && strcmp(r->mode, "webhook")))
		return;
	/* By slurm_spank_exit Slurm has usually removed the job's cgroup
	 * (the batch step is the last): the peak sampled at task exit
	 * counts, the current value only when it is still there. */
	ga_plugin_sample_memory(r->node, r->uid, job_id);
	r->mem_peak = sampled_peak;
	if (slurm_load_job(&msg, job_id, SHOW_DETAIL) != 0 || !msg) {
		ga_log(GA_LOG_INFO,
		       "gpualert: exit: slurm_load_job(%" PRIu32
		       ") failed; the mail has no resource context",
		       job_id);
		return;
	}
	if (msg->record_count > 0) {
		const job_info_t *j = &msg->job_array[0];

		/* Minutes; INFINITE and NO_VAL mean no limit. */
		if (j->time_limit && j->time_limit < NO_VAL)
			r->time_limit = (int64_t)j->time_limit * 60;
		if (j->pn_min_memory && j->pn_min_memory < NO_VAL64) {
			r->mem_per_cpu = (j->pn_min_memory & MEM_PER_CPU) != 0;
			r->mem_request = (j->pn_min_memory & ~MEM_PER_CPU)
			                 << 20; /* MB */
		}
		gres_string(j, gres, sizeof(gres));
		ga_report_put(&r->gres, gres);
		/* For a batch job, command is the script as submitted; the
		 * step runs slurmd's copy (.../job<N>/slurm_script). */
		if (j->batch_flag && j->command && *j->command)
			ga_report_put(&r->script, j->command);
		if (j->work_dir && *j->work_dir && !r->work_dir)
			ga_report_put(&r->work_dir, j->work_dir);
		if (j->array_job_id && j->array_task_id < NO_VAL &&
		    !r->array_job_id) {
			char a[16], t[16];

			snprintf(a, sizeof(a), "%" PRIu32, j->array_job_id);
			snprintf(t, sizeof(t), "%" PRIu32, j->array_task_id);
			ga_report_put(&r->array_job_id, a);
			ga_report_put(&r->array_task_id, t);
		}
	}
	slurm_free_job_info_msg(msg);
}
