/* SPDX-License-Identifier: MIT */
#include "taxonomy.h"

#include <string.h>

struct class_info {
	const char *name;
	const char *title;
	int priority;
	const char *hint;
};

/* Priorities encode the taxonomy's rules of thumb (rules/README.md):
 * scheduler verdicts first, then hardware, then concrete resource
 * exhaustion, then specific GPU/software faults, then communication
 * failures (usually an echo of another rank's crash) and finally the
 * generic user-code exception. */
static const struct class_info classes[GA_CLASS_COUNT] = {
        [GA_CLASS_SUCCESS] = {"success", "the job finished successfully", 0,
                              "Nothing to do."},
        [GA_CLASS_CUDA_OOM] =
                {"cuda_oom", "GPU memory exhausted", 80,
                 "Reduce the batch size, use activation checkpointing or mixed precision, or shard the model over more GPUs."},
        [GA_CLASS_HOST_OOM] =
                {"host_oom", "host memory exhausted", 80,
                 "Request more memory (--mem), use fewer DataLoader workers, or stream the data instead of loading it whole."},
        [GA_CLASS_NCCL] =
                {"nccl", "distributed communication failed", 30,
                 "Check the other ranks' logs for the first error; then the network and NCCL settings (NCCL_DEBUG=INFO)."},
        [GA_CLASS_GPU_HW] =
                {"gpu_hw", "GPU hardware or driver fault", 90,
                 "Rerun on another node and tell the administrators which node and GPU failed."},
        [GA_CLASS_CUDA_KERNEL] =
                {"cuda_kernel", "a GPU kernel faulted", 70,
                 "Rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing kernel; check with compute-sanitizer."},
        [GA_CLASS_DEVICE_ASSERT] =
                {"device_assert", "a device-side assertion fired", 75,
                 "Check label ranges and embedding/index bounds; rerun with CUDA_LAUNCH_BLOCKING=1 for the exact line."},
        [GA_CLASS_CUDA_SETUP] =
                {"cuda_setup", "the GPU stack was unusable", 65,
                 "Check the loaded modules, --gres/--gpus, the driver and that the software is built for this GPU."},
        [GA_CLASS_NAN] =
                {"nan", "training diverged (NaN/Inf)", 60,
                 "Lower the learning rate, add gradient clipping, or use bf16 instead of fp16."},
        [GA_CLASS_IMPORT_ERROR] =
                {"import_error", "the software environment is broken", 55,
                 "Fix the environment: activate the right venv/conda env or module, reinstall the package."},
        [GA_CLASS_DISK_FULL] =
                {"disk_full", "storage full or quota exceeded", 80,
                 "Free space or write checkpoints and outputs to a filesystem with room (check your quota)."},
        [GA_CLASS_IO_ERROR] =
                {"io_error", "a file could not be read or written", 50,
                 "Check the path, its permissions, and that the file is complete."},
        [GA_CLASS_SEGFAULT] =
                {"segfault", "the process crashed", 58,
                 "Get a core dump or a backtrace (faulthandler, gdb); check native extensions and library versions."},
        [GA_CLASS_TIME_LIMIT] =
                {"time_limit", "stopped at the time limit", 100,
                 "Resubmit with a longer --time, or checkpoint and resume."},
        [GA_CLASS_CANCELLED] =
                {"cancelled", "cancelled, preempted or node failure", 95,
                 "Resubmit or requeue the job if it should run again."},
        [GA_CLASS_CODE_ERROR] =
                {"code_error", "an exception in the job's code", 20,
                 "Fix the code at the innermost frame of the traceback."},
        [GA_CLASS_UNKNOWN] =
                {"unknown", "failed for an unrecognised reason", 0,
                 "Read the log tail below; no known failure message was found."},
};

const char *ga_class_name(enum ga_class c)
{
	if ((unsigned)c >= GA_CLASS_COUNT)
		return "?";
	return classes[c].name;
}

int ga_class_from_name(const char *name)
{
	for (int i = 0; i < GA_CLASS_COUNT; i++)
		if (strcmp(classes[i].name, name) == 0)
			return i;
	return -1;
}

int ga_class_default_priority(enum ga_class c)
{
	if ((unsigned)c >= GA_CLASS_COUNT)
		return 0;
	return classes[c].priority;
}

const char *ga_class_default_hint(enum ga_class c)
{
	if ((unsigned)c >= GA_CLASS_COUNT)
		return "";
	return classes[c].hint;
}

const char *ga_class_title(enum ga_class c)
{
	if ((unsigned)c >= GA_CLASS_COUNT)
		return "";
	return classes[c].title;
}
