/* hugemem.h - large buffers in transparent huge pages.
 *
 * A fresh 4 KiB page costs tens of microseconds to fault in on some VMs,
 * more than decoding or reading its bytes: buffers of HUGEMEM_PAGE bytes or
 * more are aligned to it and advised into huge pages, so that they are
 * faulted in 2 MiB at a time (small pages where the kernel refuses). */
#ifndef GPUBATCH_IO_HUGEMEM_H
#define GPUBATCH_IO_HUGEMEM_H

#include <stddef.h>

#define HUGEMEM_PAGE ((size_t)2 << 20) /* a transparent huge page */

/* Memory for `bytes` bytes, advised into huge pages from HUGEMEM_PAGE on
 * (malloc below it); freed with free(). NULL when out of memory. */
void *hugemem_alloc(size_t bytes);

#endif
