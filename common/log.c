/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <stdio.h>

static ga_log_sink_fn log_sink;
static void *log_ctx;
static enum ga_log_level log_max = GA_LOG_INFO;

void ga_log_set_sink(ga_log_sink_fn sink, void *ctx)
{
	log_sink = sink;
	log_ctx = ctx;
}

void ga_log_set_level(enum ga_log_level max_level)
{
	log_max = max_level;
}

enum ga_log_level ga_log_get_level(void)
{
	return log_max;
}

void ga_logv(enum ga_log_level level, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	/* A bounded stack buffer: logging must not allocate, it runs on the
	 * error paths of allocation failures too. */
	char msg[2048];

	if (level > log_max)
		goto out;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_sink)
		log_sink(level, msg, log_ctx);
	else
		fprintf(stderr, "%s\n", msg);
out:
	errno = saved_errno;
}

void ga_log(enum ga_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ga_logv(level, fmt, ap);
	va_end(ap);
}
