/* detach.h - ending the process without waiting for the driver's teardown.
 *
 * When a process that holds a CUDA context exits, the kernel releases the
 * context (its device memory, pinned pages, channels and address space)
 * before the process counts as ended: 0.1 to 0.2 s that whoever waits for
 * it (a shell, a pipeline, a batch script) spends idle after the results
 * are complete. detach_exit() ends the process at once and leaves that
 * release to a helper process which shares its memory and file table and
 * exits as soon as every thread of the process is gone. The helper closes
 * nothing it did not hold: the caller's other files (stdout, stderr, the
 * inputs) are closed before the process ends, so a reader of its output
 * sees the end of the data at the same moment as before.
 * Failure policy: whenever the helper cannot be made (no matching file
 * open, too many files, no pidfd_open(2) in the kernel), detach_exit()
 * returns and the caller ends as usual. Linux only. */
#ifndef GPUBATCH_RUNTIME_DETACH_H
#define GPUBATCH_RUNTIME_DETACH_H

/* The path prefix of the driver's device files (/dev/nvidiactl, ...). */
#define DETACH_DRIVER_FILES "/dev/nvidia"

/* Ends the process with `status` (as _exit(2): stdio must be flushed
 * first), leaving the files whose path starts with keep_prefix, and the
 * memory, to the helper. Returns only where it cannot. */
void detach_exit(int status, const char *keep_prefix);

#endif
