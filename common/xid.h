/* SPDX-License-Identifier: MIT */
/* NVIDIA driver fault lines: the Xid/SXid decode table and the parser of
 * the kernel log lines that carry them.
 *
 * An Xid line is printed by the NVIDIA kernel driver (NVRM) when a GPU
 * reports an error, e.g.
 *   NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, An uncorrectable
 *         double bit error (DBE) has been detected on GPU ...
 * An SXid line comes from the NVSwitch driver:
 *   nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 12028, Non-fatal, Link 32 ...
 * The table says, per code, whether the fault is the hardware's (the job is
 * a victim: gpu_hw) or caused by the application (it supports the
 * application-level cuda_kernel verdict), and what an admin should do.
 */
#ifndef GPUALERT_COMMON_XID_H
#define GPUALERT_COMMON_XID_H

#include <stdbool.h>
#include <stddef.h>

enum ga_xid_kind {
	GA_XID_APP = 0,  /* caused by the application's GPU code */
	GA_XID_HARDWARE, /* a fault of the GPU, its memory or its links */
	GA_XID_OTHER,    /* driver or system event; not decisive alone */
};

struct ga_xid_info {
	unsigned code;
	enum ga_xid_kind kind;
	const char *title;  /* short description */
	const char *action; /* suggested admin action */
};

/* The table entry for Xid CODE (SXID: an NVSwitch SXid), or NULL when the
 * code is not in the table.  Static storage. */
const struct ga_xid_info *ga_xid_lookup(unsigned code, bool sxid);

/* A bus id normalised for comparison: "dddd:bb:dd" (PCI domain, bus and
 * device, lower case, no function), as Xid lines print it. */
#define GA_BUS_ID_LEN 16

struct ga_xid_event {
	bool sxid;     /* an NVSwitch SXid line */
	bool xid;      /* an Xid or SXid line (else: another fault line) */
	unsigned code; /* Xid/SXid number; 0 for other fault lines */
	long pid;      /* pid=N; -1 when absent or '<unknown>' */
	char bus_id[GA_BUS_ID_LEN]; /* "" when the line names no device */
	enum ga_xid_kind kind;
};

/* Parse one kernel message (the text after the kmsg header, without a
 * newline).  Recognises "NVRM: Xid (...)", "nvidia-nvswitchN: SXid (...)"
 * and NVRM lines about ECC errors, row remapping or a GPU fallen off the
 * bus.  Returns true and fills EV for such a line, false for anything
 * else (EV is then unspecified). */
bool ga_xid_parse_line(const char *text, size_t len, struct ga_xid_event *ev);

/* Normalise a PCI address ("0000:3B:00.0", "00000000:3b:00.0",
 * "PCI:0000:3b:00") into OUT (GA_BUS_ID_LEN bytes).  Returns 0, or -EINVAL
 * when TEXT is not a PCI address. */
int ga_bus_id_normalize(const char *text, size_t len, char *out);

#endif
