/* SPDX-License-Identifier: MIT */
#include "kernlog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "taxonomy.h"

/* A /dev/kmsg read returns one record and fails with EINVAL when the
 * buffer is smaller than it; records are at most about 8 KiB
 * (CONSOLE_EXT_LOG_MAX, Documentation/ABI/testing/dev-kmsg). */
#define READ_BUF (16 * 1024)

void ga_kernel_evidence_init(struct ga_kernel_evidence *e)
{
	memset(e, 0, sizeof(*e));
}

void ga_kernel_evidence_finish(struct ga_kernel_evidence *e)
{
	for (size_t i = 0; i < e->n_lines; i++)
		free(e->lines[i].text);
	memset(e, 0, sizeof(*e));
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* printk stamps records with local_clock(), which runs with
 * CLOCK_MONOTONIC (both stop during suspend); callers add slack. */
int64_t ga_kernel_clock_from_unix(int64_t seconds)
{
	struct timespec rt;
	int64_t now_rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	now_rt = (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000;
	return mono_us() - (now_rt - seconds * 1000000);
}

int ga_kmsg_parse(const char *line, size_t len, int64_t *ts_us,
                  const char **msg, size_t *msg_len)
{
	const char *semi = memchr(line, ';', len), *p = line;
	int field = 0;
	int64_t ts = 0;

	if (!semi)
		return -EINVAL;
	/* PRIO,SEQ,USEC,FLAGS[,more]; */
	while (p < semi && field < 3) {
		const char *comma = memchr(p, ',', (size_t)(semi - p));
		const char *fend = comma ? comma : semi;

		if (fend == p)
			return -EINVAL;
		for (const char *c = p; c < fend; c++)
			if (*c < '0' || *c > '9')
				return -EINVAL;
		if (field == 2) {
			if (fend - p > 18)
				return -EINVAL;
			for (const char *c = p; c < fend; c++)
				ts = ts * 10 + (*c - '0');
		}
		field++;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (field < 3)
		return -EINVAL;
	*ts_us = ts;
	*msg = semi + 1;
	*msg_len = len - (size_t)(semi + 1 - line);
	return 0;
}

static bool pid_in(const struct ga_kernel_query *q, long pid)
{
	for (size_t i = 0; i < q->n_pids; i++)
		if ((long)q->pids[i] == pid)
			return true;
	return false;
}

static bool bus_in(const struct ga_kernel_query *q, const char *bus)
{
	if (!bus[0])
		return false;
	for (size_t i = 0; i < q->n_bus_ids; i++)
		if (!strcmp(q->bus_ids[i], bus))
			return true;
	return false;
}

/* Is EV the step's?  Sets *HOW. */
static bool attribute(const struct ga_kernel_query *q,
                      const struct ga_xid_event *ev, enum ga_kernel_match *how)
{
	if (ev->pid > 0) {
		*how = GA_KERNEL_BY_PID;
		return pid_in(q, ev->pid);
	}
	if (ev->sxid) {
		*how = GA_KERNEL_BY_FABRIC;
		return ev->kind == GA_XID_HARDWARE && q->n_bus_ids > 0;
	}
	*how = GA_KERNEL_BY_DEVICE;
	return bus_in(q, ev->bus_id);
}

static char *clean_copy(const char *s, size_t len)
{
	char *out;

	if (len > GA_KERNEL_TEXT_MAX)
		len = GA_KERNEL_TEXT_MAX;
	out = malloc(len + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' '
		                                                    : s[i];
	out[len] = '\0';
	return out;
}

/* One record line.  Returns 1 to stop (past the window), else 0. */
static int take(const struct ga_kernel_query *q, struct ga_kernel_evidence *e,
                const char *line, size_t len, size_t *bytes, size_t max_bytes)
{
	int64_t ts;
	const char *msg;
	size_t mlen;
	struct ga_xid_event ev;
	enum ga_kernel_match how;
	struct ga_kernel_line *l;

	if (!len || line[0] == ' ') /* a continuation (KEY=value) line */
		return 0;
	if (ga_kmsg_parse(line, len, &ts, &msg, &mlen) < 0)
		return 0;
	e->records++;
	if (ts < q->since_us)
		return 0;
	if (q->until_us && ts > q->until_us)
		return 1;
	/* Cheap test first: most records are not the NVIDIA driver's. */
	if (!memmem(msg, mlen, "NVRM", 4) && !memmem(msg, mlen, "SXid", 4))
		return 0;
	if (!ga_xid_parse_line(msg, mlen, &ev))
		return 0;
	e->nv_lines++;
	if (!attribute(q, &ev, &how))
		return 0;
	if (e->n_lines >= GA_KERNEL_LINES_MAX ||
	    *bytes + (mlen < GA_KERNEL_TEXT_MAX ? mlen : GA_KERNEL_TEXT_MAX) >
	            max_bytes) {
		e->truncated = true;
		return 0;
	}
	l = &e->lines[e->n_lines];
	l->text = clean_copy(msg, mlen);
	if (!l->text)
		return 0;
	*bytes += strlen(l->text);
	l->ts_us = ts;
	l->ev = ev;
	l->match = how;
	e->n_lines++;
	return 0;
}

int ga_kernel_evidence_collect(const struct ga_kernel_query *q,
                               struct ga_kernel_evidence *out)
{
	unsigned max_records = q->max_records ? q->max_records : 100000;
	int64_t deadline = mono_us() +
	                   (int64_t)(q->max_ms ? q->max_ms : 200) * 1000;
	size_t max_bytes = q->max_bytes ? q->max_bytes : 8192, bytes = 0;
	size_t have = 0;
	char *buf;
	int fd, rc = 0;
	bool stop = false;
	unsigned reads = 0;

	fd = open(q->path ? q->path : "/dev/kmsg",
	          O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		out->error = -errno;
		return out->error;
	}
	buf = malloc(READ_BUF);
	if (!buf) {
		close(fd);
		out->error = -ENOMEM;
		return out->error;
	}
	while (!stop) {
		ssize_t n = read(fd, buf + have, READ_BUF - have);
		size_t start = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* EPIPE: the record was overwritten while we read;
			 * the next read returns the oldest one left. */
			if (errno == EPIPE)
				continue;
			if (errno != EAGAIN)
				rc = -errno;
			break; /* EAGAIN: the end of the log, now */
		}
		if (n == 0)
			break;
		have += (size_t)n;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			if (out->records >= max_records) {
				out->truncated = true;
				stop = true;
				break;
			}
			if (take(q, out, buf + start, i - start, &bytes,
			         max_bytes)) {
				stop = true;
				break;
			}
			start = i + 1;
		}
		if (start == 0 && have == READ_BUF)
			start = have; /* an overlong line: drop it */
		memmove(buf, buf + start, have - start);
		have -= start;
		if (!stop && (++reads & 63) == 0 && mono_us() > deadline) {
			out->truncated = true;
			break;
		}
	}
	if (!stop && have && out->records < max_records)
		take(q, out, buf, have, &bytes, max_bytes);
	free(buf);
	close(fd);
	out->error = rc;
	return rc;
}

/* "Bus Location:    0000:62:00.0" and "Device Minor:    5" (NVIDIA driver
 * README, "Using the /proc File System Interface"). */
static int read_information(int dfd, const char *name, char *bus, long *minor)
{
	char path[512], line[256];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/information", name);
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	bus[0] = '\0';
	*minor = -1;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v++;
		v += strspn(v, " \t");
		v[strcspn(v, " \t\r\n")] = '\0';
		if (!strncmp(line, "Bus Location:", 13)) {
			if (ga_bus_id_normalize(v, strlen(v), bus) < 0)
				bus[0] = '\0';
		} else if (!strncmp(line, "Device Minor:", 13)) {
			char *e;
			long m = strtol(v, &e, 10);

			if (e != v && !*e && m >= 0 && m < 4096)
				*minor = m;
		}
	}
	fclose(f);
	return bus[0] && *minor >= 0 ? 0 : -EINVAL;
}

int ga_kernel_gpu_bus_ids(const char *dir, const unsigned *minors,
                          size_t n_minors, char (*out)[GA_BUS_ID_LEN])
{
	DIR *d;
	struct dirent *de;
	int found = 0;
	unsigned entries = 0;

	for (size_t i = 0; i < n_minors; i++)
		out[i][0] = '\0';
	d = opendir(dir ? dir : "/proc/driver/nvidia/gpus");
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL && entries++ < 1024) {
		char bus[GA_BUS_ID_LEN];
		long minor;

		if (de->d_name[0] == '.')
			continue;
		if (read_information(dirfd(d), de->d_name, bus, &minor) < 0)
			continue;
		for (size_t i = 0; i < n_minors; i++) {
			if ((long)minors[i] == minor && !out[i][0]) {
				memcpy(out[i], bus, GA_BUS_ID_LEN);
				found++;
			}
		}
	}
	closedir(d);
	return found;
}

