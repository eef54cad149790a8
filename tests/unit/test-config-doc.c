/* SPDX-License-Identifier: MIT */
/* gpualert.conf(5) and the shipped gpualert.conf against the code's key
 * table: every key documented once in its section, nothing documented that
 * the code does not know, and every documented default equal to the code's
 * default.  Adding a key without documenting it fails here. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "tap.h"

#define MAX_DOC 256

struct doc_key {
	char section[32];
	char name[64];
	char value[512];
	unsigned line;
};

static void bail(const char *what, const char *arg)
{
	printf("Bail out! %s %s\n", what, arg);
	exit(1);
}

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

/* scdoc escapes: "\X" is X. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*d++ = *s;
	}
	*d = '\0';
}

/* Man page: "## [section]" headings, then "*key* = default" lines.
 * Config file: "[section]" and "key = value" lines. */
static size_t read_keys(const char *path, bool man, struct doc_key *out)
{
	char *text = NULL, *save = NULL, section[32] = "";
	size_t len, n = 0;
	unsigned line = 0;

	if (ga_read_file(path, 1 << 20, &text, &len))
		bail("cannot read", path);
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char name[64], *eq;

		line++;
		if (man && !strncmp(l, "# ", 2))
			section[0] = '\0'; /* out of KEYS */
		if (man ? sscanf(l, "## [%31[a-z]]", section) == 1
		        : sscanf(l, "[%31[a-z]]", section) == 1)
			continue;
		if (man ? sscanf(l, "*%63[a-z_]* =", name) != 1
		        : (l[0] == ';' || l[0] == '#' ||
		           sscanf(l, "%63[a-z_] =", name) != 1))
			continue;
		eq = strchr(l, '=');
		if (!eq || !section[0] || n == MAX_DOC)
			continue;
		snprintf(out[n].section, sizeof(out[n].section), "%s", section);
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		eq++;
		while (*eq == ' ')
			eq++;
		snprintf(out[n].value, sizeof(out[n].value), "%s", eq);
		if (man)
			unescape(out[n].value);
		out[n].line = line;
		n++;
	}
	free(text);
	return n;
}

static void check(const char *what, const char *path, bool man, bool defaults)
{
	static struct doc_key doc[MAX_DOC];
	size_t n = read_keys(path, man, doc);
	struct ga_config def, got;
	bool all = true;

	ga_config_init(&def);
	for (size_t i = 0; i < ga_config_n_keys(); i++) {
		const char *sec, *name;
		size_t seen = 0;

		ga_config_key(i, &sec, &name);
		for (size_t j = 0; j < n; j++)
			seen += !strcmp(doc[j].section, sec) &&
			        !strcmp(doc[j].name, name);
		if (seen != 1) {
			diag("%s: [%s] %s documented %zu times", what, sec,
			     name, seen);
			all = false;
		}
	}
	ok(all, "%s: every key of the code, once, in its section", what);

	all = true;
	for (size_t j = 0; j < n; j++) {
		char key[256], want[4096], have[4096];
		struct ga_diag d;

		snprintf(key, sizeof(key), "%.31s.%.63s", doc[j].section,
		         doc[j].name);
		ga_config_init(&got);
		ga_diag_init(&d, "doc");
		if (ga_config_set(&got, key, doc[j].value, "doc", &d) ||
		    ga_config_get(&got, key, have, sizeof(have)) ||
		    ga_config_get(&def, key, want, sizeof(want))) {
			diag("%s:%u: %s = '%s': not a key of the code, or a "
			     "bad value",
			     path, doc[j].line, key, doc[j].value);
			all = false;
		} else if (defaults && strcmp(have, want)) {
			diag("%s:%u: %s: documented default '%s', the code's "
			     "'%s'",
			     path, doc[j].line, key, have, want);
			all = false;
		}
		ga_diag_finish(&d);
		ga_config_finish(&got);
	}
	ok(all, "%s: %zu documented keys exist%s", what, n,
	   defaults ? ", with the code's defaults" : " and take their values");
	ga_config_finish(&def);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		bail(argv[0], "MAN.scd gpualert.conf");
	ga_log_set_sink(quiet, NULL);
	check("gpualert.conf(5)", argv[1], true, true);
	check("etc/gpualert.conf", argv[2], false, false);
	return tap_done();
}
