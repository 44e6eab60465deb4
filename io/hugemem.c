/* hugemem.c - large buffers in transparent huge pages (see hugemem.h). */
#define _DEFAULT_SOURCE
#include "hugemem.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Memory for a buffer, in huge pages where it is large (see hugemem.h). */
void *hugemem_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes < HUGEMEM_PAGE)
        return malloc(bytes);
    if (posix_memalign(&p, HUGEMEM_PAGE, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only */
#endif
    return p;
}

/* Memory for a buffer of which at most `used` bytes are written (see
 * hugemem.h). */
void *hugemem_alloc_upto(size_t bytes, uint64_t used)
{
    if (used >= HUGEMEM_PAGE || bytes < HUGEMEM_PAGE)
        return hugemem_alloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes) != 0)
        return NULL;
#ifdef MADV_NOHUGEPAGE
    madvise(p, bytes, MADV_NOHUGEPAGE); /* advice only: where huge pages are always on */
#endif
    return p;
}
