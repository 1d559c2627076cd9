/* The CSCM micro-benchmarks (cscm-containerized-scm.txt §IV), one backend at a time.
 *
 *   cscmbench BACKEND WHERE BENCH SECONDS [SIZE]
 *
 * BACKEND / WHERE:
 *   scm-broker NAME   a libscm region asked of the pmem broker (inside a container)
 *   scm-path PATH     a libscm region by host path
 *   mmap PATH         a plain file mapped with mmap, made durable with msync
 *   dram -            malloc, nothing durable (the ceiling)
 * BENCH (each runs for SECONDS and prints "BENCH VALUE UNIT"):
 *   array      20M 4-byte integers, random single-element updates   -> updates/s
 *   btree      B-tree of 200k keys, then single-key inserts          -> inserts/s
 *   stream     STREAM Copy over two 90 MB arrays                     -> MB/s
 *   array-tx   transactions of 10 random element updates, durable    -> tx/s
 *   btree-tx   one durable insert per transaction                    -> tx/s
 *   syscall    one system call (getppid) in a loop: what every request of a
 *              syscall-bound server (Redis) pays on top, e.g. for a seccomp filter -> ns/call
 *   inspect    (scm-path only) print the region's object count
 * SIZE overrides the element count (array) or the initial keys (btree) or the
 * MB per STREAM array, for small smoke runs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libscm.h"

/* ---- backends ---- */

enum kind { SCM, MMAP, DRAM };
static enum kind backend;
static scm_region *region;
static char *map_base;
static size_t map_size, map_used;

static void die(const char *what) {
    fprintf(stderr, "cscmbench: %s (%s)\n", what, backend == SCM ? scm_last_error() : "");
    exit(1);
}

static void open_backend(const char *kind, const char *where, size_t size) {
    if (strcmp(kind, "scm-broker") == 0 || strcmp(kind, "scm-path") == 0) {
        backend = SCM;
        uint32_t flags = SCM_CREATE | (kind[4] == 'p' ? SCM_PATH : 0);
        if (scm_open(where, size, flags, &region) != SCM_OK) die("scm_open");
        scm_set_default(region);
    } else if (strcmp(kind, "mmap") == 0) {
        backend = MMAP;
        int fd = open(where, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || posix_fallocate(fd, 0, (off_t)size) != 0) die("open/fallocate the mmap file");
        map_base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map_base == MAP_FAILED) die("mmap");
        map_size = size;
        close(fd);
    } else if (strcmp(kind, "dram") == 0) {
        backend = DRAM;
    } else {
        die("unknown backend");
    }
}

static void *alloc(size_t n) {
    switch (backend) {
    case SCM: {
        void *p = scmalloc(n);
        if (!p) die("scmalloc");
        return p;
    }
    case MMAP: {
        size_t at = (map_used + 63) & ~(size_t)63;
        if (at + n > map_size) die("mmap file full");
        map_used = at + n;
        return map_base + at;
    }
    default: {
        void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
        if (!p) die("malloc");
        return p;
    }
    }
}

static void msync_range(void *p, size_t len) {
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
    if (msync((void *)start, (uintptr_t)p + len - start, MS_SYNC) != 0) die("msync");
}

/* A transaction: begin, add ranges before changing them, commit durably. For the
 * mmap backend the added ranges are msync'd at commit (no undo log: that is the
 * volume/storage baseline of the paper, durability without atomicity). */
#define MAX_RANGES 64
static void *tx_ptr[MAX_RANGES];
static size_t tx_len[MAX_RANGES];
static int tx_n;

static void tx_begin(void) {
    tx_n = 0;
    if (backend == SCM && scm_tx_begin(region) != SCM_OK) die("scm_tx_begin");
}

static void tx_add(void *p, size_t len) {
    if (backend == SCM) {
        if (scm_tx_add(p, len) != SCM_OK) die("scm_tx_add");
    } else if (tx_n < MAX_RANGES) {
        tx_ptr[tx_n] = p;
        tx_len[tx_n++] = len;
    }
}

static void tx_commit(void) {
    if (backend == SCM) {
        if (scm_tx_commit(region) != SCM_OK) die("scm_tx_commit");
    } else if (backend == MMAP) {
        for (int i = 0; i < tx_n; i++) msync_range(tx_ptr[i], tx_len[i]);
    }
}

/* ---- timing ---- */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- array ---- */

static double bench_array(double seconds, size_t n, int durable) {
    uint32_t *a = alloc(n * sizeof *a);
    memset(a, 0, n * sizeof *a);
    uint64_t ops = 0;
    double t0 = now(), t;
    do {
        for (int batch = 0; batch < 1000; batch++) {
            if (durable) {
                tx_begin();
                for (int k = 0; k < 10; k++) {
                    uint32_t *e = &a[next_rand() % n];
                    tx_add(e, sizeof *e);
                    *e += 1;
                }
                tx_commit();
            } else {
                a[next_rand() % n] += 1;
            }
            ops++;
        }
        t = now() - t0;
    } while (t < seconds);
    return ops / t;
}

/* ---- B-tree (keys only, order 2*T) ---- */

#define T 8
struct bnode {
    uint32_t n, leaf;
    uint64_t keys[2 * T - 1];
    struct bnode *child[2 * T];
};

