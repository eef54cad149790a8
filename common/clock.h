/* SPDX-License-Identifier: MIT */
/* The sender's clock, injectable for tests. */
#ifndef GPUALERT_COMMON_CLOCK_H
#define GPUALERT_COMMON_CLOCK_H

#include <stdint.h>

/* The variable that sets the clock: tests only.  The delivery tests let a
 * retry delay or a quiet period pass by setting it, instead of sleeping. */
#define GA_CLOCK_ENV "GPUALERT_TEST_NOW"

/* Seconds since the epoch: time(2), or the value of GPUALERT_TEST_NOW when
 * the environment holds one that is a whole decimal number >= 0 (anything
 * else there is ignored).  Read at every call, so a test can move it
 * between two runs of a command. */
int64_t ga_clock_now(void);

#endif
