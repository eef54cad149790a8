/* common/logfile: pattern expansion, safe creation, header. */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "tap.h"

static char dir[256];

static void test_expand(void)
{
	struct ga_log_ids ids = {"123",   "batch",          7, "alice", "train",
	                         "gpu01", "/home/alice/run"};
	char out[PATH_MAX];
	const char *why;
	int rc;

	rc = ga_logfile_expand("%w/gpualert-%j.%s.%t.log", &ids, out,
	                       sizeof(out), &why);
	ok(rc == 0 && !strcmp(out, "/home/alice/run/gpualert-123.batch.7.log"),
	   "default pattern: %s", out);
	rc = ga_logfile_expand("/l/%u/%x-%N-100%%.log", &ids, out, sizeof(out),
	                       &why);
	ok(rc == 0 && !strcmp(out, "/l/alice/train-gpu01-100%.log"),
	   "%%u %%x %%N %%%%: %s", out);
	ids.job_name = "../../etc/passwd";
	rc = ga_logfile_expand("/l/%x.log", &ids, out, sizeof(out), &why);
	ok(rc == 0 && !strcmp(out, "/l/.._.._etc_passwd.log"),
	   "job name cannot add directories: %s", out);
	ids.job_name = "..";
	rc = ga_logfile_expand("/l/%x/f", &ids, out, sizeof(out), &why);
	ok(rc == 0 && !strcmp(out, "/l/_/f"), "a '..' value becomes '_': %s",
	   out);
	ids.job_name = "%n%s%x";
	rc = ga_logfile_expand("/l/%x", &ids, out, sizeof(out), &why);
	ok(rc == 0 && !strcmp(out, "/l/_n_s_x"),
	   "format characters in values are inert: %s", out);
	ids.job_name = "train";
	ok(ga_logfile_expand("/l/../etc/x", &ids, out, sizeof(out), &why) ==
	           -EINVAL,
	   "a '..' in the pattern is refused (%s)", why);
	ok(ga_logfile_expand("rel/%j", &ids, out, sizeof(out), &why) == -EINVAL,
	   "a relative result is refused (%s)", why);
	ok(ga_logfile_expand("/l/%q", &ids, out, sizeof(out), &why) == -EINVAL,
	   "an unknown escape is refused (%s)", why);
	ok(ga_logfile_expand("/l/%", &ids, out, sizeof(out), &why) == -EINVAL,
	   "a trailing %% is refused (%s)", why);
	ids.work_dir = "/home/alice/../bob";
	ok(ga_logfile_expand("%w/x", &ids, out, sizeof(out), &why) == -EINVAL,
	   "a %%w with '..' is refused (%s)", why);
	ids.work_dir = "relative";
	ok(ga_logfile_expand("%w/x", &ids, out, sizeof(out), &why) == -EINVAL,
	   "a relative %%w is refused");
	{
		char big[400];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		ids.job_name = big;
		ok(ga_logfile_expand("/l/%x", &ids, out, sizeof(out), &why) ==
		           -ENAMETOOLONG,
		   "an over-long component is refused (%s)", why);
		ids.job_name = "x";
		ok(ga_logfile_expand("/l/%x", &ids, out, 4, &why) ==
		           -ENAMETOOLONG,
		   "an over-long path is refused");
	}
}

static void test_open(void)
{
	char p[PATH_MAX + 64], q[PATH_MAX + 64];
	struct stat st;
	int fd;

	umask(022);
	snprintf(p, sizeof(p), "%s/a.log", dir);
	fd = ga_logfile_open(p, 0600);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0600,
	   "created with mode 0600");
	ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
	           (fcntl(fd, F_GETFL) & O_APPEND),
	   "close-on-exec and append");
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/b.log", dir);
	fd = ga_logfile_open(p, 0640);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0640,
	   "log_file_mode 0640 honoured despite umask");
	if (fd >= 0)
		close(fd);

	snprintf(p, sizeof(p), "%s/link.log", dir);
	snprintf(q, sizeof(q), "%s/target", dir);
	(void)!symlink(q, p);
	fd = ga_logfile_open(p, 0600);
	ok(fd == -ELOOP && access(q, F_OK) != 0,
	   "a symlink at the log's name is refused (%d)", fd);

	snprintf(p, sizeof(p), "%s/fifo.log", dir);
	mkfifo(p, 0600);
	alarm(5);
	fd = ga_logfile_open(p, 0600);
	alarm(0);
	ok(fd == -EINVAL || fd == -ENXIO,
	   "a FIFO at the log's name is refused without blocking (%d)", fd);

	snprintf(p, sizeof(p), "%s/nodir/x.log", dir);
	ok(ga_logfile_open(p, 0600) == -ENOENT,
	   "missing directories are not created");

	/* A directory symlink of ours (or root's) is followed; another user's is not. */
	snprintf(q, sizeof(q), "%s/real", dir);
	mkdir(q, 0700);
	snprintf(p, sizeof(p), "%s/mine", dir);
	(void)!symlink(q, p);
	snprintf(p, sizeof(p), "%s/mine/x.log", dir);
	fd = ga_logfile_open(p, 0600);
	ok(fd >= 0, "a directory symlink owned by the caller is followed");
	if (fd >= 0)
		close(fd);
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/theirs", dir);
		(void)!symlink(q, p);
		(void)!lchown(p, 65534, 65534);
		snprintf(p, sizeof(p), "%s/theirs/x.log", dir);
		ok(ga_logfile_open(p, 0600) == -ELOOP,
		   "a directory symlink owned by another user is refused");
	} else {
		ok(1, "# SKIP another user's symlink needs root");
	}
}

static void test_header(void)
{
	char p[PATH_MAX + 64];
	char *argv[] = {"python3",   "train.py", "--lr=0.1",
	                "it's here", "a\nb",     NULL};
	struct ga_log_header h = {"42", "0",  3,          "n1",   "alice",
	                          5,    argv, 1700000000, "9.9.9"};
	char *text = NULL;
	size_t len = 0;
	int fd;

	snprintf(p, sizeof(p), "%s/h.log", dir);
	fd = ga_logfile_open(p, 0600);
	ok(fd >= 0 && ga_logfile_write_header(fd, &h) == 0, "header written");
	if (fd >= 0) {
		(void)!write(fd, "first output\n", 13);
		close(fd);
	}
	ok(ga_read_file(p, 1 << 20, &text, &len) == 0, "read back");
	if (!text)
		return;
	ok(strstr(text, "# gpualert 9.9.9") != NULL, "version");
	ok(strstr(text, "job: 42  step: 0  task: 3  node: n1  user: alice") !=
	           NULL,
	   "ids");
	ok(strstr(text,
	          "# command: python3 train.py --lr=0.1 'it'\\''s here' 'a?b'\n") !=
	           NULL,
	   "command line quoted, control characters replaced");
	ok(strstr(text, "(1700000000)") != NULL, "start time");
	ok(strstr(text, GA_LOG_HEADER_END "first output\n") != NULL,
	   "output follows the header");
	free(text);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ga-logfile-XXXXXX");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	test_expand();
	test_open();
	test_header();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return tap_done();
}
