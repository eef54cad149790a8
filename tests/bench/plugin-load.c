/* SPDX-License-Identifier: MIT */
/* What loading gpualert.so costs the process that loads it, as srun,
 * sbatch and salloc do for every job once the plugstack line is on:
 * dlopen(RTLD_LAZY), then slurm_spank_init in the local context with no
 * --gpualert.  Slurm's functions are stubs here (this program exports
 * them, -rdynamic).  Prints one line: "LOAD_MS INIT_MS LOAD_FAULTS
 * INIT_FAULTS".  tests/bench/bench-load.sh runs it.
 *   plugin-load PLUGIN [PLUGSTACK_ARG...] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include <slurm/spank.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static long minor_faults(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return r.ru_minflt;
}

/* What the plugin may call in srun before any option is given. */
spank_context_t spank_context(void)
{
	return S_CTX_LOCAL;
}
int spank_remote(spank_t sp)
{
	(void)sp;
	return 0;
}
spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	(void)opt;
	return ESPANK_SUCCESS;
}
spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	(void)sp;
	(void)item;
	return ESPANK_ERROR;
}
spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	(void)sp;
	(void)var;
	(void)buf;
	(void)len;
	return ESPANK_ERROR;
}
spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt,
                                char **arg)
{
	(void)sp;
	(void)opt;
	(void)arg;
	return ESPANK_ERROR;
}
void slurm_info(const char *fmt, ...)
{
	(void)fmt;
}
void slurm_error(const char *fmt, ...)
{
	(void)fmt;
}
void slurm_verbose(const char *fmt, ...)
{
	(void)fmt;
}
void slurm_debug(const char *fmt, ...)
{
	(void)fmt;
}
void slurm_spank_log(const char *fmt, ...)
{
	(void)fmt;
}
int slurm_load_job(void **msg, unsigned job, unsigned short flags);
int slurm_load_job(void **msg, unsigned job, unsigned short flags)
{
	(void)msg;
	(void)job;
	(void)flags;
	return -1;
}
void slurm_free_job_info_msg(void *msg);
void slurm_free_job_info_msg(void *msg)
{
	(void)msg;
}

int main(int argc, char **argv)
{
	int (*init)(spank_t, int, char **);
	long f0, f1, f2;
	double t0, t1, t2;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: plugin-load PLUGIN [ARG...]\n");
		return 2;
	}
	f0 = minor_faults();
	t0 = now_ms();
	h = dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL);
	t1 = now_ms();
	f1 = minor_faults();
	if (!h) {
		fprintf(stderr, "plugin-load: %s\n", dlerror());
		return 1;
	}
	*(void **)&init = dlsym(h, "slurm_spank_init");
	if (!init) {
		fprintf(stderr, "plugin-load: no slurm_spank_init\n");
		return 1;
	}
	init(NULL, argc - 2, argv + 2);
	t2 = now_ms();
	f2 = minor_faults();
	printf("%.3f %.3f %ld %ld\n", t1 - t0, t2 - t1, f1 - f0, f2 - f1);
	return 0;
}
