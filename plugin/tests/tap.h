/* Minimal TAP producer for the plugin-side unit tests (exit 77 = skip). */
#ifndef GPUALERT_PLUGIN_TESTS_TAP_H
#define GPUALERT_PLUGIN_TESTS_TAP_H

#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                          \
	do {                                                                   \
		int ok_ = !!(cond);                                            \
		printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n);              \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		if (!ok_) {                                                    \
			tap_failed++;                                          \
			printf("#   failed at %s:%d: %s\n", __FILE__,          \
			       __LINE__, #cond);                               \
		}                                                              \
		fflush(stdout);                                                \
	} while (0)

#define skip_all(...)                                                          \
	do {                                                                   \
		printf("1..0 # SKIP ");                                        \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		exit(77);                                                      \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