static const char *kind_name(enum ga_xid_kind k)
{
	switch (k) {
	case GA_XID_APP:
		return "application";
	case GA_XID_HARDWARE:
		return "hardware";
	case GA_XID_OTHER:
		break;
	}
	return "other";
}

static const char *match_name(enum ga_kernel_match m)
{
	switch (m) {
	case GA_KERNEL_BY_PID:
		return "pid";
	case GA_KERNEL_BY_DEVICE:
		return "device";
	case GA_KERNEL_BY_FABRIC:
		break;
	}
	return "fabric";
}

static char *evidence_text(const char *text)
{
	struct ga_buf b;

	ga_buf_init(&b);
	ga_buf_printf(&b, "node kernel log: %s", text);
	return ga_buf_steal(&b);
}

static void rule_id(const struct ga_xid_event *ev, char *out, size_t size)
{
	if (ev->sxid)
		snprintf(out, size, "kernel.sxid.%u", ev->code);
	else if (ev->xid)
		snprintf(out, size, "kernel.xid.%u", ev->code);
	else
		snprintf(out, size, "kernel.nvrm");
}

/* Put V's current decision into its also_seen list (one entry). */
static void demote(struct ga_verdict *v)
{
	struct ga_evidence *o;

	if (v->n_others >= GA_CLASS_COUNT)
		return;
	for (size_t i = 0; i < v->n_others; i++)
		if (v->others[i].cls == v->cls)
			return;
	o = &v->others[v->n_others];
	memset(o, 0, sizeof(*o));
	o->cls = v->cls;
	if (v->n_evidence) {
		o->line = v->evidence[0].line;
		o->rule = v->evidence[0].rule;
		o->text = v->evidence[0].text;
		v->evidence[0].rule = v->evidence[0].text = NULL;
	} else {
		o->rule = v->rule ? strdup(v->rule) : NULL;
	}
	if (!o->text)
		o->text = strdup(ga_class_title(v->cls));
	if (!o->text) {
		free(o->rule);
		return;
	}
	v->n_others++;
}

