/* SPDX-License-Identifier: MIT */
/* Kernel evidence: the Xid/SXid line parser, the /dev/kmsg record format,
 * attribution to a step (by pid, by device, never another job's), the
 * bus-id map from a /proc/driver/nvidia/gpus directory, and the verdict
 * revision.
 *
 * The NVRM lines below have the formats the NVIDIA driver prints; each
 * names where that format was published:
 *  [X]  NVIDIA, "Xid Errors" (docs.nvidia.com/deploy/xid-errors/) and the
 *       Xid catalog: "NVRM: Xid (PCI:0000:xx:00): <code>, pid=<pid>,
 *       name=<process>, <text>".
 *  [DPR] NVIDIA, "Dynamic Page Retirement", visibility: Xid 48/63/64 texts.
 *  [ML] stas00/ml-engineering, compute/accelerator/nvidia/debug.md:
 *       "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row
 *       marked for remapping, reset gpu to activate."
 *  [G46] leptonai/gpud pull request 46 (dmesg excerpts): Xid 13 with
 *       pid='<unknown>', name=<unknown>; Xid 109 with pid=1797828,
 *       name=pt_main_thread.
 *  [G1174] leptonai/gpud pull request 1174: "NVRM: Xid (PCI:0000:9b:00):
 *       94, pid=1234, name=python3, Contained ECC error".
 *  [OK1151] NVIDIA/open-gpu-kernel-modules issue 1151: "NVRM: Xid
 *       (PCI:0000:2b:00): 79, GPU has fallen off the bus." and "NVRM: GPU
 *       0000:2b:00.0: GPU has fallen off the bus."
 *  [PB] a public kernel log (pastebin xJaypMZt) from an old driver:
 *       "NVRM: Xid (0000:01:00): 3, C 00000005 ..." (no "PCI:").
 *  [FM] NVIDIA, "Fabric Manager for NVSwitch Systems", SXid errors:
 *       "nvidia-nvswitch2: SXid (PCI:0000:c2:00.0): 12028, Non-fatal, ..."
 *  [PROC] NVIDIA driver README, "Using the /proc File System Interface",
 *       and a published H100 "information" file (Bus Location, Device
 *       Minor).
 */
#include "kernlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "rules.h"
#include "tap.h"

#define L48 /* [X] [DPR] */                                                    \
	"NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, An "           \
	"uncorrectable double bit error (DBE) has been detected on GPU in "    \
	"the framebuffer at partition 0, subpartition 0."
#define L48_OTHER /* the same fault, another job's process */                  \
	"NVRM: Xid (PCI:0000:3b:00): 48, pid=4321, name=python, An "           \
	"uncorrectable double bit error (DBE) has been detected on GPU in "    \
	"the framebuffer at partition 0, subpartition 0."
#define L79 /* [OK1151] */                                                     \
	"NVRM: Xid (PCI:0000:2b:00): 79, pid='<unknown>', name=<unknown>, "    \
	"GPU has fallen off the bus."
#define L13 /* [G46] */                                                        \
	"NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python, Graphics SM "  \
	"Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction "         \
	"Parameter"
#define L63 /* [ML] */                                                         \
	"NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row "     \
	"marked for remapping, reset gpu to activate."
#define L94 /* [G1174] */                                                      \
	"NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained "   \
	"ECC error"
#define LOLD /* [PB] */                                                        \
	"NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 M 00001ffc Data "   \
	"ffffffff"
#define LBUS /* [OK1151] */                                                    \
	"NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus."
#define LSX_NF /* [FM] */                                                      \
	"nvidia-nvswitch2: SXid (PCI:0000:c2:00.0): 12028, Non-fatal, Link "   \
	"32 egress non-posted PRIV error (First)"
#define LSX_F /* [FM], a fatal one */                                          \
	"nvidia-nvswitch0: SXid (PCI:0000:c4:00.0): 24007, Fatal, Link 20 "    \
	"sourcetrack TCEN0 crumbstore ECC DBE Error (First)"

static struct ga_xid_event parse(const char *s, bool *okp)
{
	struct ga_xid_event ev;

	*okp = ga_xid_parse_line(s, strlen(s), &ev);
	return ev;
}

