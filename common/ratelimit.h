/* SPDX-License-Identifier: MIT */
/* Retry backoff and send-rate limits of `gpualert send`.
 *
 * Pure arithmetic over caller-supplied times so tests need no clock.  A
 * rate-limited message is deferred, never dropped: the limiter says how
 * long to wait.
 */
#ifndef GPUALERT_COMMON_RATELIMIT_H
#define GPUALERT_COMMON_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

/* Delay before retry number ATTEMPTS (1 = the first retry): BASE doubled
 * each time, capped at CAP seconds (no overflow whatever ATTEMPTS). */
uint64_t ga_backoff_delay(unsigned base, unsigned attempts, uint64_t cap);

/* A sliding one-hour window of sends, per user and in total. */
struct ga_rate;

/* PER_USER and GLOBAL are the most messages in any 3600 s window (0: no
 * limit).  Returns NULL on ENOMEM. */
struct ga_rate *ga_rate_create(unsigned per_user, unsigned global);
void ga_rate_destroy(struct ga_rate *r);

/* Seconds USER must wait at time NOW before one more message fits both
 * limits; 0 when it may be sent now. */
int64_t ga_rate_wait(const struct ga_rate *r, const char *user, int64_t now);

/* Count a message for USER sent at NOW (older entries fall out of the
 * window here).  Returns 0 or -ENOMEM. */
GA_MUST_CHECK int ga_rate_record(struct ga_rate *r, const char *user,
                                 int64_t now);

/* Feed the window from a sent.log ("TIME USER CLAIM MESSAGE-ID" lines) so
 * a restarted sender keeps counting.  Only real deliveries count: lines
 * whose MESSAGE-ID is a "(...)" note ("(log-only)", "(success,
 * fail-only)": nothing was sent) are skipped.  Returns 0, or -errno other than
 * ENOENT. */
GA_MUST_CHECK int ga_rate_load_log(struct ga_rate *r, const char *path,
                                   int64_t now);

#endif
