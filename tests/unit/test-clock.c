/* SPDX-License-Identifier: MIT */
/* common/clock.h: the wall clock, or the one a test sets. */
#include "clock.h"

#include <stdlib.h>
#include <time.h>

#include "tap.h"

static void near_wall(const char *what)
{
	int64_t before = (int64_t)time(NULL);
	int64_t got = ga_clock_now();
	int64_t after = (int64_t)time(NULL);

	ok(got >= before && got <= after, "%s: the wall clock", what);
}

int main(void)
{
	unsetenv(GA_CLOCK_ENV);
	near_wall("unset");
	setenv(GA_CLOCK_ENV, "1000", 1);
	is_int(ga_clock_now(), 1000, "set: its value");
	setenv(GA_CLOCK_ENV, "4102444800", 1);
	is_int(ga_clock_now(), 4102444800LL, "past 2^31: its value");
	setenv(GA_CLOCK_ENV, "1000", 1);
	is_int(ga_clock_now(), 1000, "read again at every call");
	setenv(GA_CLOCK_ENV, "", 1);
	near_wall("empty");
	setenv(GA_CLOCK_ENV, "12abc", 1);
	near_wall("trailing garbage");
	setenv(GA_CLOCK_ENV, "-5", 1);
	near_wall("negative");
	setenv(GA_CLOCK_ENV, " 5", 1);
	near_wall("leading space");
	setenv(GA_CLOCK_ENV, "99999999999999999999999", 1);
	near_wall("out of range");
	return tap_done();
}
