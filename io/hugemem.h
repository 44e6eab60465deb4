/* hugemem.h - large buffers in transparent huge pages.
 *
 * A fresh 4 KiB page costs tens of microseconds to fault in on some VMs,
 * more than decoding or reading its bytes: buffers of HUGEMEM_PAGE bytes or
 * more are aligned to it and advised into huge pages, so that they are
 * faulted in 2 MiB at a time (small pages where the kernel refuses). */
#ifndef GPUBATCH_IO_HUGEMEM_H
#define GPUBATCH_IO_HUGEMEM_H

#include <stddef.h>
#include <stdint.h>

#define HUGEMEM_PAGE ((size_t)2 << 20) /* a transparent huge page */

/* Memory for `bytes` bytes, advised into huge pages from HUGEMEM_PAGE on
 * (malloc below it); freed with free(). NULL when out of memory. */
void *hugemem_alloc(size_t bytes);

/* hugemem_alloc for a buffer of which at most `used` bytes will be
 * written: advised against huge pages where that is under HUGEMEM_PAGE,
 * since the first byte written would fault a whole huge page in (zeroing
 * 2 MiB costs a small input's run more than the rest of its work). */
void *hugemem_alloc_upto(size_t bytes, uint64_t used);

#endif