static void test_parse(void)
{
	struct ga_xid_event ev;
	bool y;
	char bus[GA_BUS_ID_LEN];

	ev = parse(L48, &y);
	ok(y && ev.xid && !ev.sxid && ev.code == 48 && ev.pid == 1234 &&
	           !strcmp(ev.bus_id, "0000:3b:00") &&
	           ev.kind == GA_XID_HARDWARE,
	   "Xid 48: code, pid, bus id, hardware");
	ev = parse(L79, &y);
	ok(y && ev.code == 79 && ev.pid == -1 &&
	           !strcmp(ev.bus_id, "0000:2b:00") &&
	           ev.kind == GA_XID_HARDWARE,
	   "Xid 79 with pid='<unknown>': no pid, hardware");
	ev = parse(L13, &y);
	ok(y && ev.code == 13 && ev.pid == 1234 && ev.kind == GA_XID_APP,
	   "Xid 13: application");
	ev = parse(L63, &y);
	ok(y && ev.code == 63 && ev.pid == 1896 &&
	           !strcmp(ev.bus_id, "0000:10:1c") &&
	           ev.kind == GA_XID_HARDWARE,
	   "Xid 63 (row remapper, no name=): hardware");
	ev = parse(L94, &y);
	ok(y && ev.code == 94 && ev.kind == GA_XID_HARDWARE, "Xid 94");
	ev = parse(LOLD, &y);
	ok(y && ev.code == 3 && !strcmp(ev.bus_id, "0000:01:00") &&
	           ev.kind == GA_XID_OTHER,
	   "old format without PCI: parsed, unknown code is 'other'");
	ev = parse(LBUS, &y);
	ok(y && !ev.xid && !strcmp(ev.bus_id, "0000:2b:00") &&
	           ev.kind == GA_XID_HARDWARE,
	   "fallen off the bus without an Xid number");
	ev = parse(LSX_NF, &y);
	ok(y && ev.sxid && ev.code == 12028 && ev.kind == GA_XID_OTHER,
	   "non-fatal SXid: not decisive");
	ev = parse(LSX_F, &y);
	ok(y && ev.sxid && ev.code == 24007 && ev.kind == GA_XID_HARDWARE &&
	           !strcmp(ev.bus_id, "0000:c4:00"),
	   "fatal SXid: hardware");
	parse("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03", &y);
	ok(!y, "other NVRM lines are not faults");
	parse("EXT4-fs (vda): mounted filesystem", &y);
	ok(!y, "other kernel lines are not faults");
	parse("NVRM: Xid (PCI:0000:3b:00): , pid=1", &y);
	ok(!y, "an Xid without a number is rejected");
	parse("NVRM: Xid (PCI:zz:3b:00): 48, pid=1", &y);
	ok(!y, "a bad bus id is rejected");
	ok(ga_bus_id_normalize("00000000:3B:00.0", 16, bus) == 0 &&
	           !strcmp(bus, "0000:3b:00"),
	   "nvidia-smi's 8-digit domain normalised");
	ok(ga_bus_id_normalize("0001:3B:00.0", 12, bus) == 0 &&
	           !strcmp(bus, "0001:3b:00"),
	   "domain kept");
	ok(ga_bus_id_normalize("3b:00.0", 7, bus) < 0, "no domain: rejected");
	ok(ga_xid_lookup(48, false) && ga_xid_lookup(48, false)->action &&
	           ga_xid_lookup(999, false) == NULL,
	   "table: 48 has an action, 999 is unknown");
}

static void test_kmsg_parse(void)
{
	int64_t ts = 0;
	const char *msg;
	size_t n;
	const char *rec = "3,1234,1740982096,-;" L48;

	ok(ga_kmsg_parse(rec, strlen(rec), &ts, &msg, &n) == 0 &&
	           ts == 1740982096 && n == strlen(L48) &&
	           !strncmp(msg, L48, n),
	   "kmsg record: timestamp and text");
	rec = "6,339,5140900,-,caller=T1;hello";
	ok(ga_kmsg_parse(rec, strlen(rec), &ts, &msg, &n) == 0 &&
	           ts == 5140900 && n == 5,
	   "kmsg record with a caller field");
	ok(ga_kmsg_parse("3,1,x,-;a", 9, &ts, &msg, &n) < 0,
	   "a bad timestamp is rejected");
	ok(ga_kmsg_parse("no semicolon", 12, &ts, &msg, &n) < 0,
	   "no ';': rejected");
}

static char tmpdir[] = "/tmp/gpualert-kernlog-XXXXXX";

static const char *write_log(void)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kmsg", tmpdir);
	f = fopen(path, "w");
	fprintf(f, "6,1,1000000,-;Linux version 6.1.0\n");
	fprintf(f, "3,2,5000000,-;" L48_OTHER "\n"); /* before the step */
	fprintf(f, "6,3,10000000,-;step starts\n");
	fprintf(f, " SUBSYSTEM=pci\n"); /* a continuation line */
	fprintf(f, "3,4,11000000,-;" L48 "\n");
	fprintf(f, "3,5,11500000,-;" L48_OTHER "\n");
	fprintf(f, "3,6,12000000,-;" L79 "\n");
	fprintf(f, "3,7,12500000,-;" LSX_F "\n");
	fprintf(f, "3,8,99000000,-;" L94 "\n"); /* after the step */
	fclose(f);
	return path;
}