static void clear_evidence(struct ga_verdict *v)
{
	for (size_t i = 0; i < v->n_evidence; i++) {
		free(v->evidence[i].rule);
		free(v->evidence[i].text);
	}
	memset(v->evidence, 0, sizeof(v->evidence));
	v->n_evidence = 0;
}

static void add_evidence(struct ga_verdict *v, const struct ga_kernel_line *l,
                         enum ga_class cls)
{
	char rule[64];
	struct ga_evidence *ev;

	if (v->n_evidence >= GA_EVIDENCE_MAX)
		return;
	ev = &v->evidence[v->n_evidence];
	rule_id(&l->ev, rule, sizeof(rule));
	ev->line = 0;
	ev->cls = cls;
	ev->rule = strdup(rule);
	ev->text = evidence_text(l->text);
	if (!ev->rule || !ev->text) {
		free(ev->rule);
		free(ev->text);
		memset(ev, 0, sizeof(*ev));
		return;
	}
	v->n_evidence++;
}

static void add_other(struct ga_verdict *v, const struct ga_kernel_line *l,
                      enum ga_class cls)
{
	char rule[64];
	struct ga_evidence *o;

	for (size_t i = 0; i < v->n_others; i++)
		if (v->others[i].cls == cls)
			return;
	if (v->n_others >= GA_CLASS_COUNT)
		return;
	o = &v->others[v->n_others];
	rule_id(&l->ev, rule, sizeof(rule));
	o->line = 0;
	o->cls = cls;
	o->rule = strdup(rule);
	o->text = evidence_text(l->text);
	if (!o->rule || !o->text) {
		free(o->rule);
		free(o->text);
		memset(o, 0, sizeof(*o));
		return;
	}
	v->n_others++;
}

