/* SPDX-License-Identifier: MIT */
/* common/fdio.h: complete reads and writes, path formatting. */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

#include "tap.h"

static void test_path_printf(void)
{
	char p[16];

	is_int(ga_path_printf(p, sizeof(p), "%s/%d", "/tmp/x", 42), 0,
	       "fits: 0");
	is_str(p, "/tmp/x/42", "fits: formatted");
	is_int(ga_path_printf(p, sizeof(p), "%s/%s", "/var/spool", "long1"),
	       -ENAMETOOLONG, "one byte too long: -ENAMETOOLONG");
	is_str(p, "", "one byte too long: the buffer is emptied");
	is_int(ga_path_printf(p, sizeof(p), "%s", "123456789012345"), 0,
	       "exactly SIZE - 1 bytes fit");
	is_int(ga_path_printf(p, 0, "x"), -ENAMETOOLONG, "SIZE 0: too long");
}

static void test_read_write(void)
{
	char in[5000], out[5000];
	int fds[2];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)('a' + i % 26);
	if (!ok(pipe(fds) == 0, "pipe"))
		return;
	is_int(ga_write_all(fds[1], in, sizeof(in)), 0, "write_all: 0");
	is_int(ga_read_all(fds[0], out, sizeof(out)), 0, "read_all: 0");
	ok(!memcmp(in, out, sizeof(in)), "read_all: the bytes written");
	is_int(ga_write_all(fds[1], "ab", 2), 0, "write 2 bytes");
	close(fds[1]);
	is_int(ga_read_all(fds[0], out, 3), -EIO,
	       "read_all of 3 at EOF after 2: -EIO");
	is_int(ga_read_some(fds[0], out, 3), 0, "read_some at EOF: 0");
	close(fds[0]);
	is_int(ga_write_all(fds[1], "x", 1), -EBADF,
	       "write_all to a closed fd: -EBADF");
}

int main(void)
{
	test_path_printf();
	test_read_write();
	return tap_done();
}
