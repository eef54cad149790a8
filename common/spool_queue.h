/* SPDX-License-Identifier: MIT */
/* The spool as `gpualert send` works it (layout: spool.h): reports in
 * new/ grouped by job, claimed into out/, buried in dead/, recorded in
 * sent.log.  Nothing here runs under slurmstepd.
 */
#ifndef GPUALERT_COMMON_SPOOL_QUEUE_H
#define GPUALERT_COMMON_SPOOL_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool.h"
#include "util.h"

/* Reports waiting in new/, grouped by job key. */
struct ga_spool_group {
	char *key;    /* job key ("1234.u1000"; array jobs: the array id) */
	char **names; /* file names in new/, sorted */
	size_t n_names;
	int64_t newest; /* newest mtime of the group's reports */
	bool has_batch; /* a "batch" step report is there */
	bool is_array;  /* names carry "<array>_<task>" */
	bool has_uid;   /* names carry ".u<uid>" (all but older ones) */
	uint32_t uid;
};

struct ga_spool_scan {
	struct ga_spool_group *groups;
	size_t n_groups;
};

/* List the reports (new/NAME.json) of DIR grouped by job key (groups sorted by key).
 * Caller storage; release with ga_spool_scan_finish().  Returns 0 or
 * -errno. */
GA_MUST_CHECK int ga_spool_scan_new(const char *dir,
                                    struct ga_spool_scan *scan);
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
GA_MUST_CHECK int ga_spool_claim(const char *dir,
                                 const struct ga_spool_group *g,
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
GA_MUST_CHECK int ga_spool_state_read(const char *claim_dir,
                                      struct ga_spool_state *st);
GA_MUST_CHECK int ga_spool_state_write(const char *claim_dir,
                                       const struct ga_spool_state *st);

/* List the claims in DIR/SUB ("out" or "dead"), sorted.  *NAMES is a
 * heap array of heap strings (free each and the array).  Returns 0 or
 * -errno. */
GA_MUST_CHECK int ga_spool_list(const char *dir, const char *sub, char ***names,
                                size_t *n);

/* Move out/CLAIM to dead/CLAIM and write dead/CLAIM/reason (REASON, one
 * line).  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_bury(const char *dir, const char *claim,
                                const char *reason);

/* Take report NAME (a file name "...json" in out/CLAIM) and its att/
 * directory out of CLAIM into dead/NAME-without-.json/, with REASON
 * (one line) in its "reason" file: a report that must not go out with the
 * others (a uid that differs from the claim's).  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_separate(const char *dir, const char *claim,
                                    const char *name, const char *reason);

/* Record that MESSAGE_ID of CLAIM for USER was accepted at NOW (append
 * and fsync a line of sent.log), then remove out/CLAIM.  USER and
 * MESSAGE_ID come from reports: every byte outside printable ASCII, and
 * every space in USER and CLAIM, is written as '?', so a value cannot
 * forge a line or a field.  MESSAGE_ID is "<...>" for a delivered
 * message, or a "(...)" note when nothing was sent (log-only, fail-only):
 * the rate limit counts only the former.  Returns 0 or
 * -errno (the claim stays when the log line could not be written). */
GA_MUST_CHECK int ga_spool_mark_sent(const char *dir, const char *claim,
                                     const char *user, const char *message_id,
                                     int64_t now);

/* Remove out/CLAIM without recording anything (it is in sent.log
 * already).  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_drop(const char *dir, const char *claim);

/* True if sent.log records CLAIM (a crash between acceptance and
 * removal): the sender removes the claim instead of sending it again. */
bool ga_spool_was_sent(const char *dir, const char *claim);

/* Remove DIR/tmp entries older than MAX_AGE seconds (leftovers of a crash
 * of a writer).  Returns how many were removed. */
unsigned ga_spool_sweep_tmp(const char *dir, int64_t now, unsigned max_age);

/* Remove DIR/att/NAME directories older than MAX_AGE seconds that have no
 * report new/NAME.json (a writer that died between collecting and
 * writing, or a name lock never released).  Returns how many were
 * removed. */
unsigned ga_spool_sweep_att(const char *dir, int64_t now, unsigned max_age);

#endif
