/* SPDX-License-Identifier: MIT */
/* The spool: reports wait here until `gpualert send` delivers them.
 *
 * Writing is the durable way (temp file, fsync, rename, fsync of the
 * directory) so a crash never leaves a half entry under its final name,
 * and bounded (an entry cap and a total cap).  Delivery, retries and the
 * dead-letter folder are `gpualert send`'s (cli/cmd_send.c).
 *
 * Layout under the spool directory (README.md, "Spool layout"):
 *
 *   tmp/              writes in progress (".NAME.XXXXXX"); never read
 *   new/NAME.json     a complete report.  NAME is "<job>.<step>.<node>",
 *                     where <job> is "<array_job_id>_<array_task_id>" for
 *                     an array task, so the job key is the name up to the
 *                     first '_' or '.'
 *   att/NAME/         files collected for report NAME (ga_artifacts_collect)
 *                     and their MANIFEST; complete before new/NAME.json
 *                     appears, so a report never waits for its files
 *   out/CLAIM/        a job the sender has claimed: its reports (moved from
 *                     new/ and att/), message.eml once rendered, and
 *                     "state" (attempts, next try, first seen)
 *   dead/CLAIM/       dead letters: as out/, plus "reason"
 *   sent.log          one line per accepted message, the dedup record
 *
 * A report is always in exactly one of new/, out/ or dead/: moving is a
 * rename(2) within one file system, and nothing is unlinked before the
 * server accepted the message.
 */
#ifndef GPUALERT_COMMON_SPOOL_H
#define GPUALERT_COMMON_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "report.h"

#define GA_SPOOL_NAME_MAX 200

/* Create the spool directories under DIR (mode 0750 for the spool user)
 * if missing.  Returns 0 or -errno (logged). */
int ga_spool_prepare(const char *dir);

/* True when NAME is a plain spool file name: 1..GA_SPOOL_NAME_MAX bytes of
 * [A-Za-z0-9._-], no leading dot, not "." or "..". */
bool ga_spool_name_ok(const char *name);

/* Bytes used under DIR (apparent sizes of regular files, recursively).
 * Returns the total, or 0 if DIR cannot be read. */
uint64_t ga_spool_usage(const char *dir);

/* Write DATA (LEN bytes) as DIR/new/NAME atomically: the temp file is
 * made in DIR/tmp, fsync'ed, renamed into new/ and new/ is fsync'ed.
 * NAME must satisfy ga_spool_name_ok().  Returns 0, -EFBIG (LEN over
 * ENTRY_MAX), -ENOSPC (the spool would exceed TOTAL_MAX, or the disk is
 * full), -EINVAL (bad name) or another -errno.  Every failure is logged as
 * "gpualert: spool: ..."; nothing is left behind on failure. */
int ga_spool_write(const char *dir, const char *name, const void *data,
                   size_t len, uint64_t entry_max, uint64_t total_max);

/* Same durable write into an arbitrary directory DEST_DIR (which must be
 * on the spool's file system; the temp file is made in DEST_DIR itself).
 * No caps.  Used for state files, attachments and message.eml. */
int ga_spool_write_file(const char *dest_dir, const char *name,
                        const void *data, size_t len);

/* The spool name of R without ".json": "<job>.<step>.<node>" with every
 * byte outside [A-Za-z0-9_-] replaced by '-' (array tasks use
 * "<array_job_id>_<array_task_id>" as <job>).  Writes at most SIZE bytes
 * including the NUL.  Returns 0 or -EINVAL (missing ids). */
int ga_spool_report_name(const struct ga_report *r, char *out, size_t size);

/* Render R and put it in CFG's spool as "<name>.json".  Returns as
 * ga_spool_write. */
int ga_spool_put_report(const struct ga_config *cfg, const struct ga_report *r);

/* The job key of a report file name (the part before the first '_' or
 * '.'), copied into OUT (SIZE bytes).  Returns 0 or -EINVAL. */
