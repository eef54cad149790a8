/* SPDX-License-Identifier: MIT */
/* gpualert-helper: the capture helper that gpualert.so starts, as the
 * job's user, for each task whose stdout or stderr is a pipe (an srun
 * step).  A program of its own so that starting it costs the task an
 * exec, not a fork of slurmstepd; the copy loop is capture.c's. */
#include "capture.h"

int main(int argc, char **argv)
{
	return ga_capture_helper_main(argc, argv);
}
