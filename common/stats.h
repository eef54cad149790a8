/* SPDX-License-Identifier: MIT */
/* The failure history behind `gpualert stats` and the admin channel.
 *
 * sent.log records who was mailed, not why; `gpualert send` therefore
 * appends one line per report it takes up to SPOOL/stats.log:
 *   TIME JOB STEP NODE USER PARTITION CLASS GPUS FAULTS
 * separated by tabs, "-" for an unknown value; GPUS the step's bus ids
 * (comma-separated), FAULTS the hardware kernel lines ("xid48@0000:3b:00",
 * "sxid24007@0000:c4:00", comma-separated).  Values are reduced to
 * [A-Za-z0-9._:@,+-] so a line is always one record.
 */
#ifndef GPUALERT_COMMON_STATS_H
#define GPUALERT_COMMON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "util.h"

#define GA_STATS_FIELD_MAX 128

struct ga_stats_record {
	int64_t time;
	char job[GA_STATS_FIELD_MAX], step[GA_STATS_FIELD_MAX];
	char node[GA_STATS_FIELD_MAX], user[GA_STATS_FIELD_MAX];
	char partition[GA_STATS_FIELD_MAX], cls[GA_STATS_FIELD_MAX];
	char gpus[GA_STATS_FIELD_MAX * 2], faults[GA_STATS_FIELD_MAX * 2];
};

/* Fill REC from report R seen at NOW. */
void ga_stats_from_report(const struct ga_report *r, int64_t now,
                          struct ga_stats_record *rec);

/* Append REC to SPOOL/stats.log (O_APPEND, one write).  Returns 0 or
 * -errno. */
GA_MUST_CHECK int ga_stats_append(const char *spool,
                                  const struct ga_stats_record *rec);

/* Parse one stats.log line (without its newline).  Returns 0 or
 * -EINVAL. */
GA_MUST_CHECK int ga_stats_parse(const char *line, struct ga_stats_record *rec);

#endif
