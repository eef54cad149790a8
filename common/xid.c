/* SPDX-License-Identifier: MIT */
#include "xid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Sources of the table:
 * - NVIDIA, "Xid Errors" (docs.nvidia.com/deploy/xid-errors/), the Xid
 *   catalog for Ampere and newer ("Analyzing Xid Errors with the Xid
 *   Catalog": mnemonic, immediate and investigatory resolution buckets
 *   such as RESTART_APP, RESET_GPU, CONTACT_SUPPORT) and the older table
 *   ("Xid and SXid Errors") with its "possible causes" columns (HW error,
 *   driver error, user application error, system memory corruption, bus
 *   error, thermal issue, FB corruption).
 * - NVIDIA, "Dynamic Page Retirement" (docs.nvidia.com/deploy/
 *   dynamic-page-retirement/): Xid 48 is a DBE, 63 a retired page or
 *   remapped row, 64 a failed retirement.
 * - NVIDIA, "Fabric Manager for NVSwitch Systems" user guide, "NVSwitch
 *   SXid errors": SXids are reported by the NVSwitch driver; fatal ones
 *   need the GPUs and NVSwitches reset.
 * Codes absent from the table are treated as GA_XID_OTHER: shown as
 * evidence, never decisive. */
static const struct ga_xid_info xids[] = {
        {8, GA_XID_OTHER, "GPU stopped processing (idle timeout)",
         "restart the application; contact support if it repeats"},
        {13, GA_XID_APP, "Graphics Engine Exception",
         "none for the node: usually an out-of-range access in the "
         "application; run field diagnostics if it repeats across users"},
        {31, GA_XID_APP, "GPU memory page fault (MMU fault)",
         "none for the node: usually an illegal address in the "
         "application; run field diagnostics if it repeats across users"},
        {32, GA_XID_OTHER, "Invalid or corrupted push buffer stream",
         "check the PCIe link and system memory if it repeats"},
        {43, GA_XID_APP, "GPU stopped processing (channel reset)",
         "none for the node: the application's channel faulted"},
        {45, GA_XID_OTHER, "Preemptive cleanup, due to previous errors",
         "look at the Xid that preceded it"},
        {48, GA_XID_HARDWARE, "Double-bit ECC error (DBE)",
         "drain the node, reset the GPU; if Xid 63/64 do not follow or it "
         "repeats, run field diagnostics and RMA"},
        {61, GA_XID_HARDWARE, "Internal micro-controller breakpoint/warning",
         "drain the node and reset the GPU; contact support if it repeats"},
        {62, GA_XID_HARDWARE, "Internal micro-controller halt",
         "drain the node and reset the GPU; contact support if it repeats"},
        {63, GA_XID_HARDWARE,
         "ECC page retirement or row remapping recording event",
         "reset the GPU when it is idle to activate the remapped row"},
        {64, GA_XID_HARDWARE,
         "ECC page retirement or row remapper recording failure",
         "drain the node, run field diagnostics; RMA the GPU if it fails"},
        {68, GA_XID_OTHER, "NVDEC0 exception",
         "restart the application; contact support if it repeats"},
        {69, GA_XID_APP, "Graphics Engine class error",
         "none for the node: the application issued an invalid method"},
        {74, GA_XID_HARDWARE, "NVLink error",
         "drain the node, reset the GPU; check the NVLink connections and "
         "run field diagnostics if it repeats"},
        {79, GA_XID_HARDWARE, "GPU has fallen off the bus",
         "drain the node and reboot it; check PCIe, power and cooling; RMA "
         "if it repeats"},
        {92, GA_XID_HARDWARE, "High single-bit ECC error rate",
         "run field diagnostics at the next maintenance window"},
        {94, GA_XID_HARDWARE, "Contained ECC error",
         "reset the GPU when it is idle (row remapping); other jobs may "
         "keep running"},
        {95, GA_XID_HARDWARE, "Uncontained ECC error",
         "drain the node and reset the GPU"},
        {109, GA_XID_OTHER, "Context switch timeout",
         "restart the application; contact support if it repeats"},
        {119, GA_XID_HARDWARE, "GSP RPC timeout",
         "drain the node and reset the GPU; update the driver or RMA if it "
         "repeats"},
        {120, GA_XID_HARDWARE, "GSP error",
         "drain the node and reset the GPU; update the driver or RMA if it "
         "repeats"},
        {140, GA_XID_HARDWARE, "Unrecovered ECC error",
         "drain the node and reset the GPU"},
        {144, GA_XID_HARDWARE, "NVLink SAW error",
         "drain the node, reset the GPU, check the NVLink fabric"},
        {145, GA_XID_HARDWARE, "NVLink RLW error",
         "drain the node, reset the GPU, check the NVLink fabric"},
        {149, GA_XID_HARDWARE, "NVLink NETIR error",
         "drain the node, reset the GPU, check the NVLink fabric"},
};

static const struct ga_xid_info sxid_info = {
        0, GA_XID_HARDWARE, "NVSwitch error (SXid)",
        "fatal SXid: drain the node, reset the GPUs and NVSwitches (restart "
        "the fabric manager); RMA the baseboard if it repeats"};

const struct ga_xid_info *ga_xid_lookup(unsigned code, bool sxid)
{
	if (sxid)
		return &sxid_info;
	for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++)
		if (xids[i].code == code)
			return &xids[i];
	return NULL;
}

