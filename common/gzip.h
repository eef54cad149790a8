/* SPDX-License-Identifier: MIT */
/* gzip in memory, for the file collector that runs under slurmstepd.
 *
 * zlib is loaded with dlopen(3) on first use rather than linked: the
 * SPANK plugin is loaded into slurmstepd, srun, sbatch and salloc, and
 * only the forked child that reads a job's files ever compresses one, so
 * libz is never mapped into those processes themselves.
 */
#ifndef GPUALERT_COMMON_GZIP_H
#define GPUALERT_COMMON_GZIP_H

#include <stddef.h>

#include "util.h"

/* Compress LEN bytes of IN as one gzip member (RFC 1952, level 6) into a
 * heap buffer *OUT of *OUT_LEN bytes (free it).  Returns 0, -ENOSYS
 * (libz.so.1 cannot be loaded), -EFBIG (LEN over 4 GiB), -ENOMEM or -EIO. */
GA_MUST_CHECK int ga_gzip(const void *in, size_t len, char **out,
                          size_t *out_len);

#endif
