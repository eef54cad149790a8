/* SPDX-License-Identifier: MIT */
/* The spool: reports wait here until `gpualert send` delivers them.
 *
 * Writing is the durable way (temp file, fsync, rename, fsync of the
 * directory) so a crash never leaves a half entry under its final name,
 * and bounded (an entry cap and a total cap).  Delivery, retries and the
 * dead-letter folder are `gpualert send`'s (cli/cmd_send.c).
 *
 * Layout under the spool directory:
 *
 *   tmp/              writes in progress (".NAME.XXXXXX"); never read
 *   new/NAME.json     a complete report.  NAME is
 *                     "<job>.<step>.<node>.u<uid>" (ga_spool_report_name),
 *                     optionally followed by ".<n>" when that name was
 *                     taken; <job> is "<array_job_id>_<array_task_id>" for
 *                     an array task.  The job key is <job> up to its '_',
 *                     plus the uid: reports of different users never share
 *                     a key, so they are never merged into one message
 *   att/NAME/         files collected for report NAME (ga_artifacts_collect)
 *                     and their MANIFEST.  The empty directory is created
 *                     first, as the lock on NAME (ga_spool_slot_open); the
 *                     files arrive before new/NAME.json does, so a report
 *                     never waits for its files
 *   usage/            the accounting: "total" and "u<uid>" hold the bytes
 *                     of the entries (new/, att/, out/, dead/, tmp/),
 *                     updated under flock(2) on "total" by every write and
 *                     reconciled by the sender's scan (ga_spool_reconcile)
 *   out/CLAIM/        a job the sender has claimed: its reports (moved from
 *                     new/ and att/), message.eml once rendered, and
 *                     "state" (attempts, next try, first seen).  CLAIM is
 *                     "<key>.<16 hex digits>"
 *   dead/CLAIM/       dead letters: as out/, plus "reason"
 *   sent.log          one line per accepted message, the dedup record
 *
 * A report is always in exactly one of new/, out/ or dead/: moving is a
 * rename(2) within one file system, and nothing is unlinked before the
 * server accepted the message.
 *
 * Ownership (the sender runs as an unprivileged service user).  The admin
 * creates the spool directory, owned by that user, with
 *
 *   install -d -o gpualert -g gpualert -m 0750 /var/spool/gpualert
 *
 * A writer running as root (the plugin in slurmstepd) gives everything it
 * creates under the spool -- subdirectories (0750), entries and their
 * files (0640), the accounting files -- to the spool directory's owner and
 * group (fchown before the entry becomes visible), so the sender can read,
 * move and delete all of it.  A writer that is not root creates files as
 * itself; the sender and the writer are then the same user.
 */
#ifndef GPUALERT_COMMON_SPOOL_H
#define GPUALERT_COMMON_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "report.h"
#include "util.h"

#define GA_SPOOL_NAME_MAX 200

/* Create the spool directories under DIR if missing (mode 0750).  When
 * the caller is root and DIR belongs to another user, the subdirectories
 * (new or left by an older version) are given to DIR's owner and group.
 * Returns 0 or -errno (logged). */
GA_MUST_CHECK int ga_spool_prepare(const char *dir);

/* True when NAME is a plain spool file name: 1..GA_SPOOL_NAME_MAX bytes of
 * [A-Za-z0-9._-], no leading dot, not "." or "..". */
bool ga_spool_name_ok(const char *name);

/* Bytes used under DIR (apparent sizes of regular files, recursively).
 * Walks the whole tree: never called on the write path (the benchmark
 * uses it as the baseline of the old accounting).  Returns the total, or 0
 * if DIR cannot be read. */
uint64_t ga_spool_usage(const char *dir);

/* ---- Writing ---- */

/* The most ".<n>" suffixes a writer tries before giving up on a name. */
#define GA_SPOOL_MAX_SEQ 64

/* Write DATA (LEN bytes) as DIR/new/NAME atomically: the temp file is
 * made in DIR/tmp, fsync'ed, and moved into new/ with
 * renameat2(RENAME_NOREPLACE) (link(2) + unlink(2) where the file system
 * lacks it), then new/ is fsync'ed.  An existing new/NAME is never
 * replaced.  NAME must satisfy ga_spool_name_ok().  No accounting: the
 * caller holds a reservation (ga_spool_slot_open) or accepts none.
 * Returns 0, -EEXIST (new/NAME exists: nothing was written; the writer
 * picks another name and calls again), -EINVAL (bad name) or another
 * -errno (-ENOSPC/-EDQUOT: the disk).  Failures other than -EEXIST are
 * logged as "gpualert: spool: ..."; nothing is left behind on failure. */
GA_MUST_CHECK int ga_spool_write(const char *dir, const char *name,
                                 const void *data, size_t len);

/* Same durable write into an arbitrary directory DEST_DIR (which must be
 * on the spool's file system; the temp file is made in DEST_DIR itself).
 * Replaces DEST_DIR/NAME.  No caps.  Used for state files, attachments and
 * message.eml.  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_write_file(const char *dest_dir, const char *name,
                                      const void *data, size_t len);

/* The spool name of R without ".json": "<job>.<step>.<node>.u<uid>", with
 * every byte of the ids outside [A-Za-z0-9_-] replaced by '-' (array tasks
 * use "<array_job_id>_<array_task_id>" as <job>).  Writes at most SIZE
 * bytes including the NUL.  Returns 0, -EINVAL (missing ids) or
 * -ENAMETOOLONG (SIZE too small: nothing is cut silently). */
