/* SPDX-License-Identifier: MIT */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga-config.h"
#include "json.h"
#include "log.h"
#include "util.h"

/* Tails travel only for the tasks a reader looks at first. */
#define TAILS_IN_REPORT 4
/* The longest string field a report keeps (bytes, before JSON escaping);
 * longer values (a Hydra command line of 64 KiB) are cut on write and on
 * read, the same way, so the reader accepts whatever the writer wrote. */
#define STRING_MAX 4096

/* VALUE cut to STRING_MAX bytes, ending in a marker that says how long
 * it was; cut before a UTF-8 continuation byte, never inside a
 * character.  Returns VALUE itself when it fits, else BUF (STRING_MAX + 1
 * bytes). */
static const char *bounded(const char *value, size_t len, char *buf)
{
	char mark[64];
	int m;
	size_t keep;

	if (!value || len <= STRING_MAX)
		return value;
	m = snprintf(mark, sizeof(mark), " [... cut by gpualert: %zu bytes]",
	             len);
	keep = STRING_MAX - (size_t)m;
	while (keep > 0 && ((unsigned char)value[keep] & 0xC0) == 0x80)
		keep--;
	memcpy(buf, value, keep);
	memcpy(buf + keep, mark, (size_t)m + 1);
	return buf;
}

void ga_report_init(struct ga_report *r)
{
	memset(r, 0, sizeof(*r));
	r->schema = GA_REPORT_SCHEMA;
	r->root_task = -1;
}

static void task_finish(struct ga_task_report *t)
{
	free(t->node);
	free(t->log_path);
	free(t->capture_error);
	ga_verdict_finish(&t->verdict);
}

void ga_report_finish(struct ga_report *r)
{
	char **strings[] = {
	        &r->origin,        &r->job_id,        &r->step_id,
	        &r->array_job_id,  &r->array_task_id, &r->job_name,
	        &r->user,          &r->node,          &r->work_dir,
	        &r->command,       &r->mode,          &r->gres,
	        &r->script,        &r->notify,        &r->webhook_url,
	        &r->webhook_format};

	for (size_t i = 0; i < GA_ARRAY_LEN(strings); i++)
		free(*strings[i]);
	for (size_t i = 0; i < r->n_recipients; i++)
		free(r->recipients[i]);
	free(r->recipients);
	for (size_t i = 0; i < r->n_tasks; i++)
		task_finish(&r->tasks[i]);
	free(r->tasks);
	free(r->partition);
	free(r->gpus);
	for (size_t i = 0; i < r->n_kernel; i++) {
		free(r->kernel[i].text);
		free(r->kernel[i].bus_id);
		free(r->kernel[i].match);
		free(r->kernel[i].kind);
		free(r->kernel[i].action);
	}
	free(r->kernel);
	ga_report_init(r);
}

struct ga_task_report *ga_report_add_task(struct ga_report *r)
{
	struct ga_task_report *tmp;

