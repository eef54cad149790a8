/* SPDX-License-Identifier: MIT */
/* The durable per-task log: its name, its safe creation and its header.
 *
 * Slurm-free: the plugin (slurm_spank_task_init, already running as the
 * job's user) and `gpualert run` call the same code.  The file is created
 * before the task runs anything, so a task that dies at once still leaves
 * a log with its header.
 */
#ifndef GPUALERT_COMMON_LOGFILE_H
#define GPUALERT_COMMON_LOGFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "util.h"

/* What a pattern may refer to.  Strings are borrowed; NULL reads as "". */
struct ga_log_ids {
	const char *job_id;   /* %j */
	const char *step_id;  /* %s ("0", "batch", ...) */
	uint32_t task_id;     /* %t, global rank */
	const char *user;     /* %u */
	const char *job_name; /* %x */
	const char *node;     /* %N */
	const char *work_dir; /* %w, absolute */
};

/* Expand PATTERN into OUT (SIZE bytes) with Slurm's %j %s %t %u %x %N,
 * plus %w (the job's working directory) and %% (a literal %).
 *
 * Every substituted value except %w is made a single safe name component:
 * bytes outside [A-Za-z0-9._+-] become '_' and a value of "", "." or ".."
 * becomes "_", so user-controlled job names cannot add directories or walk
 * up.  %w must be an absolute path without "." or ".." components.  The
 * result must be absolute, without "." or ".." components, no component
 * over NAME_MAX, and shorter than SIZE.
 *
 * Returns 0, -EINVAL (unknown or trailing '%', a bad %w, a relative result
 * or a "."/".." component; *WHY, if given, says which, static string) or
 * -ENAMETOOLONG. */
GA_MUST_CHECK int ga_logfile_expand(const char *pattern,
                                    const struct ga_log_ids *ids, char *out,
                                    size_t size, const char **why);

/* Open PATH for appending, as the calling process's credentials (callers
 * drop privileges first), creating it with MODE (e.g. 0600, umask not
 * applied) and O_EXCL.  Directory components are walked one by one: a
 * symlink there is followed only when it belongs to the caller's euid or
 * to root (a path through another user's symlink is refused with -ELOOP).
 * The last directory is created (0700) when missing; others are not.
 *
 * An existing file at the name is reused (a requeued job) only when the
 * directory is not writable by others and the file is a regular file of
 * the caller's with one link and no wider mode than MODE.  Otherwise
 * (planted by someone else, a hard link, a symlink, a FIFO) a fresh
 * "NAME.XXXXXX" is created with O_EXCL instead and *NOTE (static string,
 * may be NULL) says so.  ACTUAL (may be NULL) gets the path really used.
 * Returns the fd or -errno. */
GA_MUST_CHECK int ga_logfile_open(const char *path, unsigned mode, char *actual,
                                  size_t actual_size, const char **note);

/* What the header says. Strings are borrowed; NULL reads as "?". */
struct ga_log_header {
	const char *job_id;
	const char *step_id;
	uint32_t task_id;
	const char *node;
	const char *user;
	int argc; /* the command line, quoted for the header */
	char *const *argv;
	time_t start;
	const char *version;
};

/* Write the header (a few "# key: value" lines, control characters
 * replaced, the command line bounded to 4 KiB) to FD with write(2), so it
 * is in the file before the task's first byte.  Returns 0 or -errno. */
GA_MUST_CHECK int ga_logfile_write_header(int fd,
                                          const struct ga_log_header *h);

/* The header's last line; the task's output starts right after it. */
#define GA_LOG_HEADER_END "# ---- output ----\n"

#endif
