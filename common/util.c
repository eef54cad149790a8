/* SPDX-License-Identifier: MIT */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

size_t ga_safe_copy(char *out, size_t size, const char *s, const char *extra,
                    char repl)
{
	size_t k = 0;

	if (!size)
		return 0;
	for (; s && *s && k < size - 1; s++) {
		if (ga_char_safe(*s, extra))
			out[k++] = *s;
		else if (repl)
			out[k++] = repl;
	}
	out[k] = '\0';
	return k;
}

void ga_limit_memory(uint64_t budget)
{
	struct rlimit rl = {0, 0};
	unsigned long pages;
	FILE *f;

	(void)setrlimit(RLIMIT_CORE, &rl);
	f = budget ? fopen("/proc/self/statm", "re") : NULL;
	if (!f)
		return;
	if (fscanf(f, "%lu", &pages) == 1) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages *
		                                    (rlim_t)sysconf(
		                                            _SC_PAGESIZE) +
		                            (rlim_t)budget;
		(void)setrlimit(RLIMIT_AS, &rl);
	}
	fclose(f);
}

int ga_fork_detached(void)
{
	int status;
	pid_t mid = fork();

	if (mid < 0)
		return -1;
	if (mid == 0) {
		pid_t grandchild = fork();

		if (grandchild != 0)
			_exit(grandchild < 0 ? 1 : 0);
		return 0;
	}
	if (GA_RETRY_EINTR(waitpid(mid, &status, 0)) < 0)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = EAGAIN;
		return -1;
	}
	return 1;
}

void ga_stdio_to_null(void)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (nul < 0)
		return;
	for (int fd = 0; fd <= 2; fd++)
		dup2(nul, fd);
	if (nul > 2)
		close(nul);
}

pid_t ga_pidfd_pid(int pidfd)
{
	char path[64], line[128];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	fclose(f);
	return (pid_t)pid;
}

#if defined(__x86_64__) && defined(__GNUC__)
static unsigned cpu_features_now(void)
{
	unsigned a, b, c, d, lo, hi, f = 0;

	/* AVX needs the OS to save the YMM registers: OSXSAVE, then XCR0's
	 * SSE and AVX state bits (Intel SDM vol. 1, 14.3). */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) ||
	    !(c & bit_AVX))
		return 0;
	__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	if ((lo & 6) != 6 || __get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	if (b & bit_AVX2)
		f |= GA_CPU_AVX2;
	if ((b & bit_BMI) && (b & bit_BMI2))
		f |= GA_CPU_BMI;
	return f;
}
#else
static unsigned cpu_features_now(void)
{
	return 0;
}
#endif

unsigned ga_cpu_features(void)
{
	/* Racing first calls compute the same value. */
	static int cached = -1;

	if (cached < 0)
		cached = (int)cpu_features_now();
	return (unsigned)cached;
}
