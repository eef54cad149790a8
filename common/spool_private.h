/* SPDX-License-Identifier: MIT */
/* Helpers shared by the spool's writer (spool.c, artifacts.c) and its
 * sender side (spool_queue.c); not for other modules. */
#ifndef GPUALERT_COMMON_SPOOL_PRIVATE_H
#define GPUALERT_COMMON_SPOOL_PRIVATE_H

#include <stdbool.h>
#include <sys/types.h>
#include "util.h"

/* Who gets what a root writer creates: DIR's owner and group, when the
 * caller is root and DIR is not root's.  False otherwise. */
bool ga_spool_owner_of(const char *dir, uid_t *owner, gid_t *group);

/* fsync(2) the directory DIR.  Returns 0 or -errno.  Not must-check:
 * after a rename that already happened, the sender's steps are
 * idempotent, and a file system that cannot fsync a directory must not
 * turn a done move into a failure. */
int ga_spool_fsync_dir(const char *dir);

/* Remove PATH and everything under it, not following links.  Returns 0
 * or -errno. */
int ga_spool_remove_tree(const char *path);

#endif
