/* SPDX-License-Identifier: MIT */
#include "gzip.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The four entry points used; deflateInit2() is a macro over
 * deflateInit2_(), which checks the header's version and z_stream size
 * against the library's. */
struct zlib_api {
	int (*init2)(z_streamp, int, int, int, int, int, const char *, int);
	int (*deflate)(z_streamp, int);
	int (*end)(z_streamp);
	uLong (*bound)(z_streamp, uLong);
};

static int load(struct zlib_api *z)
{
	/* The soname, not "libz.so": the unversioned link is only in
	 * zlib1g-dev.  RTLD_LOCAL: nothing else resolves against it. */
	void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ENOSYS;
	*(void **)&z->init2 = dlsym(h, "deflateInit2_");
	*(void **)&z->deflate = dlsym(h, "deflate");
	*(void **)&z->end = dlsym(h, "deflateEnd");
	*(void **)&z->bound = dlsym(h, "deflateBound");
	if (!z->init2 || !z->deflate || !z->end || !z->bound)
		return -ENOSYS;
	/* The handle stays open: the collector child exits soon after. */
	return 0;
}

int ga_gzip(const void *in, size_t len, char **out, size_t *out_len)
{
	struct zlib_api api;
	z_stream z;
	size_t cap;
	char *buf;
	int rc = load(&api);

	if (rc)
		return rc;
	/* avail_in is 32 bits: one deflate() call takes all of IN. */
	if (len > UINT32_MAX)
		return -EFBIG;
	cap = api.bound(NULL, (uLong)len) + 32;
	buf = malloc(cap);
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer, not zlib's. */
	if (!buf || api.init2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
	                      ZLIB_VERSION, (int)sizeof(z)) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	if (api.deflate(&z, Z_FINISH) != Z_STREAM_END) {
		api.end(&z);
		free(buf);
		return -EIO;
	}
	*out_len = z.total_out;
	api.end(&z);
	*out = buf;
	return 0;
}
