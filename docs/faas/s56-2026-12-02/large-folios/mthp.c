/* A heap of MIB MiB (half random, half zero pages, as bench/faas's functions),
 * paged out by MADV_PAGEOUT, then read back by touching one byte a page from
 * its start (a cold call's faults): prints the time and the faults taken.
 * Second argument: "willneed" reads it back by MADV_WILLNEED first (memext's
 * read-back), "populate" by process_vm_readv of one byte a page (memext-sys
 * populate: the faults are taken in the target's page tables), "collapse"
 * by MADV_WILLNEED then MADV_COLLAPSE (memext's read-back with map_back), each timed
 * apart before the reads. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>
#include <time.h>
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], 0, 10) : 64, len = mib << 20, align = 2 << 20;
    char *raw = mmap(0, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) { perror("mmap"); return 1; }
    char *p = (char *)(((uintptr_t)raw + align - 1) & ~(align - 1));
    uint64_t x = 88172645463325252ull;
    for (size_t off = 0; off < len; off += 4096) {
        if ((off / 4096) % 2 == 0) {
            for (size_t i = 0; i < 4096; i += 8) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; memcpy(p + off + i, &x, 8); }
        } else p[off] = 0;
    }
    if (madvise(p, len, MADV_PAGEOUT)) { perror("madvise"); return 1; }
    unsigned char *vec = malloc(len / 4096); mincore(p, len, vec);
    size_t res = 0; for (size_t i = 0; i < len / 4096; i++) res += vec[i] & 1;
    double w = 0;
    const char *how = argc > 2 ? argv[2] : "";
    struct rusage pa, pb; getrusage(RUSAGE_SELF, &pa);
    if (!strcmp(how, "willneed")) { double t = now(); madvise(p, len, MADV_WILLNEED); w = now() - t; }
    if (!strcmp(how, "collapse")) {
        double t = now(); madvise(p, len, MADV_WILLNEED);
        if (madvise(p, len, 25 /* MADV_COLLAPSE */)) perror("MADV_COLLAPSE");
        w = now() - t;
    }
    if (!strcmp(how, "populate")) {
        enum { N = 1024 }; static struct iovec remote[N]; static char sink[N];
        struct iovec local = { sink, N };
        double t = now();
        for (size_t off = 0; off < len; off += (size_t)N * 4096) {
            size_t n = 0;
            for (; n < N && off + n * 4096 < len; n++) { remote[n].iov_base = p + off + n * 4096; remote[n].iov_len = 1; }
            local.iov_len = n;
            if (process_vm_readv(getpid(), &local, 1, remote, n, 0) != (ssize_t)n) { perror("process_vm_readv"); return 1; }
        }
        w = now() - t;
    }
    getrusage(RUSAGE_SELF, &pb);
    struct rusage a, b; getrusage(RUSAGE_SELF, &a);
    double t0 = now(); volatile char s = 0;
    for (size_t off = 0; off < len; off += 4096) s += p[off];
    double t1 = now(); getrusage(RUSAGE_SELF, &b);
    if (*how) printf("%s %.1f ms (majflt %ld minflt %ld); ", how, w, pb.ru_majflt - pa.ru_majflt, pb.ru_minflt - pa.ru_minflt);
    printf("%zu MiB: resident after pageout %zu pages; read in %.1f ms, majflt %ld minflt %ld\n", mib, res, t1 - t0,
           b.ru_majflt - a.ru_majflt, b.ru_minflt - a.ru_minflt);
    return 0;
}
