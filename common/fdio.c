/* SPDX-License-Identifier: MIT */
#include "fdio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "util.h"

int ga_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = GA_RETRY_EINTR(write(fd, p, len));

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ga_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = ga_read_some(fd, p, len);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t ga_read_some(int fd, void *buf, size_t len)
{
	return GA_RETRY_EINTR(read(fd, buf, len));
}

int ga_path_printf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		/* Never leave a prefix that names another file. */
		if (size)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
