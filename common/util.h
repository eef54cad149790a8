/* SPDX-License-Identifier: MIT */
/* Small helpers every module may use: a marker for results that must be
 * checked, array length, EINTR retry, the FNV-1a hash and safe-character
 * filtering for names that become file names, message ids or headers. */
#ifndef GPUALERT_COMMON_UTIL_H
#define GPUALERT_COMMON_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* On a function whose result carries an error or an owned object: the
 * compiler warns at every call that drops it.  gcc warns even through a
 * (void) cast, so a caller that may ignore it must say why in code. */
#define GA_MUST_CHECK __attribute__((warn_unused_result))

/* 0 at compile time if A is an array, a compile error if it is a pointer
 * (the usual mistake: GA_ARRAY_LEN of a parameter declared as an array). */
#define GA_MUST_BE_ARRAY_(a)                                                   \
	(sizeof(struct {                                                       \
		 int must_be_array                                             \
		     : __builtin_types_compatible_p(__typeof__(a),             \
		                                    __typeof__(&(a)[0]))       \
		       ? -1                                                    \
		       : 1;                                                    \
	 }) *                                                                  \
	 0)

/* Number of elements of the array A (never of a pointer: see above). */
#define GA_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]) + GA_MUST_BE_ARRAY_(a))

/* Evaluate EXPR again while it fails with EINTR (-1 and errno EINTR), as
 * glibc's TEMP_FAILURE_RETRY; the value is EXPR's last result, errno as
 * EXPR left it.  For calls that return -1 on error: read, write, open,
 * waitpid, poll, ... */
#define GA_RETRY_EINTR(expr)                                                   \
	__extension__({                                                        \
		__typeof__(expr) ga_retry_rc_;                                 \
		do                                                             \
			ga_retry_rc_ = (expr);                                 \
		while (ga_retry_rc_ == -1 && errno == EINTR);                  \
		ga_retry_rc_;                                                  \
	})

/* 64-bit FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/): not a
 * cryptographic hash, a stable short name for a longer text.  Start from
 * GA_FNV1A_INIT and feed pieces in order; feeding "ab" equals feeding "a"
 * then "b". */
#define GA_FNV1A_INIT UINT64_C(0xcbf29ce484222325)

static inline uint64_t ga_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* The same over a NUL-terminated string (NULL hashes like ""). */
static inline uint64_t ga_fnv1a_str(uint64_t h, const char *s)
{
	return s ? ga_fnv1a(h, s, strlen(s)) : h;
}

/* True if C is an ASCII letter or digit, or one of the bytes of EXTRA
 * (NULL: none).  Locale-independent, unlike isalnum(). */
static inline bool ga_char_safe(char c, const char *extra)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && extra && strchr(extra, c));
}

/* Copy the string S into OUT (SIZE bytes) keeping the bytes that are
 * ga_char_safe(c, EXTRA); every other byte becomes REPL, or is dropped
 * when REPL is '\0'.  Stops when OUT is full: at most SIZE - 1 bytes, and
 * OUT is always NUL-terminated when SIZE > 0.  S NULL copies "".  Returns
 * the length written. */
size_t ga_safe_copy(char *out, size_t size, const char *s, const char *extra,
                    char repl);

/* For a forked child that reads untrusted input: no core dumps, and at
 * most BUDGET bytes of address space over what the process already maps
 * (a fork of slurmstepd, or a sanitizer's shadow memory: an absolute
 * limit could lie below it and fail every allocation).  BUDGET 0, or an
 * unreadable /proc/self/statm: no address-space limit. */
void ga_limit_memory(uint64_t budget);

/* Fork a grandchild that nobody waits for: the intermediate child forks
 * it and exits at once, and is reaped here.  Returns 0 in the grandchild
 * (its parent is gone: init or a subreaper reaps it), 1 in the caller
 * once the grandchild exists, -1 (errno set) when either fork failed. */
int ga_fork_detached(void);

/* Point fds 0, 1 and 2 at /dev/null (a forked child that must hold none
 * of its parent's stdio). */
void ga_stdio_to_null(void);

/* The pid a pidfd refers to (fdinfo's "Pid:"), -1 when that process has
 * exited, 0 when unknown. */
pid_t ga_pidfd_pid(int pidfd);

/* Vector instructions the CPU has and the kernel saves the state of
 * (x86-64; elsewhere 0), asked on the first call and then cached.  Not
 * libgcc's __builtin_cpu_supports: it brings a constructor that runs a
 * dozen CPUIDs at load time, each a trap to the hypervisor on a virtual
 * machine, in every srun and slurmstepd that loads the plugin, and only a
 * report process ever scans a log. */
#define GA_CPU_AVX2 1u /* AVX2, with the YMM state enabled (XGETBV) */
#define GA_CPU_BMI 2u  /* BMI1 and BMI2 */
unsigned ga_cpu_features(void);

#endif
