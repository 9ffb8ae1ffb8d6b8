#include "anymove/core.h"

#include <stdlib.h>
#include <string.h>

static void *ami_default_alloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}
static void *ami_default_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    return realloc(ptr, size);
}
static void ami_default_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

static am_allocator ami_allocator = {ami_default_alloc, ami_default_realloc, ami_default_free,
                                     NULL};
/* Fault injection is for single-threaded tests; counters are plain on purpose. */
static uint64_t ami_alloc_limit;
static uint64_t ami_alloc_made;

void am_set_allocator(const am_allocator *a)
{
    if (a && a->alloc && a->realloc && a->free)
        ami_allocator = *a;
    else
        ami_allocator = (am_allocator){ami_default_alloc, ami_default_realloc, ami_default_free,
                                       NULL};
}

void am_set_alloc_limit(uint64_t max_allocs)
{
    ami_alloc_limit = max_allocs;
    ami_alloc_made = 0;
}

uint64_t am_alloc_count(void) { return ami_alloc_made; }

static bool ami_alloc_allowed(void)
{
    ami_alloc_made++;
    return ami_alloc_limit == 0 || ami_alloc_made <= ami_alloc_limit;
}

void *am_alloc(size_t size)
{
    if (!ami_alloc_allowed()) return NULL;
    if (size == 0) size = 1;
    void *p = ami_allocator.alloc(ami_allocator.user, size);
    if (p) memset(p, 0, size);
    return p;
}

void *am_alloc_array(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return am_alloc(n * size);
}

void *am_realloc(void *ptr, size_t size)
{
    if (!ami_alloc_allowed()) return NULL;
    if (size == 0) size = 1;
    return ami_allocator.realloc(ami_allocator.user, ptr, size);
}

void *am_realloc_array(void *ptr, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return am_realloc(ptr, n * size);
}

void am_free(void *ptr)
{
    if (ptr) ami_allocator.free(ami_allocator.user, ptr);
}

char *am_strndup(const char *s, size_t n)
{
    if (!s) return NULL;
    size_t len = strnlen(s, n);
    char *d = am_alloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *am_strdup(const char *s) { return s ? am_strndup(s, strlen(s)) : NULL; }
