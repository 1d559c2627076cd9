/* LD_PRELOAD malloc on libscm: an unmodified program (Redis) keeps its heap in
 * a persistent region. malloc/calloc/realloc/free/malloc_usable_size go to the
 * default region (SCM_REGION, SCM_REGION_SIZE; through the broker inside a
 * container). What the region cannot serve goes to the next allocator: calls
 * made while libscm itself is allocating (its own bookkeeping), alignments above
 * 16, and everything once the region is full. free() tells the two apart by
 * address. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libscm.h"

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static size_t (*next_usable)(void *);
static int (*next_memalign)(void **, size_t, size_t);

static __thread int inside;  /* this thread is inside libscm or dlsym */
static int region_broken;    /* the region could not be opened: use the next allocator */

/* dlsym may allocate before the real allocator is known: serve that from here. */
static char bootstrap[64 * 1024] __attribute__((aligned(16)));
static size_t bootstrap_used;

static void *bootstrap_alloc(size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (bootstrap_used + n > sizeof bootstrap) return NULL;
    void *p = bootstrap + bootstrap_used;
    bootstrap_used += n;
    return p;
}

static int in_bootstrap(void *p) { return (char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap; }

static void resolve(void) {
    if (next_malloc) return;
    inside++;
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_free = dlsym(RTLD_NEXT, "free");
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    next_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    inside--;
}

/* The region's object at p, if p is one (0 otherwise). */
static int ours(void *p) { return p && !in_bootstrap(p) && scm_off(NULL, p) != 0; }

static void *region_alloc(size_t n) {
    if (inside || region_broken) return NULL;
    inside++;
    void *p = scmalloc(n ? n : 1);
    if (!p && scm_mode(NULL) == SCM_MODE_NONE) region_broken = 1;
    inside--;
    return p;
}

void *malloc(size_t n) {
    if (!next_malloc) {
        if (inside) return bootstrap_alloc(n);
        resolve();
    }
    void *p = region_alloc(n);
    return p ? p : next_malloc(n);
}

void free(void *p) {
    if (!p || in_bootstrap(p)) return;
    if (!inside && ours(p)) {
        inside++;
        scm_free(p);
        inside--;
        return;
    }
    if (!next_free) resolve();
    next_free(p);
}

void *calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    if (!next_calloc) {
        if (inside) return bootstrap_alloc(count * size); /* static, already zero */
        resolve();
    }
    void *p = region_alloc(count * size);
    if (p) return memset(p, 0, count * size);
    return next_calloc(count, size);
}

size_t malloc_usable_size(void *p) {
    if (!p) return 0;
    if (in_bootstrap(p)) return 16;
    if (!inside && ours(p)) {
        uint64_t size = 0;
        inside++;
        scm_object_size(p, &size);
        inside--;
        return (size_t)size;
    }
    if (!next_usable) resolve();
    return next_usable(p);
}

void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    if (!n) {
        free(p);
        return NULL;
    }
    if (!in_bootstrap(p) && !(!inside && ours(p))) {
        if (!next_realloc) resolve();
        return next_realloc(p, n);
    }
    size_t old = malloc_usable_size(p);
    if (old >= n && !in_bootstrap(p)) return p;
    void *q = malloc(n);
    if (!q) return NULL;
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (align <= 16) {
        void *p = malloc(n);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    if (!next_memalign) resolve();
    return next_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n) {
    void *p = NULL;
    return posix_memalign(&p, align, n) == 0 ? p : NULL;
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }

void *valloc(size_t n) { return aligned_alloc((size_t)sysconf(_SC_PAGESIZE), n); }
