/* SPDX-License-Identifier: MIT */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"

void ga_buf_init(struct ga_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void ga_buf_finish(struct ga_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void ga_buf_reset(struct ga_buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

static bool reserve(struct ga_buf *b, size_t extra)
{
	size_t need, cap;
	char *tmp;

	if (b->failed)
		return false;
	if (extra > SIZE_MAX / 2 - b->len)
		goto fail;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	tmp = realloc(b->data, cap);
	if (!tmp)
		goto fail;
	b->data = tmp;
	b->cap = cap;
	return true;
fail:
	b->failed = true;
	return false;
}

void ga_buf_append(struct ga_buf *b, const void *data, size_t len)
{
	if (!reserve(b, len))
		return;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void ga_buf_puts(struct ga_buf *b, const char *s)
{
	ga_buf_append(b, s, strlen(s));
}

void ga_buf_putc(struct ga_buf *b, char c)
{
	ga_buf_append(b, &c, 1);
}

void ga_buf_printf(struct ga_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n)) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ga_buf_put_markup(struct ga_buf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			ga_buf_puts(b, "&amp;");
			break;
		case '<':
			ga_buf_puts(b, "&lt;");
			break;
		case '>':
			ga_buf_puts(b, "&gt;");
			break;
		case '"':
			ga_buf_puts(b, "&quot;");
			break;
		default:
			if ((unsigned char)s[i] >= 0x20 || s[i] == '\t' ||
			    s[i] == '\n')
				ga_buf_putc(b, s[i]);
			break;
		}
	}
}

char *ga_buf_steal(struct ga_buf *b)
{
	char *data;

	if (b->failed) {
		ga_buf_finish(b);
		return NULL;
	}
	if (!b->data)
		return strdup("");
	data = b->data;
	memset(b, 0, sizeof(*b));
	return data;
}

int ga_read_file(const char *path, size_t max, char **out, size_t *out_len)
{
	struct ga_buf b;
	char chunk[65536];
	int fd, rc = 0;
	ssize_t n;

	ga_buf_init(&b);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		n = ga_read_some(fd, chunk, sizeof(chunk));
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			rc = -EFBIG;
			goto out;
		}
		ga_buf_append(&b, chunk, (size_t)n);
	}
	if (out_len)
		*out_len = b.len;
	*out = ga_buf_steal(&b);
	if (!*out)
		rc = -ENOMEM;
out:
	close(fd);
	ga_buf_finish(&b);
	return rc;
}