static struct bnode *new_node(int leaf) {
    struct bnode *x = alloc(sizeof *x);
    memset(x, 0, sizeof *x);
    x->leaf = (uint32_t)leaf;
    return x;
}

static void split_child(struct bnode *x, int i, int durable) {
    struct bnode *y = x->child[i];
    struct bnode *z = new_node((int)y->leaf);
    if (durable) {
        tx_add(x, sizeof *x);
        tx_add(y, sizeof *y);
    }
    z->n = T - 1;
    memcpy(z->keys, y->keys + T, (T - 1) * sizeof(uint64_t));
    if (!y->leaf) memcpy(z->child, y->child + T, T * sizeof(struct bnode *));
    y->n = T - 1;
    memmove(x->child + i + 2, x->child + i + 1, (x->n - i) * sizeof(struct bnode *));
    x->child[i + 1] = z;
    memmove(x->keys + i + 1, x->keys + i, (x->n - i) * sizeof(uint64_t));
    x->keys[i] = y->keys[T - 1];
    x->n++;
    if (durable && backend != SCM) tx_add(z, sizeof *z); /* msync the new node too */
}

static struct bnode *btree_insert(struct bnode *root, uint64_t k, int durable) {
    if (root->n == 2 * T - 1) {
        struct bnode *s = new_node(0);
        s->child[0] = root;
        split_child(s, 0, durable);
        root = s;
    }
    struct bnode *x = root;
    while (!x->leaf) {
        int i = (int)x->n - 1;
        while (i >= 0 && k < x->keys[i]) i--;
        i++;
        if (x->child[i]->n == 2 * T - 1) {
            split_child(x, i, durable);
            if (k > x->keys[i]) i++;
        }
        x = x->child[i];
    }
    if (durable) tx_add(x, sizeof *x);
    int i = (int)x->n - 1;
    while (i >= 0 && k < x->keys[i]) {
        x->keys[i + 1] = x->keys[i];
        i--;
    }
    x->keys[i + 1] = k;
    x->n++;
    return root;
}

static double bench_btree(double seconds, size_t init, int durable) {
    struct bnode *root = new_node(1);
    for (size_t i = 0; i < init; i++) root = btree_insert(root, next_rand(), 0);
    uint64_t ops = 0;
    double t0 = now(), t;
    do {
        for (int batch = 0; batch < 100; batch++) {
            if (durable) tx_begin();
            root = btree_insert(root, next_rand(), durable);
            if (durable) tx_commit();
            ops++;
        }
        t = now() - t0;
    } while (t < seconds);
    return ops / t;
}

/* ---- STREAM Copy ---- */

static double bench_stream(double seconds, size_t mb) {
    size_t n = mb * 1000 * 1000 / sizeof(double);
    double *a = alloc(n * sizeof *a), *c = alloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++) a[i] = 1.0, c[i] = 0.0;
    double best = 1e30, t0 = now();
    int reps = 0;
    do {
        double s = now();
        for (size_t i = 0; i < n; i++) c[i] = a[i];
        double dt = now() - s;
        if (dt < best) best = dt;
        reps++;
    } while (now() - t0 < seconds || reps < 3);
    if (c[n / 2] != 1.0) die("stream copy check");
    return 2.0 * n * sizeof(double) / best / 1e6; /* STREAM counts bytes read + written */
}

/* ---- one system call ---- */

static double bench_syscall(double seconds) {
    long calls = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 100000; i++) syscall(SYS_getppid);
        calls += 100000;
        t = now() - t0;
    } while (t < seconds);
    return t * 1e9 / calls;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s BACKEND WHERE BENCH SECONDS [SIZE]\n", argv[0]);
        return 2;
    }
    const char *bench = argv[3];
    double seconds = atof(argv[4]);
    size_t size = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
    size_t region_size = strtoull(getenv("CSCM_REGION_SIZE") ? getenv("CSCM_REGION_SIZE") : "1073741824", NULL, 10);
    if (strcmp(bench, "inspect") == 0) {
        scm_region *r;
        scm_info info;
        if (scm_open(argv[2], 0, SCM_PATH, &r) != SCM_OK || scm_region_info(r, &info) != SCM_OK) die("inspect");
        printf("objects %lu\n", (unsigned long)info.objects);
        return 0;
    }
    open_backend(argv[1], argv[2], region_size);
    double v;
    const char *unit;
    if (strcmp(bench, "array") == 0 || strcmp(bench, "array-tx") == 0) {
        v = bench_array(seconds, size ? size : 20000000, bench[5] == '-');
        unit = bench[5] == '-' ? "tx/s" : "updates/s";
    } else if (strcmp(bench, "btree") == 0 || strcmp(bench, "btree-tx") == 0) {
        v = bench_btree(seconds, size ? size : 200000, bench[5] == '-');
        unit = bench[5] == '-' ? "tx/s" : "inserts/s";
    } else if (strcmp(bench, "stream") == 0) {
        v = bench_stream(seconds, size ? size : 90);
        unit = "MB/s";
    } else if (strcmp(bench, "syscall") == 0) {
        v = bench_syscall(seconds);
        unit = "ns/call";
    } else {
        die("unknown benchmark");
        return 2;
    }
    printf("%s %.1f %s\n", bench, v, unit);
    if (region) scm_close(region);
    return 0;
}