static bool hexdigits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

int ga_bus_id_normalize(const char *text, size_t len, char *out)
{
	const char *p = text, *end = text + len, *c1, *c2;
	size_t dl, bl, vl;

	if (len >= 4 && !strncasecmp(p, "PCI:", 4))
		p += 4;
	/* domain:bus:device[.function] */
	c1 = memchr(p, ':', (size_t)(end - p));
	if (!c1)
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2)
		return -EINVAL;
	dl = (size_t)(c1 - p);
	bl = (size_t)(c2 - c1 - 1);
	vl = 0;
	while (c2 + 1 + vl < end && isxdigit((unsigned char)c2[1 + vl]))
		vl++;
	if (!hexdigits(p, dl) || dl > 8 || !hexdigits(c1 + 1, bl) || bl > 2 ||
	    vl == 0 || vl > 2)
		return -EINVAL;
	/* nvidia-smi prints an 8-digit domain; keep the low 4 digits, as
	 * Xid lines and /proc/driver/nvidia/gpus do. */
	if (dl > 4) {
		for (size_t i = 0; i < dl - 4; i++)
			if (p[i] != '0')
				return -EINVAL;
		p += dl - 4;
		dl = 4;
	}
	{
		char tmp[GA_BUS_ID_LEN];
		unsigned long d = strtoul(p, NULL, 16);
		unsigned long b = strtoul(c1 + 1, NULL, 16);
		unsigned long v = strtoul(c2 + 1, NULL, 16);

		snprintf(tmp, sizeof(tmp), "%04lx:%02lx:%02lx", d & 0xffff,
		         b & 0xff, v & 0xff);
		memcpy(out, tmp, GA_BUS_ID_LEN);
	}
	return 0;
}

static const char *find(const char *s, size_t len, const char *needle)
{
	if (!s || !len)
		return NULL;
	return memmem(s, len, needle, strlen(needle));
}

/* "(PCI:0000:3b:00)" or "(0000:3b:00)" right after P (spaces allowed). */
static const char *parse_paren_bus(const char *p, const char *end, char *bus)
{
	const char *close;

	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p != '(')
		return NULL;
	close = memchr(p, ')', (size_t)(end - p));
	if (!close ||
	    ga_bus_id_normalize(p + 1, (size_t)(close - p - 1), bus) < 0)
		return NULL;
	return close + 1;
}

static long parse_pid(const char *s, size_t len)
{
	const char *p = find(s, len, "pid=");
	char *e;
	long v;

	if (!p)
		return -1;
	p += 4;
	if (p >= s + len || !isdigit((unsigned char)*p))
		return -1; /* pid='<unknown>' */
	v = strtol(p, &e, 10);
	if (v <= 0 || v > 4194304) /* PID_MAX_LIMIT */
		return -1;
	return v;
}

bool ga_xid_parse_line(const char *text, size_t len, struct ga_xid_event *ev)
{
	const char *end = text + len, *p;
	const struct ga_xid_info *info;

	memset(ev, 0, sizeof(*ev));
	ev->pid = -1;
	if ((p = find(text, len, "NVRM: Xid")) != NULL) {
		p += strlen("NVRM: Xid");
	} else if ((p = find(text, len, ": SXid")) != NULL &&
	           find(text, (size_t)(p - text), "nvswitch")) {
		p += strlen(": SXid");
		ev->sxid = true;
	} else if ((p = find(text, len, "NVRM: ")) != NULL) {
		/* Fault lines without an Xid number, e.g.
		 * "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus." */
		const char *q = find(text, len, "GPU at PCI:");
		const char *r = find(text, len, "NVRM: GPU ");

		if (!find(text, len, "fallen off the bus") &&
		    !find(text, len, "ECC") && !find(text, len, "Row Remap") &&
		    !find(text, len, "row remap"))
			return false;
		if (q)
			q += strlen("GPU at ");
		else if (r)
			q = r + strlen("NVRM: GPU ");
		if (q) {
			size_t n = 0;

			while (q + n < end && q[n] != ' ' && q[n] != ',' &&
			       q[n] != ')')
				n++;
			if (n && q[n - 1] == ':')
				n--;
			if (ga_bus_id_normalize(q, n, ev->bus_id) < 0)
				ev->bus_id[0] = '\0';
		}
		ev->kind = GA_XID_HARDWARE;
		ev->pid = parse_pid(text, len);
		return true;
	} else {
		return false;
	}
	p = parse_paren_bus(p, end, ev->bus_id);
	if (!p || p >= end || *p != ':')
		return false;
	p++;
	while (p < end && *p == ' ')
		p++;
	if (p >= end || !isdigit((unsigned char)*p))
		return false;
	{
		unsigned long code = 0;

		while (p < end && isdigit((unsigned char)*p) && code < 100000)
			code = code * 10 + (unsigned long)(*p++ - '0');
		ev->code = (unsigned)code;
	}
	ev->xid = true;
	ev->pid = ev->sxid ? -1 : parse_pid(p, (size_t)(end - p));
	info = ga_xid_lookup(ev->code, ev->sxid);
	ev->kind = info ? info->kind : GA_XID_OTHER;
	/* A non-fatal SXid is a warning about the fabric, not a cause. */
	if (ev->sxid && find(p, (size_t)(end - p), "Non-fatal"))
		ev->kind = GA_XID_OTHER;
	return true;
}