static void test_collect(void)
{
	const char *path = write_log();
	pid_t pids[] = {77, 1234};
	char gpus[1][GA_BUS_ID_LEN] = {"0000:2b:00"};
	struct ga_kernel_query q = {
	        .since_us = 9000000,
	        .until_us = 20000000,
	        .pids = pids,
	        .n_pids = 2,
	        .path = path,
	};
	struct ga_kernel_evidence e;
	int rc;

	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	ok(rc == 0 && e.n_lines == 1 && e.lines[0].ev.code == 48 &&
	           e.lines[0].ev.pid == 1234 &&
	           e.lines[0].match == GA_KERNEL_BY_PID,
	   "no GPU allocated: only the Xid naming the step's pid (%zu lines)",
	   e.n_lines);
	ok(e.nv_lines == 4, "four NVIDIA lines in the window (%u)", e.nv_lines);
	ga_kernel_evidence_finish(&e);

	q.bus_ids = gpus;
	q.n_bus_ids = 1;
	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	ok(rc == 0, "collect: %d", rc);
	ok(e.n_lines == 3 && e.lines[1].ev.code == 79 &&
	           e.lines[1].match == GA_KERNEL_BY_DEVICE &&
	           e.lines[2].ev.sxid &&
	           e.lines[2].match == GA_KERNEL_BY_FABRIC,
	   "with GPU 0000:2b:00: + Xid 79 by device, + fatal SXid (%zu)",
	   e.n_lines);
	for (size_t i = 0; i < e.n_lines; i++)
		ok(e.lines[i].ev.pid != 4321,
		   "line %zu is not the other job's pid", i);
	ga_kernel_evidence_finish(&e);

	pids[1] = 5555;
	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	ok(rc == 0, "collect: %d", rc);
	ok(e.n_lines == 2 && e.lines[0].ev.code == 79,
	   "Xid 48 naming an unrelated pid is never the step's, even on one "
	   "of its GPUs");
	ga_kernel_evidence_finish(&e);

	q.path = "/nonexistent/kmsg";
	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	ok(rc == -ENOENT && e.n_lines == 0 && e.error == -ENOENT,
	   "no log: -ENOENT, nothing kept");
	ga_kernel_evidence_finish(&e);

	/* Bounds: two records only. */
	q.path = path;
	q.max_records = 2;
	pids[1] = 1234;
	ga_kernel_evidence_init(&e);
	rc = ga_kernel_evidence_collect(&q, &e);
	ok(rc == 0, "collect: %d", rc);
	ok(e.truncated && e.records <= 2 && e.n_lines == 0,
	   "max_records stops the reading (%u records)", e.records);
	ga_kernel_evidence_finish(&e);
}

static void test_gpus_dir(void)
{
	char d[300], f[400];
	unsigned minors[] = {1, 0, 7};
	char out[3][GA_BUS_ID_LEN];
	FILE *fp;
	int n;

	/* [PROC] */
	const char *info[] = {
	        "Model:           NVIDIA H100 80GB HBM3\n"
	        "IRQ:             10\n"
	        "GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b\n"
	        "Bus Type:        PCIe\n"
	        "Bus Location:    0000:62:00.0\n"
	        "Device Minor:    0\n",
	        "Model:           NVIDIA H100 80GB HBM3\n"
	        "Bus Location:    0000:3B:00.0\n"
	        "Device Minor:    1\n",
	};
	const char *names[] = {"0000:62:00.0", "0000:3b:00.0"};

	for (int i = 0; i < 2; i++) {
		snprintf(d, sizeof(d), "%s/gpus/%s", tmpdir, names[i]);
		snprintf(f, sizeof(f), "%s/gpus", tmpdir);
		mkdir(f, 0755);
		mkdir(d, 0755);
		snprintf(f, sizeof(f), "%s/information", d);
		fp = fopen(f, "w");
		fputs(info[i], fp);
		fclose(fp);
	}
	snprintf(d, sizeof(d), "%s/gpus", tmpdir);
	n = ga_kernel_gpu_bus_ids(d, minors, 3, out);
	ok(n == 2 && !strcmp(out[0], "0000:3b:00") &&
	           !strcmp(out[1], "0000:62:00") && out[2][0] == '\0',
	   "minors 1, 0, 7 -> 0000:3b:00, 0000:62:00, none (%d)", n);
	ok(ga_kernel_gpu_bus_ids("/nonexistent", minors, 3, out) == -ENOENT,
	   "no NVIDIA driver: -ENOENT");
}

static struct ga_ruleset *rs;

static void make_report(struct ga_report *r, const char *log, int code)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	struct ga_task_report *t;
	struct ga_status st;

	ga_report_init(r);
	ga_report_put(&r->job_id, "42");
	ga_report_put(&r->node, "gpu17");
	t = ga_report_add_task(r);
	t->end_time = 100;
	ga_status_from_int(&st, code);
	ga_classifier_feed(c, log, strlen(log));
	ga_classifier_finish(c, &st, &t->verdict);
	ga_classifier_destroy(c);
	ga_report_choose_root(r);
}

