/* SPDX-License-Identifier: MIT */
/* Kernel evidence: the NVIDIA driver's fault lines (Xid, SXid, ECC, row
 * remapping) logged on this node during a step, kept only when they are
 * the step's.
 *
 * The job's own output rarely shows a GPU fault for what it is ("CUDA
 * error: unspecified launch failure"); the driver's Xid line in the
 * kernel log does, and only root can read it.  The reader is bounded
 * (records, matched lines, bytes, time), never blocks (O_NONBLOCK on
 * /dev/kmsg) and finds nothing on a node without NVIDIA drivers.
 *
 * A line is the step's when
 *   - it names a pid (pid=N) that is one of the step's processes, or
 *   - it names no pid (pid='<unknown>', or none) and its PCI bus id is
 *     one of the GPUs allocated to the step, or
 *   - it is a fatal NVSwitch SXid and the step has GPUs on this node.
 * A line naming another pid is never the step's, whatever its device.
 */
#ifndef GPUALERT_COMMON_KERNLOG_H
#define GPUALERT_COMMON_KERNLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report.h"
#include "xid.h"
#include "util.h"

#define GA_KERNEL_LINES_MAX 16
#define GA_KERNEL_TEXT_MAX 512

struct ga_kernel_query {
	/* The step's lifetime on the kernel log's clock (CLOCK_MONOTONIC,
	 * microseconds): ga_kernel_clock_from_unix() converts wall-clock
	 * seconds.  UNTIL_US 0: up to now. */
	int64_t since_us, until_us;
	const pid_t *pids; /* the step's processes; borrowed */
	size_t n_pids;
	/* The step's GPUs as normalised bus ids (ga_bus_id_normalize);
	 * borrowed. */
	const char (*bus_ids)[GA_BUS_ID_LEN];
	size_t n_bus_ids;
	/* NULL: /dev/kmsg.  Tests pass a file in the same record format
	 * ("PRIO,SEQ,USEC,FLAGS;TEXT" lines). */
	const char *path;
	unsigned max_records; /* 0: 100000 */
	unsigned max_ms;      /* time budget; 0: 200 */
	size_t max_bytes;     /* text kept, all lines; 0: 8 KiB */
};

enum ga_kernel_match {
	GA_KERNEL_BY_PID = 0,
	GA_KERNEL_BY_DEVICE,
	GA_KERNEL_BY_FABRIC,
};

struct ga_kernel_line {
	int64_t ts_us; /* kernel log time, microseconds since boot */
	char *text;    /* the message, cleaned, at most GA_KERNEL_TEXT_MAX */
	struct ga_xid_event ev;
	enum ga_kernel_match match;
};

struct ga_kernel_evidence {
	struct ga_kernel_line lines[GA_KERNEL_LINES_MAX];
	size_t n_lines;
	unsigned records;  /* kernel log records read */
	unsigned nv_lines; /* NVIDIA fault lines in the window, the step's
	                      or not */
	bool truncated;    /* a bound stopped the reading or the keeping */
	int error;         /* 0, or -errno of opening/reading the log */
};

/* Caller storage. */
void ga_kernel_evidence_init(struct ga_kernel_evidence *e);
void ga_kernel_evidence_finish(struct ga_kernel_evidence *e);

/* Read the kernel log for Q's window and keep the step's NVIDIA fault
 * lines in OUT (initialised by the caller).  Returns 0 (OUT may hold no
 * line), or -errno when the log cannot be opened (-EPERM when not root,
 * -ENOENT without /dev/kmsg); OUT->error says the same.  Never blocks. */
GA_MUST_CHECK int ga_kernel_evidence_collect(const struct ga_kernel_query *q,
                                             struct ga_kernel_evidence *out);

/* Unix time SECONDS on the kernel log's clock (CLOCK_MONOTONIC, us). */
int64_t ga_kernel_clock_from_unix(int64_t seconds);

/* Parse one /dev/kmsg record "PRIO,SEQ,USEC,FLAGS[,...];TEXT".  Sets
 * *TS_US and *MSG and *MSG_LEN (pointing into LINE).  Returns 0 or -EINVAL. */
GA_MUST_CHECK int ga_kmsg_parse(const char *line, size_t len, int64_t *ts_us,
                                const char **msg, size_t *msg_len);

/* The GPUs' bus ids from DIR (default /proc/driver/nvidia/gpus): each
 * subdirectory's "information" file has "Bus Location: 0000:3b:00.0" and
 * "Device Minor: N".  For each of the N_MINORS device minors (nvidiaN,
 * the indexes in SLURM_STEP_GPUS/CUDA_VISIBLE_DEVICES on a node whose
 * gres.conf lists /dev/nvidia[0-N] in order), the matching bus id is
 * written to OUT[i] ("" when not found).  Returns the number found, or
 * -errno when DIR cannot be read (-ENOENT: no NVIDIA driver). */
GA_MUST_CHECK int ga_kernel_gpu_bus_ids(const char *dir, const unsigned *minors,
                                        size_t n_minors,
                                        char (*out)[GA_BUS_ID_LEN]);

/* Add E's lines to R (r->kernel, marked as coming from the node's kernel
 * log) and revise the root task's verdict:
 *   - a hardware Xid/SXid makes a failed step gpu_hw (the application
 *     error it caused goes to also_seen), unless the scheduler stopped
 *     the job (time_limit, cancelled: the line is then also_seen);
 *   - an application Xid (13, 31, 43, ...) is added as evidence of a
 *     cuda_kernel verdict, turns an unknown one into cuda_kernel, and is
 *     only also_seen under any other class.
 * A step whose tasks all succeeded keeps its verdict.  Allocation
 * failures leave R consistent with less evidence. */
void ga_report_apply_kernel(struct ga_report *r,
                            const struct ga_kernel_evidence *e);

#endif
