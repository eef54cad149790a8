/* SPDX-License-Identifier: MIT */
/* common/util.h: array length, EINTR retry, FNV-1a, safe characters. */
#include "util.h"

#include <errno.h>

#include "tap.h"

static int calls;

/* Fails with EINTR FAILS times, then returns 7. */
static int flaky(int fails)
{
	if (calls++ < fails) {
		errno = EINTR;
		return -1;
	}
	return 7;
}

static long fails_with(int err)
{
	calls++;
	errno = err;
	return -1;
}

static void test_array_len(void)
{
	int a[7];
	const char *names[] = {"a", "b", "c"};
	struct {
		char c;
		double d;
	} s[2];

	is_int(GA_ARRAY_LEN(a), 7, "int[7]");
	is_int(GA_ARRAY_LEN(names), 3, "initialised pointer array");
	is_int(GA_ARRAY_LEN(s), 2, "struct array");
	(void)a;
	(void)s;
}

static void test_retry_eintr(void)
{
	int rc;
	long lrc;

	calls = 0;
	rc = GA_RETRY_EINTR(flaky(3));
	is_int(rc, 7, "EINTR: retried until the call succeeds");
	is_int(calls, 4, "EINTR: three failures, one success");
	calls = 0;
	lrc = GA_RETRY_EINTR(fails_with(EAGAIN));
	is_int(lrc, -1, "EAGAIN: the failure is returned");
	is_int(calls, 1, "EAGAIN: not retried");
	is_int(errno, EAGAIN, "EAGAIN: errno kept");
}

static void test_fnv1a(void)
{
	uint64_t h;

	/* Reference values of 64-bit FNV-1a. */
	ok(ga_fnv1a_str(GA_FNV1A_INIT, "") == UINT64_C(0xcbf29ce484222325),
	   "fnv1a(\"\") is the offset basis");
	ok(ga_fnv1a_str(GA_FNV1A_INIT, "a") == UINT64_C(0xaf63dc4c8601ec8c),
	   "fnv1a(\"a\")");
	ok(ga_fnv1a_str(GA_FNV1A_INIT, "foobar") ==
	           UINT64_C(0x85944171f73967e8),
	   "fnv1a(\"foobar\")");
	h = ga_fnv1a_str(GA_FNV1A_INIT, "foo");
	h = ga_fnv1a(h, "bar", 3);
	ok(h == UINT64_C(0x85944171f73967e8), "fed in pieces: the same hash");
	ok(ga_fnv1a_str(GA_FNV1A_INIT, NULL) == GA_FNV1A_INIT,
	   "NULL hashes like \"\"");
	ok(ga_fnv1a(GA_FNV1A_INIT, "\xff", 1) != ga_fnv1a(GA_FNV1A_INIT, "", 0),
	   "bytes above 0x7f count (unsigned)");
}

static void test_safe(void)
{
	char out[32];
	size_t n;

	ok(ga_char_safe('a', NULL) && ga_char_safe('Z', NULL) &&
	           ga_char_safe('0', NULL) && ga_char_safe('9', NULL),
	   "letters and digits are safe");
	ok(!ga_char_safe('.', NULL) && !ga_char_safe('/', "._-") &&
	           !ga_char_safe('\0', "._-") && !ga_char_safe('\xe9', "._-"),
	   "'.' only when named; '/', NUL, non-ASCII never");
	ok(ga_char_safe('.', "._-") && ga_char_safe('-', "._-"),
	   "EXTRA adds bytes");

	n = ga_safe_copy(out, sizeof(out), "a b/../c.txt", "._-", '_');
	is_str(out, "a_b_.._c.txt", "replaced by '_'");
	is_int(n, 12, "length returned");
	n = ga_safe_copy(out, sizeof(out), "mail.example.org;x", ".-", '\0');
	is_str(out, "mail.example.orgx", "REPL '\\0' drops");
	(void)n;
	n = ga_safe_copy(out, 5, "abcdefgh", NULL, '-');
	is_str(out, "abcd", "truncated to SIZE - 1");
	is_int(n, 4, "truncated length");
	n = ga_safe_copy(out, sizeof(out), NULL, NULL, '-');
	is_str(out, "", "NULL copies \"\"");
	is_int(ga_safe_copy(out, 0, "abc", NULL, '-'), 0, "SIZE 0 writes none");
}

/* The features the vector scans choose by: the same answer as libgcc's
 * (which the library no longer uses, to keep its load-time constructor
 * out of the plugin), asked twice. */
static void test_cpu_features(void)
{
	unsigned f = ga_cpu_features();

#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	is_int(!!(f & GA_CPU_AVX2), !!__builtin_cpu_supports("avx2"),
	       "AVX2 as libgcc sees it");
	is_int(!!(f & GA_CPU_BMI),
	       __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"),
	       "BMI1 and BMI2 as libgcc sees them");
#else
	is_int(f, 0, "no x86-64 vector features elsewhere");
#endif
	is_int(ga_cpu_features(), f, "cached: the same answer again");
}

int main(void)
{
	test_cpu_features();
	test_array_len();
	test_retry_eintr();
	test_fnv1a();
	test_safe();
	return tap_done();
}
