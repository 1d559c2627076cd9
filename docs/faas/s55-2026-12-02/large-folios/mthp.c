/* A heap of MIB MiB (half random, half zero pages, as bench/faas's functions),
 * paged out by MADV_PAGEOUT, then read back by touching one byte a page from
 * its start (a cold call's faults): prints the time and the faults taken. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
    if (argc > 2) { double t = now(); madvise(p, len, MADV_WILLNEED); w = now() - t; }
    struct rusage a, b; getrusage(RUSAGE_SELF, &a);
    double t0 = now(); volatile char s = 0;
    for (size_t off = 0; off < len; off += 4096) s += p[off];
    double t1 = now(); getrusage(RUSAGE_SELF, &b);
    if (argc > 2) printf("WILLNEED %.1f ms; ", w);
    printf("%zu MiB: resident after pageout %zu pages; read in %.1f ms, majflt %ld minflt %ld\n", mib, res, t1 - t0,
           b.ru_majflt - a.ru_majflt, b.ru_minflt - a.ru_minflt);
    return 0;
}
