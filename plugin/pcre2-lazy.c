/* SPDX-License-Identifier: MIT */
/* libpcre2-8 for the plugin, loaded when the first rule is compiled
 * instead of with gpualert.so.
 *
 * Slurm loads the plugin into every srun, sbatch, salloc and slurmstepd
 * once its plugstack line is enabled, for jobs without --gpualert too,
 * and each library it needs is mapped and relocated in each of them
 * before the job can go on.  Only a step's report process compiles and
 * matches rules.  So the plugin is not linked with -lpcre2-8: these
 * definitions stand in for the library's functions that common/rules.c
 * calls, and each resolves its namesake from the library on first use.
 * The report process is single-threaded, and what it forks inherits the
 * resolved pointers.
 *
 * When the library cannot be loaded every rule fails to compile, with
 * that reason as its error message, and the report says so; the job is
 * untouched either way.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <dlfcn.h>
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

/* The soname the package depends on (Debian: libpcre2-8-0); the unit
 * test builds this file with one that does not exist. */
#ifndef PCRE2_SONAME
#define PCRE2_SONAME "libpcre2-8.so.0"
#endif

static void *lib;
static char load_error[256];

/* The compile error code of a stand-in that has no library function to
 * call: PCRE2's own compile errors are 101 and up, so a real error is
 * still described by the library even after some symbol was missing. */
#define STAND_IN_ERROR 99

static void *resolve(const char *name)
{
	void *fn;

	if (!lib && !load_error[0]) {
		lib = dlopen(PCRE2_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			const char *e = dlerror();

			snprintf(load_error, sizeof(load_error),
			         "cannot load %s: %s", PCRE2_SONAME,
			         e ? e : "unknown error");
		}
	}
	if (!lib)
		return NULL;
	fn = dlsym(lib, name);
	if (!fn && !load_error[0])
		snprintf(load_error, sizeof(load_error), "%s has no %s",
		         PCRE2_SONAME, name);
	return fn;
}

/* The pointer to NAME, resolved once: typed as the library's own NAME. */
#define LAZY(name)                                                             \
	static __typeof__(&name) real_##name;                                  \
	do {                                                                   \
		if (!real_##name)                                              \
			real_##name = (__typeof__(&name))resolve(#name);       \
	} while (0)

pcre2_code *pcre2_compile_8(PCRE2_SPTR pattern, PCRE2_SIZE length,
                            uint32_t options, int *errorcode,
                            PCRE2_SIZE *erroroffset, pcre2_compile_context *ctx)
{
	LAZY(pcre2_compile_8);
	if (!real_pcre2_compile_8) {
		*errorcode = STAND_IN_ERROR;
		*erroroffset = 0;
		return NULL;
	}
	return real_pcre2_compile_8(pattern, length, options, errorcode,
	                            erroroffset, ctx);
}

int pcre2_get_error_message_8(int errorcode, PCRE2_UCHAR *buffer,
                              PCRE2_SIZE bufflen)
{
	LAZY(pcre2_get_error_message_8);
	if (!real_pcre2_get_error_message_8 || errorcode == STAND_IN_ERROR) {
		size_t n = strlen(load_error);

		if (!bufflen)
			return PCRE2_ERROR_NOMEMORY;
		if (n >= bufflen)
			n = bufflen - 1;
		memcpy(buffer, load_error, n);
		buffer[n] = '\0';
		return (int)n;
	}
	return real_pcre2_get_error_message_8(errorcode, buffer, bufflen);
}

/* NAME(PARAMS) as the library's NAME(ARGS), or FAIL without it. */
#define STAND_IN(type, name, params, args, fail)                               \
	type name params                                                       \
	{                                                                      \
		LAZY(name);                                                    \
		return real_##name ? real_##name args : fail;                  \
	}
/* The same for a function returning nothing (the free functions). */
#define STAND_IN_VOID(name, params, args)                                      \
	void name params                                                       \
	{                                                                      \
		LAZY(name);                                                    \
		if (real_##name)                                               \
			real_##name args;                                      \
	}

STAND_IN_VOID(pcre2_code_free_8, (pcre2_code * code), (code))
STAND_IN_VOID(pcre2_match_data_free_8, (pcre2_match_data * md), (md))
STAND_IN_VOID(pcre2_match_context_free_8, (pcre2_match_context * mctx), (mctx))
STAND_IN(int, pcre2_jit_compile_8, (pcre2_code * code, uint32_t options),
         (code, options), PCRE2_ERROR_JIT_BADOPTION)
STAND_IN(pcre2_match_data *, pcre2_match_data_create_8,
         (uint32_t ovecsize, pcre2_general_context *gctx), (ovecsize, gctx),
         NULL)
STAND_IN(pcre2_match_context *, pcre2_match_context_create_8,
         (pcre2_general_context * gctx), (gctx), NULL)
STAND_IN(int, pcre2_set_match_limit_8,
         (pcre2_match_context * mctx, uint32_t value), (mctx, value),
         PCRE2_ERROR_BADDATA)
STAND_IN(int, pcre2_set_depth_limit_8,
         (pcre2_match_context * mctx, uint32_t value), (mctx, value),
         PCRE2_ERROR_BADDATA)
STAND_IN(int, pcre2_match_8,
         (const pcre2_code *code, PCRE2_SPTR subject, PCRE2_SIZE length,
          PCRE2_SIZE startoffset, uint32_t options, pcre2_match_data *md,
          pcre2_match_context *mctx),
         (code, subject, length, startoffset, options, md, mctx),
         PCRE2_ERROR_NOMEMORY)
