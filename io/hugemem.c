/* hugemem.c - large buffers in transparent huge pages (see hugemem.h). */
#define _DEFAULT_SOURCE
#include "hugemem.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Memory for a buffer, in huge pages where it is large (see hugemem.h). */
void *hugemem_alloc(size_t bytes)
{
    return hugemem_alloc_upto(bytes, UINT64_MAX);
}

/* Memory for a buffer of which at most `used` bytes are written (see
 * hugemem.h). */
void *hugemem_alloc_upto(size_t bytes, uint64_t used)
{
    void *p = NULL;
    if (bytes < HUGEMEM_PAGE)
        return malloc(bytes);
    int huge = used >= HUGEMEM_PAGE;
    if (posix_memalign(&p, huge ? HUGEMEM_PAGE : 4096, bytes) != 0)
        return NULL;
    /* advice only; against huge pages where they are always on */
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
    return p;
}
