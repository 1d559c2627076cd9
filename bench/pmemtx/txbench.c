/* Transaction throughput of libscm against PMDK's libpmemobj, on the same kind
 * of file (tmpfs by default), with the same workloads:
 *   update10  a transaction updates 10 random 8-byte elements of a 1M-element
 *             array in the root object (each element added to the undo log)
 *   alloc     a transaction allocates a 64-byte node and pushes it on a list;
 *             the next one pops and frees it (allocation and free inside tx)
 * Usage: txbench scm|pmemobj FILE WORKLOAD COUNT
 * Prints: "<lib> <workload> <count> <seconds> <tx/s>". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "libscm.h"

#define ELEMENTS (1u << 20)
#define POOL_SIZE (256ull << 20)

struct root {
    uint64_t list; /* libscm: offset of the head node; pmemobj uses list_oid */
    PMEMoid list_oid;
    uint64_t count;
    uint64_t array[ELEMENTS];
};
struct node {
    uint64_t next;
    PMEMoid next_oid;
    uint64_t value;
    char pad[24];
};

static uint64_t rng = 88172645463325252ull;
static inline uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define MUST(x)                                                                  \
    do {                                                                         \
        if ((x) != SCM_OK) {                                                     \
            fprintf(stderr, "%s failed: %s\n", #x, scm_last_error());           \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static double run_scm(const char *file, const char *workload, long count) {
    scm_region *r = NULL;
    MUST(scm_open(file, POOL_SIZE, SCM_CREATE | SCM_PATH, &r));
    struct root *root = NULL;
    MUST(scm_region_root(r, sizeof *root, (void **)&root));
    double t0 = now();
    if (strcmp(workload, "update10") == 0) {
        for (long t = 0; t < count; t++) {
            MUST(scm_tx_begin(r));
            for (int k = 0; k < 10; k++) {
                uint64_t *e = &root->array[next_rand() % ELEMENTS];
                MUST(scm_tx_add(e, sizeof *e));
                *e += t;
            }
            MUST(scm_tx_commit(r));
        }
    } else {
        for (long t = 0; t < count; t++) {
            MUST(scm_tx_begin(r));
            MUST(scm_tx_add(root, 2 * sizeof(uint64_t) + sizeof(PMEMoid)));
            if (t % 2 == 0) {
                struct node *n = NULL;
                MUST(scm_alloc(r, sizeof *n, NULL, (void **)&n));
                n->next = root->list;
                n->value = t;
                MUST(scm_persist(n, sizeof *n));
                root->list = scm_off(r, n);
                root->count++;
            } else {
                struct node *n = scm_ptr(r, root->list);
                root->list = n->next;
                root->count--;
                MUST(scm_free(n));
            }
            MUST(scm_tx_commit(r));
        }
    }
    double dt = now() - t0;
    scm_close(r);
    return dt;
}

static double run_pmemobj(const char *file, const char *workload, long count) {
    PMEMobjpool *pop = pmemobj_create(file, "txbench", POOL_SIZE, 0600);
    if (!pop) {
        fprintf(stderr, "pmemobj_create: %s\n", pmemobj_errormsg());
        exit(1);
    }
    PMEMoid root_oid = pmemobj_root(pop, sizeof(struct root));
    struct root *root = pmemobj_direct(root_oid);
    double t0 = now();
    if (strcmp(workload, "update10") == 0) {
        for (volatile long t = 0; t < count; t++) { /* volatile: TX_BEGIN uses setjmp */
            TX_BEGIN(pop) {
                for (int k = 0; k < 10; k++) {
                    uint64_t *e = &root->array[next_rand() % ELEMENTS];
                    pmemobj_tx_add_range_direct(e, sizeof *e);
                    *e += t;
                }
            }
            TX_ONABORT {
                fprintf(stderr, "pmemobj tx aborted: %s\n", pmemobj_errormsg());
                exit(1);
            }
            TX_END
        }
    } else {
        for (volatile long t = 0; t < count; t++) { /* volatile: TX_BEGIN uses setjmp */
            TX_BEGIN(pop) {
                pmemobj_tx_add_range_direct(&root->list_oid, sizeof(PMEMoid) + sizeof(uint64_t));
                if (t % 2 == 0) {
                    PMEMoid oid = pmemobj_tx_alloc(sizeof(struct node), 1);
                    struct node *n = pmemobj_direct(oid);
                    n->next_oid = root->list_oid;
                    n->value = t;
                    root->list_oid = oid;
                    root->count++;
                } else {
                    PMEMoid oid = root->list_oid;
                    struct node *n = pmemobj_direct(oid);
                    root->list_oid = n->next_oid;
                    root->count--;
                    pmemobj_tx_free(oid);
                }
            }
            TX_ONABORT {
                fprintf(stderr, "pmemobj tx aborted: %s\n", pmemobj_errormsg());
                exit(1);
            }
            TX_END
        }
    }
    double dt = now() - t0;
    pmemobj_close(pop);
    return dt;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[3], "update10") != 0 && strcmp(argv[3], "alloc") != 0)) {
        fprintf(stderr, "usage: %s scm|pmemobj FILE update10|alloc COUNT\n", argv[0]);
        return 2;
    }
    long count = atol(argv[4]);
    unlink(argv[2]);
    double dt = strcmp(argv[1], "scm") == 0 ? run_scm(argv[2], argv[3], count) : run_pmemobj(argv[2], argv[3], count);
    unlink(argv[2]);
    printf("%s %s %ld %.3f %.0f\n", argv[1], argv[3], count, dt, count / dt);
    return 0;
}
