/* SPDX-License-Identifier: MIT */
/* The admin channel: hardware verdicts reported to the site ([admin] mail
 * and webhook), once per node and GPU per [admin] period.
 *
 * `gpualert send` calls ga_admin_observe() once for each job it takes up
 * (every report, whatever its mode, is also appended to stats.log) and
 * ga_admin_flush() once per pass.  Faults seen within the period of the
 * last message about a node and GPU are kept in SPOOL/admin.state and
 * listed in the next message; a failed delivery is retried at the next
 * pass.  The message names the node, the GPU bus id, the Xid with its
 * meaning, the kernel line, the jobs affected and the suggested action.
 */
#ifndef GPUALERT_COMMON_ADMIN_NOTIFY_H
#define GPUALERT_COMMON_ADMIN_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "report.h"
#include "util.h"

/* Record the N REPORTS of one job (stats.log, admin.state) and deliver
 * what is due.  Errors are logged; returns the number of admin messages
 * delivered. */
int ga_admin_observe(const struct ga_config *cfg, const char *spool,
                     const struct ga_report *const *reports, size_t n,
                     int64_t now);

/* Deliver the admin messages that are due.  Returns the number
 * delivered. */
int ga_admin_flush(const struct ga_config *cfg, const char *spool, int64_t now);

#endif
