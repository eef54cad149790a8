/* SPDX-License-Identifier: MIT */
/* stats.log: a report becomes one tab-separated record whatever its
 * strings hold, and reads back the same. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

int main(void)
{
	struct ga_report r;
	struct ga_report_kernel *k;
	struct ga_task_report *t;
	struct ga_stats_record rec, back;
	char line[2048];

	ga_report_init(&r);
	ga_report_put(&r.job_id, "42");
	ga_report_put(&r.step_id, "batch");
	ga_report_put(&r.node, "gpu\t17\nx");
	ga_report_put(&r.user, "alice smith");
	ga_report_put(&r.gpus, "0000:3b:00,0000:62:00");
	r.end_time = 1700000000;
	t = ga_report_add_task(&r);
	t->verdict.cls = GA_CLASS_GPU_HW;
	ga_report_choose_root(&r);
	k = ga_report_add_kernel(&r);
	ga_report_put(&k->kind, "hardware");
	ga_report_put(&k->bus_id, "0000:3b:00");
	k->xid = 48;
	k = ga_report_add_kernel(&r);
	ga_report_put(&k->kind, "application");
	k->xid = 13;

	ga_stats_from_report(&r, 5, &rec);
	is_str(rec.node, "gpu_17_x", "tabs and newlines cannot split a record");
	is_str(rec.user, "alice_smith", "spaces replaced");
	is_str(rec.partition, "-", "unknown partition is '-'");
	is_str(rec.cls, "gpu_hw", "class");
	is_str(rec.faults, "xid48@0000:3b:00",
	       "only hardware kernel lines are faults");
	is_int(rec.time, 1700000000, "end time");

	snprintf(line, sizeof(line), "%lld\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s",
	         (long long)rec.time, rec.job, rec.step, rec.node, rec.user,
	         rec.partition, rec.cls, rec.gpus, rec.faults);
	ok(ga_stats_parse(line, &back) == 0 &&
	           !memcmp(&rec, &back, sizeof(rec)),
	   "a record reads back the same");
	ok(ga_stats_parse("1\ta\tb", &back) < 0, "too few fields: rejected");
	ok(ga_stats_parse("x\t1\t2\t3\t4\t5\t6\t7\t8", &back) < 0,
	   "a bad time: rejected");
	ok(ga_stats_parse("1\t1\t2\t3\t4\t5\t6\t7\t8\t9", &back) < 0,
	   "too many fields: rejected");
	ga_report_finish(&r);
	return tap_done();
}
