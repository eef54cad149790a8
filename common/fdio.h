/* SPDX-License-Identifier: MIT */
/* Small I/O helpers every module needs: complete reads and writes that
 * retry on EINTR, and path formatting that refuses to truncate. */
#ifndef GPUALERT_COMMON_FDIO_H
#define GPUALERT_COMMON_FDIO_H

#include <stddef.h>
#include <sys/types.h>

#include "util.h"

/* Write all LEN bytes.  Returns 0 or -errno (-EIO if write returns 0). */
GA_MUST_CHECK int ga_write_all(int fd, const void *data, size_t len);

/* Read exactly LEN bytes.  Returns 0, -EIO at a premature EOF, or
 * -errno. */
GA_MUST_CHECK int ga_read_all(int fd, void *buf, size_t len);

/* read(2) retried on EINTR: returns what read returns (-1 with errno). */
GA_MUST_CHECK ssize_t ga_read_some(int fd, void *buf, size_t len);

/* snprintf for paths: a truncated path is an error, never a silently
 * different file.  Returns 0 or -ENAMETOOLONG; on failure BUF holds ""
 * (when SIZE > 0), so a caller that goes on uses no truncated path. */
GA_MUST_CHECK int ga_path_printf(char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif
