/* SPDX-License-Identifier: MIT */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"

void ga_diag_init(struct ga_diag *d, const char *stage)
{
	memset(d, 0, sizeof(*d));
	d->stage = stage;
}

void ga_diag_finish(struct ga_diag *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	d->msgs = NULL;
	d->n = 0;
}

static void add(struct ga_diag *d, enum ga_log_level level, const char *file,
                unsigned line, const char *fmt, va_list ap)
        __attribute__((format(printf, 5, 0)));
static void add(struct ga_diag *d, enum ga_log_level level, const char *file,
                unsigned line, const char *fmt, va_list ap)
{
	struct ga_buf b;
	char **tmp;
	char *msg;

	ga_buf_init(&b);
	if (file && line)
		ga_buf_printf(&b, "%s:%u: ", file, line);
	else if (file)
		ga_buf_printf(&b, "%s: ", file);
	ga_buf_puts(&b, level == GA_LOG_ERROR ? "error: " : "warning: ");
	{
		char text[1024];

		vsnprintf(text, sizeof(text), fmt, ap);
		ga_buf_puts(&b, text);
	}
	msg = ga_buf_steal(&b);
	if (!msg)
		return;
	ga_log(level, "gpualert: %s: %s", d && d->stage ? d->stage : "config",
	       msg);
	if (!d) {
		free(msg);
		return;
	}
	if (level == GA_LOG_ERROR)
		d->errors++;
	else
		d->warnings++;
	tmp = realloc(d->msgs, (d->n + 1) * sizeof(*d->msgs));
	if (!tmp) {
		free(msg);
		return;
	}
	d->msgs = tmp;
	d->msgs[d->n++] = msg;
}

void ga_diag_error(struct ga_diag *d, const char *file, unsigned line,
                   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, GA_LOG_ERROR, file, line, fmt, ap);
	va_end(ap);
}

void ga_diag_warn(struct ga_diag *d, const char *file, unsigned line,
                  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, GA_LOG_WARN, file, line, fmt, ap);
	va_end(ap);
}
