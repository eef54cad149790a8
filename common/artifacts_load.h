/* SPDX-License-Identifier: MIT */
/* The sender's side of the files collected with a report
 * (ga_artifacts_collect, artifacts.h): reading att/NAME back as mail
 * attachments and the list of files left out.
 */
#ifndef GPUALERT_COMMON_ARTIFACTS_LOAD_H
#define GPUALERT_COMMON_ARTIFACTS_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "mime.h"
#include "util.h"

/* What the sender reads back from one att/NAME directory. */
struct ga_artifact_set {
	struct ga_mail_file *files;
	size_t n_files;
	struct ga_mail_skipped *skipped;
	size_t n_skipped;
	char **strings; /* everything the pointers above point to */
	size_t n_strings;
};

void ga_artifact_set_init(struct ga_artifact_set *s);
void ga_artifact_set_finish(struct ga_artifact_set *s);

/* Append the files of ATT_DIR (a directory written by
 * ga_artifacts_collect) to S, reading at most MAX bytes in all.  A missing
 * directory adds nothing.  Returns 0, -ENOMEM or -errno. */
GA_MUST_CHECK int ga_artifacts_load(const char *att_dir, uint64_t max,
                                    struct ga_artifact_set *s);

#endif
