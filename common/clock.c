/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int64_t ga_clock_now(void)
{
	const char *v = getenv(GA_CLOCK_ENV);

	if (v && *v >= '0' && *v <= '9') {
		char *end;
		long long t;

		errno = 0;
		t = strtoll(v, &end, 10);
		if (!errno && !*end)
			return (int64_t)t;
	}
	return (int64_t)time(NULL);
}
