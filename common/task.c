/* SPDX-License-Identifier: MIT */
#include "task.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"
#include "ga-config.h"
#include "log.h"
#include "logfile.h"
#include "record.h"
#include "rules.h"

/* ---- task side ----------------------------------------------------------- */

/* Create the durable log (only called when some output is a pipe) and
 * write its header.  Returns the fd or -1 with ERR (and NOTE) set. */
static int open_log(const struct ga_config *cfg, const struct ga_task_ids *ids,
                    const char *log_path, char *err, size_t err_size,
                    const char **note)
{
	char path[PATH_MAX], actual[PATH_MAX];
	const char *why = NULL;
	int fd, rc;

	if (log_path) {
		if (snprintf(path, sizeof(path), "%s", log_path) >=
		    (int)sizeof(path)) {
			snprintf(err, err_size, "log path too long");
			return -1;
		}
	} else {
		struct ga_log_ids li = {
		        ids->job_id,   ids->step_id, ids->task_id, ids->user,
		        ids->job_name, ids->node,    ids->work_dir};

		if (ga_logfile_expand(cfg->log_pattern, &li, path, sizeof(path),
		                      &why) < 0) {
			snprintf(err, err_size, "log_pattern: %s", why);
			return -1;
		}
	}
	fd = ga_logfile_open(path, cfg->log_file_mode, actual, sizeof(actual),
	                     note);
	if (fd < 0) {
		snprintf(err, err_size, "cannot create %s: %s", path,
		         strerror(-fd));
		return -1;
	}
	{
		struct ga_log_header h = {
		        ids->job_id, ids->step_id, ids->task_id,
		        ids->node,   ids->user,    ids->argc,
		        ids->argv,   ids->start,   GA_VERSION,
		};

		rc = ga_logfile_write_header(fd, &h);
	}
	if (rc < 0) {
		/* A log without its header is still the output's record. */
		snprintf(err, err_size, "cannot write %s: %s", actual,
		         strerror(-rc));
	}
	return fd;
}

void ga_task_begin(const struct ga_config *cfg, const struct ga_task_ids *ids,
                   int sock_fd, const char *log_path)
{
	enum ga_fd_kind kind[GA_CAPTURE_STREAMS];
	enum ga_capture_mode mode;
	char err[PATH_MAX + 128] = "";
	const char *note = NULL, *cwhy = NULL;
	int log_fd = -1;

	ga_capture_probe(kind);
	if (ga_capture_needs_log(kind))
		log_fd = open_log(cfg, ids, log_path, err, sizeof(err), &note);
	if (err[0])
		ga_log(GA_LOG_ERROR, "gpualert: task %u: %s", ids->task_id,
		       err);
	{
		struct ga_capture_opts o = {
		        .task_id = ids->task_id,
		        .sock_fd = sock_fd,
		        .log_fd = log_fd,
		        .log_private = !log_path && ids->unique &&
		                       ga_capture_pattern_has(cfg->log_pattern,
		                                              "jst"),
		        .log_max = cfg->log_max,
		        .max_rss = cfg->helper_max_rss,
		        /* the task execs its program next */
		        .task_execs = true,
		        .work_dir = ids->work_dir,
		        .log_error = err[0] ? err : note,
		};

		ga_capture_start(&o, &mode, &cwhy);
	}
	if (cwhy)
		ga_log(GA_LOG_INFO, "gpualert: task %u: %s", ids->task_id,
		       cwhy);
	if (log_fd >= 0)
		close(log_fd);
}

/* ---- after the tasks ----------------------------------------------------- */

const char *ga_task_capture_error(const struct ga_task_capture *tc)
{
	if (!tc || !tc->started)
		return "the task never reported to gpualert";
	if (tc->error)
		return tc->error;
	if (tc->n_rec == 0)
		return "no record of the output (neither a file nor a pipe)";
	if (tc->helper && !tc->have_end)
		return "the capture helper did not finish (killed with the "
		       "task, or by it): the log holds what it had copied";
	if (tc->flags & GA_CAPTURE_F_OUT_LOST)
		return "the task's output could not be passed on through the "
		       "capture (its reader went away, or a write failed): "
		       "from then on it is only in the durable log";
	if (tc->flags & GA_CAPTURE_F_LOG_LOST)
		return "writing the durable log failed (disk full?): the log "
		       "is incomplete";
	if (tc->flags & GA_CAPTURE_F_LOG_STOP)
		return "the durable log reached log_max on a file system that "
		       "cannot drop its middle: it holds the start of the "
		       "output only";
	return NULL;
}

struct pending {
	struct ga_record_job job;
	bool started;
	int start_error;
};

static void status_of(const struct ga_task_end *e, struct ga_status *st)
{
	ga_status_from_wait(st, e->wstatus);
	st->oom_kills = e->oom_kills;
	if (st->signal)
		st->state = e->sched;
}

