/* SPDX-License-Identifier: MIT */
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

/* Open P expecting a refusal of what is there: a fresh name, a note. */
static int open_noted(const char *p, unsigned mode, const char *what)
{
	char actual[PATH_MAX + 64];
	const char *note = NULL;
	struct stat a, b;
	int fd = ga_logfile_open(p, mode, actual, sizeof(actual), &note);

	ok(fd >= 0 && note && strncmp(actual, p, strlen(p)) == 0 &&
	           strlen(actual) == strlen(p) + 7 && fstat(fd, &a) == 0 &&
	           stat(actual, &b) == 0 && a.st_ino == b.st_ino &&
	           a.st_uid == geteuid() && a.st_nlink == 1,
	   "%s: a fresh file is used instead, and said (%s)", what, actual);
	return fd;
}

/* The planted-log attacks: whatever another user prepared at the log's
 * name, the output never lands in a file they own, share or can read. */
static void test_planted(void)
{
	char p[2 * PATH_MAX], q[PATH_MAX], shared[PATH_MAX / 2];
	struct stat st, st2;
	int fd;

	/* Our own earlier log (a requeued job): appended to. */
	snprintf(p, sizeof(p), "%s/requeue.log", dir);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	ok(fd >= 0 && fstat(fd, &st) == 0, "first open");
	if (fd >= 0)
		close(fd);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	ok(fd >= 0 && fstat(fd, &st2) == 0 && st.st_ino == st2.st_ino,
	   "our own log is reused");
	if (fd >= 0)
		close(fd);
	/* Ours, but opened up (0644 > 0600): someone may be reading it. */
	chmod(p, 0644);
	fd = open_noted(p, 0600, "our log with a wider mode");
	if (fd >= 0)
		close(fd);
	/* A hard link to a file of ours elsewhere. */
	snprintf(q, sizeof(q), "%s/victim-data", dir);
	close(open(q, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/hardlink.log", dir);
	(void)!link(q, p);
	fd = open_noted(p, 0600, "a hard link at the log's name");
	ok(stat(q, &st) == 0 && st.st_size == 0 && st.st_nlink == 2,
	   "the linked file is untouched");
	if (fd >= 0)
		close(fd);
	if (geteuid() != 0) {
		ok(1, "# SKIP planting as another user needs root");
		return;
	}
	/* Another user's 0666 file in a sticky shared directory. */
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	mkdir(shared, 01777);
	chmod(shared, 01777);
	snprintf(p, sizeof(p), "%s/gpualert-7.batch.0.log", shared);
	close(open(p, O_CREAT | O_WRONLY, 0666));
	chmod(p, 0666);
	(void)!chown(p, 65534, 65534);
	fd = open_noted(p, 0600, "another user's file in a shared directory");
	ok(stat(p, &st) == 0 && st.st_size == 0,
	   "the planted file gets nothing");
	if (fd >= 0)
		close(fd);
	/* Another user's file in our own directory (we may not write it
	 * anyway, but root may: the plugin must never take it). */
	snprintf(p, sizeof(p), "%s/theirs.log", dir);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	(void)!chown(p, 65534, 65534);
	fd = open_noted(p, 0600, "another user's file");
	if (fd >= 0)
		close(fd);
	/* A job folder another user created first, open to all. */
	snprintf(q, sizeof(q), "%s/gpualert-8", shared);
	mkdir(q, 0777);
	chmod(q, 0777);
	(void)!chown(q, 65534, 65534);
	snprintf(p, sizeof(p), "%s/n1.0.0.log", q);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	ok(fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	           (st.st_mode & 07777) == 0600,
	   "in a folder someone else made, a new private file");
	if (fd >= 0)
		close(fd);
	/* ... and our own log of the same name there is not trusted. */
	(void)!chown(p, geteuid(), getegid());
	fd = open_noted(p, 0600, "a name in a folder others can write");
	if (fd >= 0)
		close(fd);
}

static void test_open(void)
{
	char p[PATH_MAX + 64], q[PATH_MAX + 64];
	struct stat st;
	int fd;

	umask(022);
	snprintf(p, sizeof(p), "%s/a.log", dir);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0600,
	   "created with mode 0600");
	ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
	           (fcntl(fd, F_GETFL) & O_APPEND),
	   "close-on-exec and append");
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/b.log", dir);
	fd = ga_logfile_open(p, 0640, NULL, 0, NULL);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0640,
	   "log_file_mode 0640 honoured despite umask");
	if (fd >= 0)
		close(fd);

	snprintf(p, sizeof(p), "%s/link.log", dir);
	snprintf(q, sizeof(q), "%s/target", dir);
	(void)!symlink(q, p);
	fd = open_noted(p, 0600, "a symlink at the log's name");
	ok(fd >= 0 && access(q, F_OK) != 0,
	   "a symlink at the log's name is not followed");
	if (fd >= 0)
		close(fd);

	snprintf(p, sizeof(p), "%s/fifo.log", dir);
	mkfifo(p, 0600);
	alarm(5);
	fd = open_noted(p, 0600, "a FIFO at the log's name (no blocking)");
	alarm(0);
	if (fd >= 0)
		close(fd);

	snprintf(p, sizeof(p), "%s/jobdir/x.log", dir);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	snprintf(q, sizeof(q), "%s/jobdir", dir);
	ok(fd >= 0 && stat(q, &st) == 0 && (st.st_mode & 07777) == 0700,
	   "the log's own folder is created, private");
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/nodir/deeper/x.log", dir);
	ok(ga_logfile_open(p, 0600, NULL, 0, NULL) == -ENOENT,
	   "directories above it are not created");

	/* A directory symlink of ours (or root's) is followed; another user's is not. */
	snprintf(q, sizeof(q), "%s/real", dir);
	mkdir(q, 0700);
	snprintf(p, sizeof(p), "%s/mine", dir);
	(void)!symlink(q, p);
	snprintf(p, sizeof(p), "%s/mine/x.log", dir);
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
	ok(fd >= 0, "a directory symlink owned by the caller is followed");
	if (fd >= 0)
		close(fd);
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/theirs", dir);
		(void)!symlink(q, p);
		(void)!lchown(p, 65534, 65534);
		snprintf(p, sizeof(p), "%s/theirs/x.log", dir);
		ok(ga_logfile_open(p, 0600, NULL, 0, NULL) == -ELOOP,
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
	fd = ga_logfile_open(p, 0600, NULL, 0, NULL);
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
	test_planted();
	test_header();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return tap_done();
}
