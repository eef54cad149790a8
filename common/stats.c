/* SPDX-License-Identifier: MIT */
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "taxonomy.h"

static void field(char *out, size_t size, const char *v)
{
	size_t n = 0;

	if (!v || !*v) {
		snprintf(out, size, "-");
		return;
	}
	for (; *v && n + 1 < size; v++) {
		char c = *v;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9') || strchr("._:@,+-", c);

		out[n++] = keep ? c : '_';
	}
	out[n] = '\0';
}

void ga_stats_from_report(const struct ga_report *r, int64_t now,
                          struct ga_stats_record *rec)
{
	struct ga_buf b;

	memset(rec, 0, sizeof(*rec));
	rec->time = r->end_time ? r->end_time : now;
	field(rec->job, sizeof(rec->job), r->job_id);
	field(rec->step, sizeof(rec->step), r->step_id);
	field(rec->node, sizeof(rec->node), r->node);
	field(rec->user, sizeof(rec->user), r->user);
	field(rec->partition, sizeof(rec->partition), r->partition);
	field(rec->cls, sizeof(rec->cls), ga_class_name(ga_report_class(r)));
	field(rec->gpus, sizeof(rec->gpus), r->gpus);
	ga_buf_init(&b);
	for (size_t i = 0; i < r->n_kernel; i++) {
		const struct ga_report_kernel *k = &r->kernel[i];

		if (!k->kind || strcmp(k->kind, "hardware"))
			continue;
		ga_buf_printf(&b, "%s%s%u@%s", b.len ? "," : "",
		              k->sxid ? "sxid" : "xid", k->xid,
		              k->bus_id ? k->bus_id : "-");
	}
	field(rec->faults, sizeof(rec->faults), b.len ? b.data : NULL);
	ga_buf_finish(&b);
}

int ga_stats_append(const char *spool, const struct ga_stats_record *rec)
{
	char path[4096], line[2048];
	int fd, n, rc = 0;

	snprintf(path, sizeof(path), "%s/stats.log", spool);
	n = snprintf(
	        line, sizeof(line), "%lld\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
	        (long long)rec->time, rec->job, rec->step, rec->node, rec->user,
	        rec->partition, rec->cls, rec->gpus, rec->faults);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EOVERFLOW;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	          0640);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n)
		rc = -EIO;
	close(fd);
	return rc;
}

int ga_stats_parse(const char *line, struct ga_stats_record *rec)
{
	char *fields[9], *copy = strdup(line), *p, *e;
	size_t n = 0;
	struct {
		char *dst;
		size_t size;
	} dst[8];
	int rc = -EINVAL;

	if (!copy)
		return -ENOMEM;
	memset(rec, 0, sizeof(*rec));
	for (p = copy; n < 9; n++) {
		fields[n] = p;
		p = strchr(p, '\t');
		if (!p) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	if (n != 9 || p) /* fewer or more than nine fields */
		goto out;
	rec->time = strtoll(fields[0], &e, 10);
	if (e == fields[0] || *e)
		goto out;
	dst[0].dst = rec->job, dst[0].size = sizeof(rec->job);
	dst[1].dst = rec->step, dst[1].size = sizeof(rec->step);
	dst[2].dst = rec->node, dst[2].size = sizeof(rec->node);
	dst[3].dst = rec->user, dst[3].size = sizeof(rec->user);
	dst[4].dst = rec->partition, dst[4].size = sizeof(rec->partition);
	dst[5].dst = rec->cls, dst[5].size = sizeof(rec->cls);
	dst[6].dst = rec->gpus, dst[6].size = sizeof(rec->gpus);
	dst[7].dst = rec->faults, dst[7].size = sizeof(rec->faults);
	for (int i = 0; i < 8; i++)
		field(dst[i].dst, dst[i].size, fields[i + 1]);
	rc = 0;
out:
	free(copy);
	return rc;
}