static void fill_record(struct ga_task_report *tr,
                        const struct ga_task_capture *tc,
                        const struct ga_record_stats *rs)
{
	const struct ga_record *rec;

	if (!tc || !tc->n_rec)
		return;
	/* The log, if there is one, holds what went through the pipe; else
	 * the task's own file. */
	rec = &tc->rec[0];
	for (size_t i = 0; i < tc->n_rec; i++)
		if (tc->rec[i].is_log)
			rec = &tc->rec[i];
	ga_report_put(&tr->log_path, rec->path);
	tr->record.present = true;
	tr->record.is_log = rec->is_log;
	tr->record.dev = rec->dev;
	tr->record.ino = rec->ino;
	tr->record.start = rec->start;
	tr->record.cut = tc->log_cut;
	if (rs) {
		tr->record.end = rs->end;
		tr->record.read = rs->read;
		tr->record.skipped = rs->skipped;
	}
}

void ga_task_conclude(const struct ga_config *cfg, struct ga_collector *coll,
                      const struct ga_ruleset *rules,
                      const struct ga_task_end *ends, size_t n, uid_t uid,
                      gid_t gid, bool drop, struct ga_report *r)
{
	struct ga_ruleset *own = rules ? NULL
	                               : ga_rules_load(cfg->rules_dir, NULL,
	                                               NULL);
	const struct ga_ruleset *rs = rules ? rules : own;
	struct pending *p = calloc(n ? n : 1, sizeof(*p));
	double deadline = ga_record_now_ms() + cfg->classify_timeout_ms;

	/* All at once: the children run in parallel, under one deadline. */
	for (size_t i = 0; p && i < n; i++) {
		struct ga_task_capture *tc = ga_collector_task(coll,
		                                               ends[i].task_id);
		struct ga_record_opts o = {
		        .drop = drop,
		        .uid = uid,
		        .gid = gid,
		        .rules = rs,
		        .rules_dir = cfg->rules_dir,
		        .tail_lines = cfg->tail_lines,
		        .max_bytes = cfg->classify_max,
		        .max_rss = cfg->helper_max_rss,
		};
		bool has_log = false;

		if (!tc || !tc->n_rec)
			continue;
		for (size_t k = 0; k < tc->n_rec; k++)
			has_log |= tc->rec[k].is_log;
		status_of(&ends[i], &o.status);
		o.remove_logs_on_success = has_log &&
		                           cfg->keep_logs == GA_KEEP_FAILED;
		p[i].start_error = ga_record_classify_start(tc->rec, tc->n_rec,
		                                            &o, &p[i].job);
		p[i].started = p[i].start_error == 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct ga_task_capture *tc = ga_collector_task(coll,
		                                               ends[i].task_id);
		struct ga_task_report *tr = ga_report_add_task(r);
		struct ga_classifier *c = rs ? ga_classifier_create(rs) : NULL;
		struct ga_record_stats stats = {0};
		const char *err = ga_task_capture_error(tc);
		struct ga_status st;
		struct ga_buf state;
		int rc = -ECHILD;

		ga_buf_init(&state);
		if (p && p[i].started)
			rc = ga_record_classify_finish(&p[i].job, deadline,
			                               &state, &stats);
		if (!tr) {
			ga_classifier_destroy(c);
			ga_buf_finish(&state);
			continue;
		}
		tr->task_id = ends[i].task_id;
		tr->start_time = (int64_t)ends[i].start;
		tr->end_time = (int64_t)ends[i].end;
		/* Sub-second: across tasks and nodes, which one ended first
		 * decides the root cause. */
		tr->end_time_ns = (int64_t)(ends[i].end * 1e9);
		ga_report_put(&tr->node, ends[i].node);
		fill_record(tr, tc, rc == 0 ? &stats : NULL);
		if (rc == 0 && c) {
			const char *perr = NULL;

			if (ga_classifier_read_state(c, state.data, state.len,
			                             &perr) < 0)
				ga_log(GA_LOG_INFO,
				       "gpualert: task %u: bad classifier "
				       "state: %s",
				       ends[i].task_id, perr ? perr : "?");
		} else if (!err && tc && tc->n_rec) {
			err = rc == -ETIMEDOUT
			              ? "reading the output took longer than "
			                "classify_timeout_ms: no evidence"
			              : "the output could not be read back: no "
			                "evidence";
		}
		if (err)
			ga_report_put(&tr->capture_error, err);
		ga_log(GA_LOG_INFO,
		       "gpualert: task %u: record %s: read %llu bytes (skipped "
		       "%llu) in %.1f ms CPU; helper %llu ms CPU",
		       ends[i].task_id,
		       tc && tc->n_rec ? (tc->rec[0].is_log ? "log" : "file")
		                       : "none",
		       (unsigned long long)stats.read,
		       (unsigned long long)stats.skipped, stats.cpu_ms,
		       tc ? (unsigned long long)tc->helper_cpu_ms : 0ULL);
		status_of(&ends[i], &st);
		if (c)
			ga_classifier_finish(c, &st, &tr->verdict);
		else
			tr->verdict.status = st;
		ga_classifier_destroy(c);
		ga_buf_finish(&state);
	}
	free(p);
	ga_ruleset_destroy(own);
}