GA_MUST_CHECK int ga_spool_report_name(const struct ga_report *r, char *out,
                                       size_t size);

/* A report on its way into the spool: its name is held and its bytes are
 * reserved against the caps before anything is written.
 *
 *   struct ga_spool_slot s;
 *   if (ga_spool_slot_open(cfg, r, want_files ? cfg->attach_budget : 0,
 *                          &s) == 0) {
 *           if (s.att_budget)
 *                   ga_artifacts_collect(&s, ...);   // into att/NAME
 *           rc = ga_spool_slot_commit(&s);           // new/NAME.json
 *   }
 *   ga_spool_slot_close(&s);
 *
 * Fields are read-only for callers. */
struct ga_spool_slot {
	const char *dir;                  /* borrowed from the config */
	char name[GA_SPOOL_NAME_MAX + 1]; /* without ".json" */
	char base[GA_SPOOL_NAME_MAX + 1]; /* the name without ".<n>" */
	uint32_t uid;                     /* the report's uid */
	uint64_t att_budget; /* bytes reserved for att/NAME (0: none) */
	uint64_t att_used;   /* bytes written there (ga_artifacts_collect) */
	uint64_t reserved;   /* bytes held in the accounting */
	char *json;          /* the rendered report (owned) */
	size_t json_len;
	bool att_held;  /* att/NAME exists and is ours */
	bool committed; /* new/NAME.json is in place */
	bool owner_set; /* root writer: chown to the spool's owner */
	uid_t owner;
	gid_t group;
};

/* Render R and reserve its place in CFG's spool:
 *   1. the JSON (long strings cut by ga_report_write_json) must fit
 *      [spool] entry_max (else -EFBIG);
 *   2. its bytes plus ATT_BUDGET are reserved against [spool] total_max
 *      and R's uid's share of it ([spool] user_share), in the usage/
 *      counters under flock(2): O(1), whatever waits in the spool.  When
 *      the report fits but not with ATT_BUDGET, it is reserved without
 *      attachments (S->att_budget = 0, logged); when it does not fit at
 *      all: -ENOSPC;
 *   3. a free name is held: att/NAME is created with mkdir(2) (which
 *      fails if another writer holds it) and new/NAME.json must not
 *      exist; a taken name gets the next ".<n>" suffix (up to
 *      GA_SPOOL_MAX_SEQ, else -EEXIST).
 * S is caller storage, valid for ga_spool_slot_close() whatever this
 * returns.  Returns 0, -EFBIG, -ENOSPC, -EEXIST, -EINVAL (no job id) or
 * another -errno; failures are logged. */
GA_MUST_CHECK int ga_spool_slot_open(const struct ga_config *cfg,
                                     const struct ga_report *r,
                                     uint64_t att_budget,
                                     struct ga_spool_slot *s);

/* Write new/NAME.json (ga_spool_write), then give back the part of the
 * reservation the attachments did not use.  Returns 0 or as
 * ga_spool_write; on -EEXIST (a writer that held no lock took the name)
 * the slot moves its att/ directory to the next free name and writes
 * there, so -EEXIST reaches the caller only once GA_SPOOL_MAX_SEQ names
 * are taken. */
GA_MUST_CHECK int ga_spool_slot_commit(struct ga_spool_slot *s);

/* Release S: an uncommitted slot gives back its reservation and removes
 * att/NAME; a committed one only frees memory.  Accepts a slot whose open
 * failed, and a zeroed one. */
void ga_spool_slot_close(struct ga_spool_slot *s);

/* Render R and put it in CFG's spool, without attachments: slot open,
 * commit, close.  Returns as ga_spool_slot_open / _commit. */
GA_MUST_CHECK int ga_spool_put_report(const struct ga_config *cfg,
                                      const struct ga_report *r);

/* The job key of a report file name: the job id up to its first '_' or
 * '.', followed by ".u<uid>" when NAME carries a uid (every name this
 * version writes), copied into OUT (SIZE bytes).  Returns 0 or -EINVAL. */
GA_MUST_CHECK int ga_spool_job_key(const char *name, char *out, size_t size);

/* The uid a report name ("<job>.<step>.<node>.u<uid>[.<n>][.json]") or a
 * claim name ("<job>.u<uid>.<hash>") carries.  Returns 0, or -ENOENT for a
 * name without one (written by an older version). */
GA_MUST_CHECK int ga_spool_name_uid(const char *name, uint32_t *uid);

/* ---- Accounting ---- */

/* Add DELTA (may be negative) to the usage of UID and to the total, under
 * the lock; counters never go below 0.  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_account(const char *dir, uint32_t uid,
                                   int64_t delta);

/* Read the counters: the total and UID's bytes.  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_usage_of(const char *dir, uint32_t uid,
                                    uint64_t *total, uint64_t *user);

/* The sender's reconciliation: walk new/, att/, out/, dead/ and tmp/,
 * sum the bytes of each uid (from the entry names; tmp/ and names
 * without a uid count in the total only) and set the counters to them.
 * Writes that reserved while the walk ran keep their reservation (the
 * counters' change during the walk is added back), so a reconciliation
 * can only over-count for one pass, never lose a reservation made during
 * it.  Returns 0 or -errno. */
GA_MUST_CHECK int ga_spool_reconcile(const char *dir);

#endif
