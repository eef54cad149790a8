/* SPDX-License-Identifier: MIT */
/* The failure taxonomy: the label contract shared by the classifier, the
 * corpus and the evaluation (see README.md, "Classes"). */
#ifndef GPUALERT_COMMON_TAXONOMY_H
#define GPUALERT_COMMON_TAXONOMY_H

enum ga_class {
	GA_CLASS_SUCCESS = 0,
	GA_CLASS_CUDA_OOM,
	GA_CLASS_HOST_OOM,
	GA_CLASS_NCCL,
	GA_CLASS_GPU_HW,
	GA_CLASS_CUDA_KERNEL,
	GA_CLASS_DEVICE_ASSERT,
	GA_CLASS_CUDA_SETUP,
	GA_CLASS_NAN,
	GA_CLASS_IMPORT_ERROR,
	GA_CLASS_DISK_FULL,
	GA_CLASS_IO_ERROR,
	GA_CLASS_SEGFAULT,
	GA_CLASS_TIME_LIMIT,
	GA_CLASS_CANCELLED,
	GA_CLASS_CODE_ERROR,
	GA_CLASS_UNKNOWN,
	GA_CLASS_COUNT,
};

/* The class id ("cuda_oom"), a static string; "?" for an invalid value. */
const char *ga_class_name(enum ga_class c);

/* Parse a class id.  Returns the class, or -1 if NAME is not a class id. */
int ga_class_from_name(const char *name);

/* The class's place in the priority order when its rules do not set one:
 * higher wins.  See rules/README.md for the reasoning. */
int ga_class_default_priority(enum ga_class c);

/* One-line advice for the user, used when a rule has no hint of its own. */
const char *ga_class_default_hint(enum ga_class c);

/* Short human description ("GPU memory exhausted"). */
const char *ga_class_title(enum ga_class c);

#endif
