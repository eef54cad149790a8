/* SPDX-License-Identifier: MIT */
/* The notification mail, rendered by gpualert itself (not by libcurl's
 * MIME API) so the output is a pure function of its inputs: golden tests
 * compare whole messages byte for byte, and a re-send after a crash is the
 * same message with the same Message-ID.
 *
 * Structure (RFC 2046 section 5.1):
 *   multipart/mixed
 *     multipart/alternative
 *       text/plain; charset=utf-8 (quoted-printable)
 *       text/html; charset=utf-8 (quoted-printable)
 *     attachments (base64), within the attachment budget
 */
#ifndef GPUALERT_COMMON_MIME_H
#define GPUALERT_COMMON_MIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "classifier.h"
#include "report.h"
#include "taxonomy.h"
#include "util.h"

/* A file offered for attaching, in priority order. */
struct ga_mail_file {
	const char *filename;     /* attachment name; sanitised when rendered */
	const char *origin;       /* where it came from (shown in the body) */
	const char *content_type; /* NULL: application/octet-stream */
	const char *data;         /* NULL: not available (REASON says why) */
	size_t len;
	uint64_t orig_size; /* size of the original (before gzip) */
	const char *note;   /* e.g. "gzip-compressed"; may be NULL */
};

/* A file that was not collected at all (listed in the body). */
struct ga_mail_skipped {
	const char *path;
	uint64_t size;
	const char *reason;
};

struct ga_mail {
	/* The job's reports (several steps or nodes, or the tasks of an
	 * array job), borrowed.  All must belong to one job key. */
	const struct ga_report *const *reports;
	size_t n_reports;
	const char *from;       /* envelope and From: address */
	const char *message_id; /* "<...@...>" */
	int64_t date;           /* Date: (unix seconds) */
	uint64_t attach_budget; /* bytes of attachment content */
	const struct ga_mail_file *files;
	size_t n_files;
	const struct ga_mail_skipped *skipped;
	size_t n_skipped;
	/* Site wording ([mail] from_name, subject_prefix, footer, help_url);
	 * NULL or "": "gpualert", no prefix, no footer, no link. */
	const char *from_name;
	const char *subject_prefix;
	const char *footer;
	const char *help_url;
};

/* What a message says, for the other channels (borrowed from M's reports,
 * valid while they are). */
struct ga_mail_summary {
	const char *state;  /* Slurm's: COMPLETED, FAILED, TIMEOUT, ... */
	bool failed;        /* a state other than COMPLETED (any array task) */
	bool finding;       /* gpualert found a cause (even after exit 0) */
	const char *job_id; /* the job, or the array's id */
	const char *job_name, *user, *node, *hint;
	enum ga_class cls;
	const struct ga_evidence *evidence; /* first line; NULL if none */
	size_t n_reports;
};

/* Render M as a complete RFC 5322 message with CRLF line ends into OUT.
 * The subject leads with Slurm's state (never one Slurm would not show),
 * then gpualert's finding.  The body answers what happened, where and what
 * now before any attachment: root cause and hint, evidence, the root
 * task's last lines, a facts table (exit, elapsed vs limit, memory peak vs
 * request, GPUs, script, directory) and, for arrays, the failing tasks as
 * ARRAY_INDEX.  FILES are attached in order while they fit ATTACH_BUDGET,
 * a repeated name and size once; every file that does not fit, and every
 * SKIPPED one, is listed with its size, path and reason.  Returns 0,
 * -EINVAL (no reports, or no valid recipient) or -ENOMEM. */
GA_MUST_CHECK int ga_mime_render(const struct ga_mail *m, struct ga_buf *out);

/* The subject line of M (with the site prefix), unencoded UTF-8. */
void ga_mime_subject(const struct ga_mail *m, struct ga_buf *out);

/* Fill S from M.  Returns 0 or -EINVAL (no reports). */
GA_MUST_CHECK int ga_mime_summary(const struct ga_mail *m,
                                  struct ga_mail_summary *s);

/* Whether M should be sent at all: false only when every report asked
 * for failures only (notify = "fail") and the job completed with nothing
 * found.  Such reports are still spooled (statistics, durable logs). */
bool ga_mime_wanted(const struct ga_mail *m);

/* The validated recipients of M's reports, deduplicated, in order: the
 * envelope for SMTP.  Returns a heap array of borrowed pointers (into the
 * reports; free only the array) and sets *N, or NULL with *N = 0. */
const char **ga_mime_recipients(const struct ga_mail *m, size_t *n);

/* True when ADDR is an acceptable recipient: local@domain, 3..254 bytes,
 * printable ASCII without spaces, quotes, angle brackets, commas,
 * semicolons, backslashes or CR/LF (RFC 5321 section 4.5.3.1.3 bounds the
 * path to 256 octets; the plugin validated the policy, this only makes
 * sure nothing reaches the SMTP envelope or a header that could change
 * its meaning). */
bool ga_mime_address_ok(const char *addr);

/* Append S as the value of an unstructured header (RFC 5322 section
 * 3.2.5): control characters including CR and LF become spaces, the value
 * is cut to MAX bytes (on a UTF-8 boundary), and when it is not plain
 * printable ASCII it is written as RFC 2047 "B" encoded-words of at most
 * 75 characters, folded with CRLF SP.  START is the length of the header
 * name and colon already on the line. */
void ga_mime_header_text(struct ga_buf *out, const char *s, size_t max,
                         size_t start);

/* Append LEN bytes as base64 (RFC 2045 section 6.8) in lines of at most
 * 76 characters, each ended with CRLF. */
void ga_mime_base64(struct ga_buf *out, const void *data, size_t len);

/* Append UTF-8 text (LF line ends) as quoted-printable (RFC 2045 section
 * 6.7): lines of at most 76 characters, CRLF line ends, trailing
 * whitespace encoded. */
void ga_mime_qp(struct ga_buf *out, const char *s, size_t len);

/* "<gpualert.JOB.HASH@DOMAIN>": JOB sanitised, HASH a 64-bit FNV-1a of
 * CLAIM (the spool entry name) in hex, DOMAIN the part of FROM after '@'
 * ("localhost" if none).  Stable across re-sends. */
void ga_mime_message_id(const char *job, const char *claim, const char *from,
                        char *out, size_t size);

#endif
