/* Minimal TAP (Test Anything Protocol) output for the notify unit tests. */
#ifndef GPUALERT_TESTS_NOTIFY_TAP_H
#define GPUALERT_TESTS_NOTIFY_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

/* COND is evaluated exactly once: tests call the code under test in it. */
#define ok(cond, ...)                                                          \
	do {                                                                   \
		int tap_ok_ = !!(cond);                                        \
		tap_n++;                                                       \
		if (!tap_ok_)                                                  \
			tap_failed++;                                          \
		printf("%sok %d - ", tap_ok_ ? "" : "not ", tap_n);            \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		if (!tap_ok_)                                                  \
			printf("#   at %s:%d: %s\n", __FILE__, __LINE__,       \
			       #cond);                                         \
		fflush(stdout);                                                \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
