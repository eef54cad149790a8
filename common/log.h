/* SPDX-License-Identifier: MIT */
/* gpualert logging: one injected sink for the whole core.
 *
 * The core never prints by itself.  The plugin installs a sink over
 * slurm_error/slurm_info/slurm_debug, the command one over stderr.  Messages
 * start "gpualert: <stage>: " by convention (callers write the stage).
 */
#ifndef GPUALERT_COMMON_LOG_H
#define GPUALERT_COMMON_LOG_H

#include <stdarg.h>

enum ga_log_level {
	GA_LOG_ERROR = 0,
	GA_LOG_WARN = 1,
	GA_LOG_INFO = 2,
	GA_LOG_DEBUG = 3,
};

/* A sink receives one formatted message without a trailing newline.  The
 * message pointer is valid only during the call. */
typedef void (*ga_log_sink_fn)(enum ga_log_level level, const char *msg,
                               void *ctx);

/* Install SINK (NULL restores the default, which writes to stderr) and the
 * most verbose level that reaches it.  Not thread-safe: call at start-up. */
void ga_log_set_sink(ga_log_sink_fn sink, void *ctx);
void ga_log_set_level(enum ga_log_level max_level);
enum ga_log_level ga_log_get_level(void);

/* Format and deliver a message.  Preserves errno, so callers can log and
 * then return -errno. */
void ga_log(enum ga_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void ga_logv(enum ga_log_level level, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));

#endif
