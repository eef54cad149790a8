/* The spool: reports wait here until `gpualert send` delivers them.
 *
 * Writing is the durable way (temp file, fsync, rename, fsync of the
 * directory) so a crash never leaves a half entry under its final name,
 * and bounded (an entry cap and a total cap).  Delivery, retries and the
 * dead-letter folder are `gpualert send`'s (cli/cmd_send.c).
 */
#ifndef GPUALERT_COMMON_SPOOL_H
#define GPUALERT_COMMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "report.h"

/* Write DATA (LEN bytes) as DIR/NAME atomically.  NAME must be a plain
 * file name ([A-Za-z0-9._-], no leading dot).  Returns 0, -EFBIG (LEN over
 * ENTRY_MAX), -ENOSPC (the spool would exceed TOTAL_MAX, or the disk is
 * full), -EINVAL (bad name) or another -errno.  Every failure is logged. */
int ga_spool_write(const char *dir, const char *name, const void *data,
		   size_t len, uint64_t entry_max, uint64_t total_max);

/* Render R and put it in CFG's spool as "<job>.<step>.<node>.json" (a
 * name derived from R's ids, sanitised).  Returns as ga_spool_write. */
int ga_spool_put_report(const struct ga_config *cfg, const struct ga_report *r);

#endif
