/* SPDX-License-Identifier: MIT */
/* Files sent along with a report: the job's full logs and the artifacts
 * matched by the admin's globs in the job's working directory.
 *
 * They are collected when the report is spooled, by the job's user, and
 * copied into the spool (att/NAME/), so `gpualert send` never opens a
 * user's file and never needs the job's file system.
 */
#ifndef GPUALERT_COMMON_ARTIFACTS_H
#define GPUALERT_COMMON_ARTIFACTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spool.h"
#include "util.h"

#define GA_ARTIFACTS_MAX_FILES 32

/* Collect into SLOT's att/NAME directory (SLOT: opened by
 * ga_spool_slot_open with an attachment budget, not yet committed):
 *   1. each of the N_LOGS files in LOG_PATHS (the full logs), gzip-
 *      compressed when only that makes it fit;
 *   2. files in WORK_DIR matching GLOBS (comma-separated glob(3)
 *      patterns, relative, no ".."), in pattern order;
 * while their total stays within SLOT->att_budget bytes (reserved in the
 * spool's accounting before anything is written).  What does not fit or
 * cannot be read is recorded in the MANIFEST with its size and the reason,
 * so the mail can list it.  SLOT->att_used is set to the bytes written.
 *
 * Privileges: when the caller is root and UID is not, the reading happens
 * in a forked child that has dropped to UID/GID (setgroups, setregid,
 * setreuid) with O_NOFOLLOW opens; it streams the files to the parent
 * through a pipe, and the parent -- which owns the spool -- writes them,
 * re-checking every size and name since the child runs as the user.  A
 * non-root caller reads with its own identity.  The files written are
 * given to the spool directory's owner (spool.h, "Ownership").
 *
 * Deadline: the child is killed (SIGKILL) TIMEOUT_MS after the fork
 * whatever it is doing (a hung NFS or FUSE path blocks it in the kernel).
 * The files it sent before are kept; each log it had not sent, and the
 * globs when it had not finished them, are listed in the MANIFEST as not
 * collected, with the deadline as the reason.
 *
 * Returns 0 (even when some files were skipped or the deadline passed), or
 * -errno (fork, pipe, spool writes, -EINVAL for a slot without a budget);
 * on failure att/NAME is left empty and the report can still be committed
 * without files. */
GA_MUST_CHECK int ga_artifacts_collect(struct ga_spool_slot *slot, uid_t uid,
                                       gid_t gid, const char *work_dir,
                                       const char *const *log_paths,
                                       size_t n_logs, const char *globs,
                                       unsigned timeout_ms);

#endif
