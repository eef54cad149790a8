/* SPDX-License-Identifier: MIT */
/* gpualert.conf: the shipped file parses cleanly, every bound is enforced
 * with a FILE:LINE message, and plugstack-style overrides work. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "tap.h"

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/gpualert-test-config.XXXXXX");
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		tap_skip_all("cannot write a temporary file");
	close(fd);
	return path;
}

int main(int argc, char **argv)
{
	struct ga_config cfg;
	struct ga_diag d;
	char *path;
	int rc;

	ga_log_set_sink(quiet, NULL);

	/* The shipped etc/gpualert.conf, path given by meson. */
	ok(ga_config_init(&cfg) == 0, "defaults");
	ga_diag_init(&d, "config");
	if (argc > 1) {
		rc = ga_config_load(&cfg, argv[1], &d);
		is_int(rc, 0, "the shipped gpualert.conf loads without errors");
		is_int(d.n, 0, "... and without diagnostics");
		is_int(cfg.default_mode, GA_MODE_LOG, "... default_mode = log");
		is_int(cfg.spool_quiet_s, 45, "... quiet_period = 45");
		is_int(cfg.attach_budget, 2 << 20, "... attach_budget = 2M");
		is_int(cfg.log_file_mode, 0600, "... log_file_mode = 0600");
	}
	ga_diag_finish(&d);
	ga_config_finish(&cfg);

	/* Every problem reported with its line; good keys still apply. */
	path = write_tmp("[general]\n"
	                 "default_mode = email\n"
	                 "bogus = 1\n"
	                 "tail_lines = 99999999\n"
	                 "log_file_mode = 0777\n"
	                 "[mail]\n"
	                 "tls = maybe\n"
	                 "attach_budget = 3M\n"
	                 "[nowhere]\n"
	                 "x = y\n");
	is_int(ga_config_init(&cfg), 0, "config init");
	ga_diag_init(&d, "config");
	rc = ga_config_load(&cfg, path, &d);
	is_int(rc, -EINVAL, "a file with errors: -EINVAL");
	is_int(d.errors, 5, "five errors");
	if (d.n == 5) {
		ok(strstr(d.msgs[0], ":3: error: unknown key 'bogus'") != NULL,
		   "unknown key at line 3: %s", d.msgs[0]);
		ok(strstr(d.msgs[1], ":4: error: [general] tail_lines") != NULL,
		   "out-of-range number at line 4");
		ok(strstr(d.msgs[2], ":5: error: [general] log_file_mode") !=
		           NULL,
		   "bad file mode at line 5");
		ok(strstr(d.msgs[3], ":7: error: [mail] tls") != NULL,
		   "bad tls at line 7");
		ok(strstr(d.msgs[4], ":10: error: unknown key 'x' in section "
		                     "[nowhere]") != NULL,
		   "unknown section at line 10");
	}
	is_int(cfg.default_mode, GA_MODE_EMAIL, "valid keys still apply");
	is_int(cfg.attach_budget, 3 << 20, "size suffixes");
	is_int(cfg.tail_lines, 60, "a rejected value keeps its default");
	ga_diag_finish(&d);
	ga_config_finish(&cfg);
	unlink(path);
	free(path);

	/* The INI dialect (ini.h), the same as the rules files': long lines,
	 * full-line comments only, no continuation lines. */
	{
		struct ga_buf b;
		char *text;

		ga_buf_init(&b);
		ga_buf_puts(&b, "# hash comment\n  ; indented comment\n"
		                "[recipients]\nallowed_domains = ");
		for (int i = 0; i < 500; i++)
			ga_buf_puts(&b, i ? ",d0123456" : "d0123456");
		ga_buf_puts(&b, "\r\n[mail]\nfrom = a@b.org ; not a comment\n"
		                "artifact_globs = *.json,\n"
		                "   *.yaml\n");
		text = ga_buf_steal(&b);
		path = write_tmp(text);
		ga_config_init(&cfg);
		ga_diag_init(&d, "config");
		rc = ga_config_load(&cfg, path, &d);
		is_int(rc, -EINVAL, "a continuation line is an error");
		ok(strlen(text) > 4096 && strlen(cfg.allowed_domains) == 4499,
		   "a 4.5 KB value on a line over 4 KiB is read whole "
		   "(%zu bytes)",
		   strlen(cfg.allowed_domains));
		is_str(cfg.mail_from, "a@b.org ; not a comment",
		       "';' after a value belongs to the value, as in rules");
		is_str(cfg.artifact_globs, "*.json,",
		       "the key before a continuation line keeps its line");
		ok(d.n == 1 &&
		           strstr(d.msgs[0], ":8: error: continuation lines "
		                             "are not supported") != NULL,
		   "... reported at its line: %s", d.n ? d.msgs[0] : "");
		ga_diag_finish(&d);
		ga_config_finish(&cfg);
		unlink(path);
		free(path);
		free(text);
	}

	/* A control character in a string value (would reach headers). */
	is_int(ga_config_init(&cfg), 0, "config init");
	ga_diag_init(&d, "config");
	is_int(ga_config_set(&cfg, "mail.from", "a@b\r\nBcc: x@y", "plugstack",
	                     &d),
	       -EINVAL, "control characters rejected");
	is_int(ga_config_set(&cfg, "general.default_mode", "off", "plugstack",
	                     &d),
	       0, "section.key override");
	is_int(cfg.default_mode, GA_MODE_OFF, "... applied");
	is_int(ga_config_set(&cfg, "tail_lines", "10", "plugstack", &d), 0,
	       "bare key override");
	is_int(cfg.tail_lines, 10, "... applied");
	is_int(ga_config_set(&cfg, "nope", "1", "plugstack", &d), -EINVAL,
	       "unknown override");
	ok(d.n >= 2 && strstr(d.msgs[d.n - 1], "plugstack: error: unknown "
	                                       "setting 'nope'") != NULL,
	   "... reported with its origin");
	is_int(ga_config_load(&cfg, "/nonexistent/gpualert.conf", &d), -ENOENT,
	       "a missing file: -ENOENT");
	ga_diag_finish(&d);
	ga_config_finish(&cfg);
	return tap_done();
}