static struct ga_kernel_evidence one_line(const char *text)
{
	struct ga_kernel_evidence e;

	ga_kernel_evidence_init(&e);
	e.lines[0].text = strdup(text);
	ga_xid_parse_line(text, strlen(text), &e.lines[0].ev);
	e.lines[0].match = GA_KERNEL_BY_PID;
	e.n_lines = 1;
	return e;
}

static void test_apply(void)
{
	const char *log = "step 10\nRuntimeError: CUDA error: unspecified "
	                  "launch failure\n";
	struct ga_report r, back;
	struct ga_kernel_evidence e;
	struct ga_buf b;
	const char *err = NULL;
	const struct ga_verdict *v;

	make_report(&r, log, 1);
	is_str(ga_class_name(ga_report_class(&r)), "cuda_kernel",
	       "the output alone says cuda_kernel");
	e = one_line(L48);
	ga_report_apply_kernel(&r, &e);
	v = &r.tasks[0].verdict;
	is_str(ga_class_name(ga_report_class(&r)), "gpu_hw",
	       "a hardware Xid of the step outranks it");
	ok(v->n_evidence >= 1 && v->evidence[0].line == 0 &&
	           !strncmp(v->evidence[0].text, "node kernel log: NVRM: Xid",
	                    26),
	   "the kernel line is the first evidence, marked as the kernel log's");
	ok(v->n_others >= 1 && v->others[0].cls == GA_CLASS_CUDA_KERNEL,
	   "cuda_kernel is kept as also seen");
	ok(v->hint && strstr(v->hint, "Xid 48") && strstr(v->hint, "gpu17"),
	   "the hint names the Xid and the node");
	ok(r.n_kernel == 1 && !strcmp(r.kernel[0].kind, "hardware") &&
	           r.kernel[0].action && r.kernel[0].pid == 1234,
	   "the report carries the kernel line with its admin action");

	ga_buf_init(&b);
	ga_report_write_json(&r, &b);
	ga_report_init(&back);
	ok(ga_report_parse_json(b.data, b.len, &back, &err) == 0 &&
	           back.n_kernel == 1 && back.kernel[0].xid == 48 &&
	           !strcmp(back.kernel[0].bus_id, "0000:3b:00") &&
	           !strcmp(back.kernel[0].match, "pid") &&
	           ga_report_class(&back) == GA_CLASS_GPU_HW,
	   "JSON round trip (%s)", err ? err : "ok");
	ok(strstr(b.data, "\"source\":\"kernel_log\"") != NULL,
	   "JSON marks the source");
	ga_report_finish(&back);
	ga_buf_finish(&b);
	ga_report_finish(&r);
	ga_kernel_evidence_finish(&e);

	make_report(&r, log, 1);
	e = one_line(L13);
	ga_report_apply_kernel(&r, &e);
	v = &r.tasks[0].verdict;
	is_str(ga_class_name(ga_report_class(&r)), "cuda_kernel",
	       "an application Xid keeps cuda_kernel");
	ok(v->n_evidence >= 2 &&
	           strstr(v->evidence[v->n_evidence - 1].text, "Xid"),
	   "and supports it as evidence");
	ga_report_finish(&r);
	ga_kernel_evidence_finish(&e);

	make_report(&r, "no clue\n", 3);
	e = one_line(L13);
	ga_report_apply_kernel(&r, &e);
	is_str(ga_class_name(ga_report_class(&r)), "cuda_kernel",
	       "an application Xid turns unknown into cuda_kernel");
	ga_report_finish(&r);
	ga_kernel_evidence_finish(&e);

	make_report(&r, "all good\n", 0);
	e = one_line(L48);
	ga_report_apply_kernel(&r, &e);
	is_str(ga_class_name(ga_report_class(&r)), "success",
	       "a step that succeeded keeps its verdict");
	ok(r.n_kernel == 1, "but carries the line");
	ga_report_finish(&r);
	ga_kernel_evidence_finish(&e);

	/* Old report without the block still parses. */
	{
		const char *old =
		        "{\"schema\":1,\"job_id\":\"1\",\"tasks\":[]}";

		ga_report_init(&back);
		ok(ga_report_parse_json(old, strlen(old), &back, &err) == 0 &&
		           back.n_kernel == 0 && !back.partition,
		   "a report without kernel evidence parses");
		ga_report_finish(&back);
	}
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 1;
	rs = ga_rules_load(NULL, NULL, NULL);
	test_parse();
	test_kmsg_parse();
	test_collect();
	test_gpus_dir();
	test_apply();
	ga_ruleset_destroy(rs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		diag("could not remove %s", tmpdir);
	return tap_done();
}