static void set_hint(struct ga_verdict *v, const struct ga_report *r,
                     const struct ga_kernel_line *l)
{
	const struct ga_xid_info *info = ga_xid_lookup(l->ev.code, l->ev.sxid);
	struct ga_buf b;

	ga_buf_init(&b);
	ga_buf_printf(&b,
	              "The GPU failed under the job: the node's kernel log has "
	              "%s %u (%s)",
	              l->ev.sxid ? "SXid" : "Xid", l->ev.code,
	              info ? info->title : "NVIDIA driver fault");
	if (l->ev.bus_id[0])
		ga_buf_printf(&b, " for GPU %s", l->ev.bus_id);
	ga_buf_printf(&b,
	              " on %s. The error in the job's output is its echo, not "
	              "a bug in the code: resubmit the job (avoid the node "
	              "with --exclude=%s until the admins have checked it).",
	              r->node ? r->node : "this node",
	              r->node ? r->node : "NODE");
	free(v->hint);
	v->hint = ga_buf_steal(&b);
}

void ga_report_apply_kernel(struct ga_report *r,
                            const struct ga_kernel_evidence *e)
{
	const struct ga_kernel_line *hw = NULL, *app = NULL;
	struct ga_verdict *v;

	for (size_t i = 0; i < e->n_lines; i++) {
		const struct ga_kernel_line *l = &e->lines[i];
		const struct ga_xid_info *info = ga_xid_lookup(l->ev.code,
		                                               l->ev.sxid);
		struct ga_report_kernel *k = ga_report_add_kernel(r);

		if (l->ev.kind == GA_XID_HARDWARE && !hw)
			hw = l;
		if (l->ev.kind == GA_XID_APP && !app)
			app = l;
		if (!k)
			continue;
		k->time = l->ts_us;
		k->xid = l->ev.code;
		k->sxid = l->ev.sxid;
		k->pid = l->ev.pid;
		ga_report_put(&k->text, l->text);
		ga_report_put(&k->bus_id,
		              l->ev.bus_id[0] ? l->ev.bus_id : NULL);
		ga_report_put(&k->match, match_name(l->match));
		ga_report_put(&k->kind, kind_name(l->ev.kind));
		ga_report_put(&k->action, info && l->ev.kind == GA_XID_HARDWARE
		                                  ? info->action
		                                  : NULL);
	}
	if (r->root_task < 0 || (size_t)r->root_task >= r->n_tasks ||
	    (!hw && !app))
		return;
	v = &r->tasks[r->root_task].verdict;
	if (v->cls == GA_CLASS_TIME_LIMIT || v->cls == GA_CLASS_CANCELLED ||
	    v->cls == GA_CLASS_SUCCESS) {
		add_other(v, hw ? hw : app,
		          hw ? GA_CLASS_GPU_HW : GA_CLASS_CUDA_KERNEL);
		return;
	}
	if (hw) {
		char rule[64];

		if (v->cls != GA_CLASS_GPU_HW) {
			demote(v);
			clear_evidence(v);
		}
		v->cls = GA_CLASS_GPU_HW;
		v->priority = ga_class_default_priority(GA_CLASS_GPU_HW);
		rule_id(&hw->ev, rule, sizeof(rule));
		ga_report_put(&v->rule, rule);
		set_hint(v, r, hw);
		/* The kernel lines first: they decided it. */
		{
			struct ga_evidence keep[GA_EVIDENCE_MAX];
			size_t n_keep = v->n_evidence;

			memcpy(keep, v->evidence, sizeof(keep));
			memset(v->evidence, 0, sizeof(v->evidence));
			v->n_evidence = 0;
			for (size_t i = 0; i < e->n_lines; i++)
				if (e->lines[i].ev.kind == GA_XID_HARDWARE)
					add_evidence(v, &e->lines[i],
					             GA_CLASS_GPU_HW);
			for (size_t i = 0; i < n_keep; i++) {
				if (v->n_evidence < GA_EVIDENCE_MAX) {
					v->evidence[v->n_evidence++] = keep[i];
				} else {
					free(keep[i].rule);
					free(keep[i].text);
				}
			}
		}
		return;
	}
	if (v->cls == GA_CLASS_UNKNOWN) {
		char rule[64];

		v->cls = GA_CLASS_CUDA_KERNEL;
		v->priority = ga_class_default_priority(GA_CLASS_CUDA_KERNEL);
		rule_id(&app->ev, rule, sizeof(rule));
		ga_report_put(&v->rule, rule);
		ga_report_put(&v->hint,
		              ga_class_default_hint(GA_CLASS_CUDA_KERNEL));
	}
	if (v->cls == GA_CLASS_CUDA_KERNEL)
		add_evidence(v, app, GA_CLASS_CUDA_KERNEL);
	else
		add_other(v, app, GA_CLASS_CUDA_KERNEL);
}
