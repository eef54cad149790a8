/* SPDX-License-Identifier: MIT */
/* A run over manifests: read each row, classify its log three ways. */
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"
#include "fdio.h"

#define READ_CHUNK (64 * 1024)
#define MAX_FIELDS 64

struct ga_eval {
	const struct ga_ruleset *rs;
	const struct ga_eval_keywords *kw;
	struct ga_eval_item *items;
	size_t n, cap;
	size_t skipped;
	char **manifests;
	size_t n_manifests;
	struct ga_eval_confusion cm[GA_EVAL_SYSTEMS];
	char *buf; /* READ_CHUNK bytes for the keyword scan */
};

static const char *const system_names[GA_EVAL_SYSTEMS] = {
        [GA_EVAL_GPUALERT] = "gpualert",
        [GA_EVAL_KEYWORDS] = "keywords",
        [GA_EVAL_EXIT_CODE] = "exit-code",
};

const char *ga_eval_system_name(enum ga_eval_system sys)
{
	if ((unsigned)sys >= GA_EVAL_SYSTEMS)
		return "?";
	return system_names[sys];
}

struct ga_eval *ga_eval_create(const struct ga_ruleset *rs,
                               const struct ga_eval_keywords *kw)
{
	struct ga_eval *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->rs = rs;
	ev->kw = kw;
	ev->buf = malloc(READ_CHUNK);
	if (!ev->buf) {
		free(ev);
		return NULL;
	}
	return ev;
}

static void item_finish(struct ga_eval_item *it)
{
	free(it->file);
	free(it->rule);
	free(it->evidence);
}

void ga_eval_destroy(struct ga_eval *ev)
{
	if (!ev)
		return;
	for (size_t i = 0; i < ev->n; i++)
		item_finish(&ev->items[i]);
	free(ev->items);
	for (size_t i = 0; i < ev->n_manifests; i++)
		free(ev->manifests[i]);
	free(ev->manifests);
	free(ev->buf);
	free(ev);
}

size_t ga_eval_count(const struct ga_eval *ev)
{
	return ev->n;
}

size_t ga_eval_skipped(const struct ga_eval *ev)
{
	return ev->skipped;
}

const struct ga_eval_item *ga_eval_item(const struct ga_eval *ev, size_t i)
{
	return i < ev->n ? &ev->items[i] : NULL;
}

const struct ga_eval_confusion *ga_eval_confusion(const struct ga_eval *ev,
                                                  enum ga_eval_system sys)
{
	return (unsigned)sys < GA_EVAL_SYSTEMS ? &ev->cm[sys] : NULL;
}

size_t ga_eval_manifest_count(const struct ga_eval *ev)
{
	return ev->n_manifests;
}

const char *ga_eval_manifest(const struct ga_eval *ev, size_t i)
{
	return i < ev->n_manifests ? ev->manifests[i] : NULL;
}

/* Split LINE in place at tabs.  Returns the field count, or -1 past
 * MAX_FIELDS. */
static int split_tabs(char *line, char **fields)
{
	int n = 0;

	for (;;) {
		char *tab = strchr(line, '\t');

		if (n == MAX_FIELDS)
			return -1;
		fields[n++] = line;
		if (!tab)
			return n;
		*tab = '\0';
		line = tab + 1;
	}
}

static void chomp(char *s)
{
	size_t len = strlen(s);

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
}

static int keyword_classify(struct ga_eval *ev, int fd,
                            const struct ga_status *st, enum ga_class *out)
{
	struct ga_eval_kwscan *scan = ga_eval_kwscan_create(ev->kw);
	int rc = 0;

	if (!scan)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		rc = -errno;
		goto out;
	}
	while (!ga_eval_kwscan_done(scan)) {
		ssize_t n = ga_read_some(fd, ev->buf, READ_CHUNK);

		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		ga_eval_kwscan_feed(scan, ev->buf, (size_t)n);
	}
	*out = ga_eval_kwscan_result(scan, st, NULL);
out:
	ga_eval_kwscan_destroy(scan);
	return rc;
}

/* The evidence that rule authors want beside a misclassification: the
 * deciding line, or for success/unknown whatever else was seen. */
static int keep_evidence(struct ga_eval_item *it, const struct ga_verdict *v)
{
	const struct ga_evidence *e = NULL;

	if (v->rule && !(it->rule = strdup(v->rule)))
		return -ENOMEM;
	if (v->n_evidence)
		e = &v->evidence[0];
	else if (v->n_others)
		e = &v->others[0];
	if (e && e->text) {
		it->evidence = strdup(e->text);
		if (!it->evidence)
			return -ENOMEM;
		it->evidence_line = e->line;
	}
	return 0;
}

static int classify_row(struct ga_eval *ev, struct ga_eval_item *it,
                        const char *path, struct ga_diag *diag,
                        const char *manifest, unsigned lineno)
{
	struct ga_verdict v;
	struct ga_status st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ga_diag_error(diag, manifest, lineno, "log '%s': %s", it->file,
		              strerror(errno));
		return -errno;
	}
	if (it->exit_code == GA_EVAL_EXIT_UNKNOWN)
		ga_status_init(&st);
	else
		ga_status_from_int(&st, it->exit_code);
	ga_verdict_init(&v);
	rc = ga_classify_fd(ev->rs, fd, &st, &v);
	if (rc == 0) {
		it->pred[GA_EVAL_GPUALERT] = v.cls;
		rc = keep_evidence(it, &v);
	}
	ga_verdict_finish(&v);
	if (rc == 0)
		rc = keyword_classify(ev, fd, &st, &it->pred[GA_EVAL_KEYWORDS]);
	close(fd);
	if (rc < 0 && rc != -ENOMEM)
		ga_diag_error(diag, manifest, lineno, "log '%s': %s", it->file,
		              strerror(-rc));
	it->pred[GA_EVAL_EXIT_CODE] = ga_eval_exit_code_classify(&st);
	return rc;
}