	if (r->n_tasks >= GA_REPORT_MAX_TASKS)
		return NULL;
	tmp = realloc(r->tasks, (r->n_tasks + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	r->tasks = tmp;
	memset(&tmp[r->n_tasks], 0, sizeof(tmp[0]));
	ga_verdict_init(&tmp[r->n_tasks].verdict);
	return &tmp[r->n_tasks++];
}

struct ga_report_kernel *ga_report_add_kernel(struct ga_report *r)
{
	struct ga_report_kernel *tmp;

	if (r->n_kernel >= GA_REPORT_MAX_KERNEL)
		return NULL;
	tmp = realloc(r->kernel, (r->n_kernel + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	r->kernel = tmp;
	memset(&tmp[r->n_kernel], 0, sizeof(tmp[0]));
	tmp[r->n_kernel].pid = -1;
	return &tmp[r->n_kernel++];
}

int ga_report_set(char **field, const char *value)
{
	char *dup = NULL;

	if (value && !(dup = strdup(value)))
		return -ENOMEM;
	free(*field);
	*field = dup;
	return 0;
}

void ga_report_put(char **field, const char *value)
{
	if (ga_report_set(field, value) < 0) {
		free(*field);
		*field = NULL;
		ga_log(GA_LOG_ERROR, "gpualert: out of memory: a report field "
		                     "is left empty");
	}
}

int ga_report_add_recipient(struct ga_report *r, const char *addr)
{
	char **tmp;

	if (r->n_recipients >= GA_REPORT_MAX_RECIPIENTS)
		return -E2BIG;
	tmp = realloc(r->recipients, (r->n_recipients + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	r->recipients = tmp;
	tmp[r->n_recipients] = strdup(addr);
	if (!tmp[r->n_recipients])
		return -ENOMEM;
	r->n_recipients++;
	return 0;
}

static bool task_failed(const struct ga_task_report *t)
{
	return t->verdict.cls != GA_CLASS_SUCCESS;
}

static int64_t end_ns(const struct ga_task_report *t)
{
	if (t->end_time_ns > 0)
		return t->end_time_ns;
	if (t->end_time > 0 && t->end_time < INT64_MAX / 1000000000LL)
		return t->end_time * 1000000000LL;
	return 0;
}

/* A verdict that reports another task's failure rather than a cause of
 * its own: a collective that failed because a peer went away, a step
 * cancel that the scheduler did not report as this job's state (srun
 * kills the step when one task fails), or nothing recognisable. */
static bool is_echo(const struct ga_task_report *t)
{
	if (t->verdict.cls == GA_CLASS_NCCL ||
	    t->verdict.cls == GA_CLASS_UNKNOWN)
		return true;
	return t->verdict.cls == GA_CLASS_CANCELLED &&
	       t->verdict.status.state == GA_STATE_NONE;
}

bool ga_report_task_precedes(const struct ga_task_report *a,
                             const struct ga_task_report *b)
{
	int64_t ea = end_ns(a), eb = end_ns(b);
	bool near;

	if (ea && eb)
		near = (ea > eb ? ea - eb : eb - ea) < GA_REPORT_NEAR_TIE_NS;
	else
		near = !ea && !eb;
	if (near && is_echo(a) != is_echo(b))
		return !is_echo(a);
	/* Earliest end first: its crash is what the others echo. */
	if (ea != eb) {
		if (!ea || !eb)
			return ea != 0;
		return ea < eb;
	}
	if (a->verdict.priority != b->verdict.priority)
		return a->verdict.priority > b->verdict.priority;
	return a->task_id < b->task_id;
}

void ga_report_choose_root(struct ga_report *r)
{
	long best = -1;

	for (size_t i = 0; i < r->n_tasks; i++) {
		const struct ga_task_report *t = &r->tasks[i];

		if (!task_failed(t))
			continue;
		if (best < 0 || ga_report_task_precedes(t, &r->tasks[best]))
			best = (long)i;
	}
	r->root_task = best;
}

enum ga_class ga_report_class(const struct ga_report *r)
{
	if (r->root_task >= 0 && (size_t)r->root_task < r->n_tasks)
		return r->tasks[r->root_task].verdict.cls;
	return GA_CLASS_SUCCESS;
}

static void key_str(struct ga_buf *out, int *first, const char *key,
                    const char *value)
{
	char buf[STRING_MAX + 1];

	ga_json_key(out, first, key);
	ga_json_str(out, bounded(value, value ? strlen(value) : 0, buf));
}

static void key_int(struct ga_buf *out, int *first, const char *key,
                    long long value)
{
	ga_json_key(out, first, key);
	ga_buf_printf(out, "%lld", value);
}

/* Kernel evidence: optional keys, written only when present. */
static void write_kernel_json(const struct ga_report *r, struct ga_buf *out,
                              int *first)
{
	if (r->partition)
		key_str(out, first, "partition", r->partition);
	if (r->gpus)
		key_str(out, first, "gpus", r->gpus);
	if (!r->n_kernel)
		return;
	ga_json_key(out, first, "kernel");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < r->n_kernel; i++) {
		const struct ga_report_kernel *k = &r->kernel[i];
		int kf = 1;

		if (i)
			ga_buf_putc(out, ',');
		ga_buf_putc(out, '{');
		key_str(out, &kf, "source", "kernel_log");
		key_int(out, &kf, "time", (long long)k->time);
		key_str(out, &kf, "text", k->text);
		key_int(out, &kf, "xid", k->xid);
		ga_json_key(out, &kf, "sxid");
		ga_buf_puts(out, k->sxid ? "true" : "false");
		key_int(out, &kf, "pid", k->pid);
		key_str(out, &kf, "bus_id", k->bus_id);
		key_str(out, &kf, "match", k->match);
		key_str(out, &kf, "kind", k->kind);
		key_str(out, &kf, "action", k->action);
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, ']');
}

static void write_record(struct ga_buf *out, int *first,
                         const struct ga_task_record *rec)
{
	int f = 1;

	ga_json_key(out, first, "record");
	ga_buf_putc(out, '{');
	key_str(out, &f, "kind", rec->is_log ? "log" : "file");
	key_int(out, &f, "dev", (long long)rec->dev);
	key_int(out, &f, "ino", (long long)rec->ino);
	key_int(out, &f, "start", (long long)rec->start);
	key_int(out, &f, "end", (long long)rec->end);
	key_int(out, &f, "read", (long long)rec->read);
	key_int(out, &f, "skipped", (long long)rec->skipped);
	key_int(out, &f, "cut", (long long)rec->cut);
	ga_buf_putc(out, '}');
}

void ga_report_write_json(const struct ga_report *r, struct ga_buf *out)
{
	enum ga_class cls = ga_report_class(r);
	const struct ga_verdict *root =
	        r->root_task >= 0 && (size_t)r->root_task < r->n_tasks
	                ? &r->tasks[r->root_task].verdict
	                : NULL;
	size_t tails = 0;
	int first = 1;

	ga_buf_putc(out, '{');
	key_int(out, &first, "schema", r->schema);
	key_str(out, &first, "gpualert", GA_VERSION);
	key_str(out, &first, "origin", r->origin);
	key_str(out, &first, "job_id", r->job_id);
	key_str(out, &first, "step_id", r->step_id);
	if (r->array_job_id) {
		key_str(out, &first, "array_job_id", r->array_job_id);
		key_str(out, &first, "array_task_id", r->array_task_id);
	}
	key_str(out, &first, "job_name", r->job_name);
	key_str(out, &first, "user", r->user);
	key_int(out, &first, "uid", r->uid);
	key_int(out, &first, "gid", r->gid);
	key_str(out, &first, "node", r->node);
	key_str(out, &first, "work_dir", r->work_dir);
	key_str(out, &first, "command", r->command);
	key_str(out, &first, "mode", r->mode);
	ga_json_key(out, &first, "recipients");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < r->n_recipients; i++) {
		if (i)
			ga_buf_putc(out, ',');
		ga_json_str(out, r->recipients[i]);
	}
	ga_buf_putc(out, ']');
	key_int(out, &first, "start_time", (long long)r->start_time);
	key_int(out, &first, "end_time", (long long)r->end_time);
	if (r->sched_state != GA_STATE_NONE)
		key_str(out, &first, "scheduler_state",
		        ga_sched_state_name(r->sched_state));
	if (r->time_limit > 0)
		key_int(out, &first, "time_limit", (long long)r->time_limit);
	if (r->mem_request) {
		key_int(out, &first, "mem_request", (long long)r->mem_request);
		ga_json_key(out, &first, "mem_per_cpu");
		ga_buf_puts(out, r->mem_per_cpu ? "true" : "false");
	}
	if (r->mem_peak)
		key_int(out, &first, "mem_peak", (long long)r->mem_peak);
	if (r->gres)
		key_str(out, &first, "gres", r->gres);
	if (r->script)
		key_str(out, &first, "script", r->script);
	if (r->notify)
		key_str(out, &first, "notify", r->notify);
	if (r->webhook_url) {
		key_str(out, &first, "webhook_url", r->webhook_url);
		key_str(out, &first, "webhook_format", r->webhook_format);
	}
	key_int(out, &first, "root_task", r->root_task);
	key_str(out, &first, "class", ga_class_name(cls));
	key_str(out, &first, "rule", root ? root->rule : NULL);
	key_str(out, &first, "hint",
	        root ? root->hint : ga_class_default_hint(GA_CLASS_SUCCESS));
	ga_json_key(out, &first, "tasks");
	ga_buf_putc(out, '[');
	for (size_t i = 0; i < r->n_tasks; i++) {
		const struct ga_task_report *t = &r->tasks[i];
		int tf = 1;

		if (i)
			ga_buf_putc(out, ',');
		ga_buf_putc(out, '{');
		key_int(out, &tf, "task_id", t->task_id);
		key_str(out, &tf, "node", t->node);
		key_str(out, &tf, "log_path", t->log_path);
		key_int(out, &tf, "start_time", (long long)t->start_time);
		key_int(out, &tf, "end_time", (long long)t->end_time);
		if (t->end_time_ns > 0)
			key_int(out, &tf, "end_time_ns",
			        (long long)t->end_time_ns);
		if (t->capture_error)
			key_str(out, &tf, "capture_error", t->capture_error);
		if (t->record.present)
			write_record(out, &tf, &t->record);
		ga_json_key(out, &tf, "verdict");
		ga_verdict_write_json(&t->verdict, out);
		if (t->verdict.tail &&
		    ((long)i == r->root_task ||
		     (task_failed(t) && tails < TAILS_IN_REPORT))) {
			/* The tail is bounded by the classifier (lines
			 * and bytes), not by STRING_MAX. */
			ga_json_key(out, &tf, "tail");
			ga_json_str(out, t->verdict.tail);
			tails++;
		}
		ga_buf_putc(out, '}');
	}
	ga_buf_putc(out, ']');
	write_kernel_json(r, out, &first);
	ga_buf_putc(out, '}');
}

/* ---- parsing ---------------------------------------------------------- */

static int copy_str(const struct ga_json *o, const char *key, char **field,
                    bool required)
{
	const struct ga_json *v = ga_json_get(o, key);
	char buf[STRING_MAX + 1];

	if (!v || v->type == GA_JSON_NULL)
		return required ? -EINVAL : 0;
	if (v->type != GA_JSON_STRING)
		return -EINVAL;
	/* A longer string (an older writer) is cut, not refused: a report
	 * is never dead-lettered for its size. */
	return ga_report_set(field, bounded(v->string, v->string_len, buf));
}

static int parse_evidence(const struct ga_json *arr, struct ga_evidence *ev,
                          size_t max, size_t *n)
{
	*n = 0;
	if (!arr)
		return 0;
	if (arr->type != GA_JSON_ARRAY)
		return -EINVAL;
	for (size_t i = 0; i < arr->n && *n < max; i++) {
		const struct ga_json *e = &arr->items[i];
		const char *cls = ga_json_get_str(e, "class");
		int64_t line;
		int c;

		if (!ga_json_get_int(e, "line", &line) || line < 0 || !cls ||
		    (c = ga_class_from_name(cls)) < 0)
			return -EINVAL;
		ev[*n].line = (uint64_t)line;
		ev[*n].cls = (enum ga_class)c;
		if (copy_str(e, "rule", &ev[*n].rule, false) < 0 ||
		    copy_str(e, "text", &ev[*n].text, true) < 0)
			return -EINVAL;
		(*n)++;
	}
	return 0;
}

static int parse_verdict(const struct ga_json *o, struct ga_verdict *v)
{
	const char *cls = ga_json_get_str(o, "class");
	const char *sig = ga_json_get_str(o, "signal");
	const char *state = ga_json_get_str(o, "scheduler_state");
	int64_t n;
	int c;

	if (!cls || (c = ga_class_from_name(cls)) < 0)
		return -EINVAL;
	v->cls = (enum ga_class)c;
	if (copy_str(o, "rule", &v->rule, false) < 0 ||
	    copy_str(o, "hint", &v->hint, false) < 0)
		return -EINVAL;
	if (parse_evidence(ga_json_get(o, "evidence"), v->evidence,
	                   GA_EVIDENCE_MAX, &v->n_evidence) < 0 ||
	    parse_evidence(ga_json_get(o, "also_seen"), v->others,
	                   GA_CLASS_COUNT, &v->n_others) < 0)
		return -EINVAL;
	if (ga_json_get_int(o, "exit_code", &n) && n >= 0 && n <= 255) {
		v->status.known = true;
		v->status.exit_code = (int)n;
	}
	if (sig) {
		int s = ga_signal_from_name(sig);

		if (s <= 0)
			return -EINVAL;
		v->status.known = true;
		v->status.signal = s;
	} else if (ga_json_get_int(o, "signal", &n) && n > 0 && n < 65) {
		v->status.known = true;
		v->status.signal = (int)n;
	}
	if (state) {
		int s = ga_sched_state_from_name(state);

		if (s < 0)
			return -EINVAL;
		v->status.state = (enum ga_sched_state)s;
	}
	if (ga_json_get_int(o, "oom_kills", &n) && n >= 0 && n < 1000000)
		v->status.oom_kills = (int)n;
	if (ga_json_get_int(o, "lines", &n) && n >= 0)
		v->lines = (uint64_t)n;
	if (ga_json_get_int(o, "bytes", &n) && n >= 0)
		v->bytes = (uint64_t)n;
	if (ga_json_get_int(o, "long_lines", &n) && n >= 0)
		v->long_lines = (uint64_t)n;
	v->priority = ga_class_default_priority(v->cls);
	return 0;
}

static void parse_record(const struct ga_json *o, struct ga_task_record *rec)
{
	static const char *const names[] = {"dev",  "ino",     "start", "end",
	                                    "read", "skipped", "cut"};
	uint64_t *fields[] = {&rec->dev,  &rec->ino,     &rec->start, &rec->end,
	                      &rec->read, &rec->skipped, &rec->cut};
	const char *kind;
	int64_t n;

	if (!o || o->type != GA_JSON_OBJECT)
		return;
	rec->present = true;
	kind = ga_json_get_str(o, "kind");
	rec->is_log = kind && !strcmp(kind, "log");
	for (size_t i = 0; i < GA_ARRAY_LEN(names); i++)
		if (ga_json_get_int(o, names[i], &n) && n >= 0)
			*fields[i] = (uint64_t)n;
}

static int parse_task(const struct ga_json *o, struct ga_task_report *t)
{
	const struct ga_json *verdict = ga_json_get(o, "verdict");
	const struct ga_json *tail = ga_json_get(o, "tail");
	int64_t n;

	if (o->type != GA_JSON_OBJECT || !verdict ||
	    !ga_json_get_int(o, "task_id", &n) || n < 0 || n > UINT32_MAX)
		return -EINVAL;
	t->task_id = (uint32_t)n;
	if (ga_json_get_int(o, "start_time", &n))
		t->start_time = n;
	if (ga_json_get_int(o, "end_time", &n))
		t->end_time = n;
	if (ga_json_get_int(o, "end_time_ns", &n) && n > 0)
		t->end_time_ns = n;
	if (copy_str(o, "node", &t->node, false) < 0 ||
	    copy_str(o, "log_path", &t->log_path, false) < 0 ||
	    copy_str(o, "capture_error", &t->capture_error, false) < 0)
		return -EINVAL;
	if (tail && tail->type == GA_JSON_STRING)
		if (ga_report_set(&t->verdict.tail, tail->string) < 0)
			return -ENOMEM;
	parse_record(ga_json_get(o, "record"), &t->record);
	return parse_verdict(verdict, &t->verdict);
}

static int parse_kernel(const struct ga_json *root, struct ga_report *r)
{
	const struct ga_json *arr = ga_json_get(root, "kernel");

	if (copy_str(root, "partition", &r->partition, false) < 0 ||
	    copy_str(root, "gpus", &r->gpus, false) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	if (arr->type != GA_JSON_ARRAY)
		return -EINVAL;
	for (size_t i = 0; i < arr->n && i < GA_REPORT_MAX_KERNEL; i++) {
		const struct ga_json *o = &arr->items[i];
		const struct ga_json *sx = ga_json_get(o, "sxid");
		struct ga_report_kernel *k;
		int64_t n;

		if (o->type != GA_JSON_OBJECT)
			return -EINVAL;
		k = ga_report_add_kernel(r);
		if (!k)
			return -ENOMEM;
		if (copy_str(o, "text", &k->text, true) < 0 ||
		    copy_str(o, "bus_id", &k->bus_id, false) < 0 ||
		    copy_str(o, "match", &k->match, false) < 0 ||
		    copy_str(o, "kind", &k->kind, false) < 0 ||
		    copy_str(o, "action", &k->action, false) < 0)
			return -EINVAL;
		if (ga_json_get_int(o, "time", &n))
			k->time = n;
		if (ga_json_get_int(o, "xid", &n) && n >= 0 && n < 1000000)
			k->xid = (unsigned)n;
		if (ga_json_get_int(o, "pid", &n) && n > 0 && n < 4194305)
			k->pid = (long)n;
		k->sxid = sx && sx->type == GA_JSON_BOOL && sx->boolean;
	}
	return 0;
}

int ga_report_parse_json(const char *text, size_t len, struct ga_report *r,
                         const char **err)
{
	static const struct {
		const char *key;
		size_t offset;
		bool required;
	} strings[] = {
	        {"origin", offsetof(struct ga_report, origin), false},
	        {"job_id", offsetof(struct ga_report, job_id), true},
	        {"step_id", offsetof(struct ga_report, step_id), false},
	        {"array_job_id", offsetof(struct ga_report, array_job_id),
	         false},
	        {"array_task_id", offsetof(struct ga_report, array_task_id),
	         false},
	        {"job_name", offsetof(struct ga_report, job_name), false},
	        {"user", offsetof(struct ga_report, user), false},
	        {"node", offsetof(struct ga_report, node), false},
	        {"work_dir", offsetof(struct ga_report, work_dir), false},
	        {"command", offsetof(struct ga_report, command), false},
	        {"mode", offsetof(struct ga_report, mode), false},
	        {"gres", offsetof(struct ga_report, gres), false},
	        {"script", offsetof(struct ga_report, script), false},
	        {"notify", offsetof(struct ga_report, notify), false},
	        {"webhook_url", offsetof(struct ga_report, webhook_url), false},
	        {"webhook_format", offsetof(struct ga_report, webhook_format),
	         false},
	};
	const struct ga_json *b;
	const struct ga_json *tasks, *recipients;
	const char *state;
	struct ga_json *root;
	int64_t n;
	int rc = -EINVAL;

	root = ga_json_parse(text, len, err);
	if (!root)
		return (err && *err && !strcmp(*err, "out of memory"))
		               ? -ENOMEM
		               : -EINVAL;
	if (err)
		*err = "malformed report";
	if (!ga_json_get_int(root, "schema", &n) || n != GA_REPORT_SCHEMA) {
		if (err)
			*err = "unsupported report schema";
		goto out;
	}
	r->schema = (int)n;
	for (size_t i = 0; i < GA_ARRAY_LEN(strings); i++) {
		char **field = (char **)((char *)r + strings[i].offset);

		if (copy_str(root, strings[i].key, field, strings[i].required) <
		    0)
			goto out;
	}
	if (ga_json_get_int(root, "uid", &n) && n >= 0 && n <= UINT32_MAX)
		r->uid = (uint32_t)n;
	if (ga_json_get_int(root, "gid", &n) && n >= 0 && n <= UINT32_MAX)
		r->gid = (uint32_t)n;
	if (ga_json_get_int(root, "start_time", &n))
		r->start_time = n;
	if (ga_json_get_int(root, "end_time", &n))
		r->end_time = n;
	if (ga_json_get_int(root, "time_limit", &n) && n > 0)
		r->time_limit = n;
	if (ga_json_get_int(root, "mem_request", &n) && n > 0)
		r->mem_request = (uint64_t)n;
	if (ga_json_get_int(root, "mem_peak", &n) && n > 0)
		r->mem_peak = (uint64_t)n;
	b = ga_json_get(root, "mem_per_cpu");
	r->mem_per_cpu = b && b->type == GA_JSON_BOOL && b->boolean;
	state = ga_json_get_str(root, "scheduler_state");
	if (state) {
		int s = ga_sched_state_from_name(state);

		if (s < 0)
			goto out;
		r->sched_state = (enum ga_sched_state)s;
	}
	recipients = ga_json_get(root, "recipients");
	if (recipients) {
		if (recipients->type != GA_JSON_ARRAY)
			goto out;
		for (size_t i = 0; i < recipients->n; i++) {
			const struct ga_json *a = &recipients->items[i];

			if (a->type != GA_JSON_STRING || a->string_len > 254 ||
			    ga_report_add_recipient(r, a->string) < 0)
				goto out;
		}
	}
	tasks = ga_json_get(root, "tasks");
	if (!tasks || tasks->type != GA_JSON_ARRAY ||
	    tasks->n > GA_REPORT_MAX_TASKS)
		goto out;
	for (size_t i = 0; i < tasks->n; i++) {
		struct ga_task_report *t = ga_report_add_task(r);

		if (!t) {
			rc = -ENOMEM;
			goto out;
		}
		if (parse_task(&tasks->items[i], t) < 0) {
			if (err)
				*err = "malformed task entry";
			goto out;
		}
	}
	if (parse_kernel(root, r) < 0) {
		if (err)
			*err = "malformed kernel evidence";
		goto out;
	}
	r->root_task = -1;
	if (ga_json_get_int(root, "root_task", &n) && n >= 0 &&
	    (size_t)n < r->n_tasks)
		r->root_task = (long)n;
	rc = 0;
	if (err)
		*err = NULL;
out:
	ga_json_free(root);
	return rc;
}