int ga_spool_job_key(const char *name, char *out, size_t size);

/* ---- The sender's side ---- */

/* Reports waiting in new/, grouped by job key. */
struct ga_spool_group {
	char *key;    /* job key ("1234"; array jobs: the array id) */
	char **names; /* file names in new/, sorted */
	size_t n_names;
	int64_t newest; /* newest mtime of the group's reports */
	bool has_batch; /* a "batch" step report is there */
	bool is_array;  /* names carry "<array>_<task>" */
};

struct ga_spool_scan {
	struct ga_spool_group *groups;
	size_t n_groups;
};

/* List the reports (new/NAME.json) of DIR grouped by job key (groups sorted by key).
 * Caller storage; release with ga_spool_scan_finish().  Returns 0 or
 * -errno. */
int ga_spool_scan_new(const char *dir, struct ga_spool_scan *scan);
void ga_spool_scan_finish(struct ga_spool_scan *scan);

/* Whether group G is complete enough to send at time NOW: the batch
 * step's report ends a (non-array) batch job; otherwise QUIET seconds
 * must have passed since the newest report. */
bool ga_spool_group_due(const struct ga_spool_group *g, int64_t now,
                        unsigned quiet);

/* The claim name of G: "<key>.<16 hex digits>", the hex being a 64-bit
 * FNV-1a hash of the sorted report names and the newest report's mtime,
 * so the same set of reports always gets the same claim (and Message-ID)
 * whatever crashes happen, while a later job that reuses a job id (a
 * wiped slurmctld state) does not look already sent. */
void ga_spool_claim_name(const struct ga_spool_group *g, char *out,
                         size_t size);

/* Claim G: mkdir out/CLAIM, move its reports from new/ (and their att/
 * directories) into it.  Idempotent after a crash half-way.  Returns 0 or
 * -errno. */
int ga_spool_claim(const char *dir, const struct ga_spool_group *g,
                   const char *claim);

/* Delivery state of a claim (out/CLAIM/state, "key=value" lines). */
struct ga_spool_state {
	unsigned attempts;
	int64_t first_seen; /* when it was claimed */
	int64_t next_try;   /* 0: now */
	char last_error[256];
};

/* Read out/CLAIM/state; a missing file yields zeroes and returns 0.
 * Returns 0 or -errno. */
int ga_spool_state_read(const char *claim_dir, struct ga_spool_state *st);
int ga_spool_state_write(const char *claim_dir,
                         const struct ga_spool_state *st);

/* List the claims in DIR/SUB ("out" or "dead"), sorted.  *NAMES is a
 * heap array of heap strings (free each and the array).  Returns 0 or
 * -errno. */
int ga_spool_list(const char *dir, const char *sub, char ***names, size_t *n);

/* Move out/CLAIM to dead/CLAIM and write dead/CLAIM/reason (REASON, one
 * line).  Returns 0 or -errno. */
int ga_spool_bury(const char *dir, const char *claim, const char *reason);

/* Record that MESSAGE_ID of CLAIM for USER was accepted at NOW (append
 * and fsync a line of sent.log), then remove out/CLAIM.  Returns 0 or
 * -errno (the claim stays when the log line could not be written). */
int ga_spool_mark_sent(const char *dir, const char *claim, const char *user,
                       const char *message_id, int64_t now);

/* Remove out/CLAIM without recording anything (it is in sent.log
 * already).  Returns 0 or -errno. */
int ga_spool_drop(const char *dir, const char *claim);

/* True if sent.log records CLAIM (a crash between acceptance and
 * removal): the sender removes the claim instead of sending it again. */
bool ga_spool_was_sent(const char *dir, const char *claim);

/* Remove DIR/tmp entries older than MAX_AGE seconds (leftovers of a crash
 * of a writer).  Returns how many were removed. */
unsigned ga_spool_sweep_tmp(const char *dir, int64_t now, unsigned max_age);

#endif