/* Parse one data row into IT (file, gold, exit code).  Returns 0, or -1
 * after reporting the problem. */
static int parse_row(char *line, const int col[3], int ncols,
                     struct ga_eval_item *it, struct ga_diag *diag,
                     const char *manifest, unsigned lineno)
{
	char *fields[MAX_FIELDS];
	char *end;
	long code;
	int n = split_tabs(line, fields), cls;

	if (n != ncols) {
		ga_diag_error(diag, manifest, lineno,
		              "expected %d tab-separated fields, found %d",
		              ncols, n < 0 ? MAX_FIELDS + 1 : n);
		return -1;
	}
	if (!*fields[col[0]]) {
		ga_diag_error(diag, manifest, lineno, "empty file name");
		return -1;
	}
	cls = ga_class_from_name(fields[col[1]]);
	if (cls < 0) {
		ga_diag_error(diag, manifest, lineno, "unknown class id '%s'",
		              fields[col[1]]);
		return -1;
	}
	errno = 0;
	code = strtol(fields[col[2]], &end, 10);
	if (!*fields[col[2]]) {
		code = GA_EVAL_EXIT_UNKNOWN;
	} else if (errno || end == fields[col[2]] || *end || code < -64 ||
	           code > 255) {
		ga_diag_error(
		        diag, manifest, lineno,
		        "exit_code '%s' is not an exit code (0-255, or -N "
		        "for signal N)",
		        fields[col[2]]);
		return -1;
	}
	it->gold = (enum ga_class)cls;
	it->exit_code = (int)code;
	it->file = strdup(fields[col[0]]);
	return it->file ? 0 : -ENOMEM;
}

/* Find the required columns in the header.  Returns the column count, or
 * -1 after reporting what is missing. */
static int parse_header(char *line, int col[3], struct ga_diag *diag,
                        const char *manifest)
{
	static const char *const want[3] = {"file", "class", "exit_code"};
	char *fields[MAX_FIELDS];
	int n = split_tabs(line, fields);
	int rc = n;

	if (n < 0) {
		ga_diag_error(diag, manifest, 1, "more than %d columns",
		              MAX_FIELDS);
		return -1;
	}
	for (int w = 0; w < 3; w++) {
		col[w] = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(fields[i], want[w]))
				col[w] = i;
		if (col[w] < 0) {
			ga_diag_error(diag, manifest, 1,
			              "header has no '%s' column (need file, "
			              "class, exit_code)",
			              want[w]);
			rc = -1;
		}
	}
	return rc;
}

static int add_item(struct ga_eval *ev, const struct ga_eval_item *it)
{
	if (ev->n == ev->cap) {
		size_t cap = ev->cap ? 2 * ev->cap : 64;
		struct ga_eval_item *tmp = realloc(ev->items,
		                                   cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		ev->items = tmp;
		ev->cap = cap;
	}
	ev->items[ev->n++] = *it;
	for (int s = 0; s < GA_EVAL_SYSTEMS; s++)
		ga_eval_confusion_add(&ev->cm[s], it->gold, it->pred[s]);
	return 0;
}

static char *log_path(const char *dir, size_t dirlen, const char *file)
{
	char *path;

	if (file[0] == '/' || dirlen == 0)
		return strdup(file);
	if (asprintf(&path, "%.*s/%s", (int)dirlen, dir, file) < 0)
		return NULL;
	return path;
}

int ga_eval_add_manifest(struct ga_eval *ev, const char *path,
                         struct ga_diag *diag)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) : 0;
	char *line = NULL, *name = NULL, **tmp;
	size_t linecap = 0;
	unsigned lineno = 0;
	int col[3], ncols = -1, rc = 0;
	FILE *f;

	tmp = realloc(ev->manifests, (ev->n_manifests + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	ev->manifests = tmp;
	name = strdup(path);
	if (!name)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		ga_diag_error(diag, path, 0, "%s", strerror(errno));
		free(name);
		return rc;
	}
	ev->manifests[ev->n_manifests++] = name;
	if (slash == path)
		dirlen = 1; /* "/labels.tsv": the root directory */
	while (getline(&line, &linecap, f) >= 0) {
		struct ga_eval_item it = {0};
		char *logpath;

		lineno++;
		chomp(line);
		if (ncols < 0) {
			ncols = parse_header(line, col, diag, path);
			if (ncols < 0) {
				rc = -EINVAL;
				goto out;
			}
			continue;
		}
		if (!*line)
			continue;
		it.manifest = name;
		it.line = lineno;
		rc = parse_row(line, col, ncols, &it, diag, path, lineno);
		if (rc == -ENOMEM)
			goto out;
		if (rc < 0) {
			ev->skipped++;
			rc = 0;
			continue;
		}
		logpath = log_path(path, dirlen, it.file);
		rc = logpath ? classify_row(ev, &it, logpath, diag, path,
		                            lineno)
		             : -ENOMEM;
		free(logpath);
		if (rc == 0)
			rc = add_item(ev, &it);
		if (rc < 0)
			item_finish(&it);
		if (rc == -ENOMEM)
			goto out;
		if (rc < 0) {
			ev->skipped++;
			rc = 0;
		}
	}
	if (ferror(f)) {
		rc = -EIO;
		ga_diag_error(diag, path, 0, "read error");
	} else if (ncols < 0) {
		rc = -EINVAL;
		ga_diag_error(diag, path, 0, "empty manifest: no header line");
	}
out:
	free(line);
	fclose(f);
	return rc;
}
