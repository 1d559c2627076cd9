/* Crash consistency: a workload of allocations, frees and transactions is run
 * again and again, dying (SCM_CRASH_AT=N, exit SCM_CRASH_EXIT) at persist point
 * N = 1, 2, ... up to its last one; after each crash the region is reopened and
 * checked. Zero inconsistent regions is the only passing result.
 *
 *   crash_sweep sweep DIR [MIN_TRIALS]   run the sweep with regions in DIR
 *   crash_sweep work REGION              the workload (run by sweep)
 *   crash_sweep verify REGION            reopen, recover, check (run by sweep)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libscm.h"

#define REGION_SIZE (1u << 20)
#define SLOTS 8
#define OPS 200

struct root {
    uint64_t list; /* offset of the first node */
    uint64_t count;
    uint64_t sum;
    uint64_t slots[SLOTS]; /* offsets published by scm_alloc / cleared by scm_free_at */
};
struct node {
    uint64_t next;
    uint64_t value;
    char pad[40];
};

static int must(scm_result rc, const char *what) {
    if (rc != SCM_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, scm_strerror(rc), scm_last_error());
        exit(3);
    }
    return 0;
}

static void push(scm_region *r, struct root *root, uint64_t value, int commit) {
    must(scm_tx_begin(r), "tx_begin");
    must(scm_tx_add(root, sizeof *root), "tx_add root");
    struct node *n = NULL;
    must(scm_alloc(r, sizeof *n, NULL, (void **)&n), "alloc node");
    n->next = root->list;
    n->value = value;
    must(scm_persist(n, sizeof *n), "persist node");
    root->list = scm_off(r, n);
    root->count++;
    root->sum += value;
    must(commit ? scm_tx_commit(r) : scm_tx_abort(r), "tx end");
}

static void pop(scm_region *r, struct root *root) {
    if (!root->list) return;
    struct node *n = scm_ptr(r, root->list);
    must(scm_tx_begin(r), "tx_begin");
    must(scm_tx_add(root, sizeof *root), "tx_add root");
    root->list = n->next;
    root->count--;
    root->sum -= n->value;
    must(scm_free(n), "free node");
    must(scm_tx_commit(r), "tx_commit");
}

static void bump_head(scm_region *r, struct root *root) {
    if (!root->list) return;
    struct node *n = scm_ptr(r, root->list);
    must(scm_tx_begin(r), "tx_begin");
    must(scm_tx_add(n, sizeof *n), "tx_add node");
    must(scm_tx_add(&root->sum, 8), "tx_add sum");
    n->value += 3;
    root->sum += 3;
    must(scm_tx_commit(r), "tx_commit");
}

static int work(const char *region) {
    scm_region *r = NULL;
    must(scm_open(region, REGION_SIZE, SCM_CREATE | SCM_PATH, &r), "open");
    struct root *root = NULL;
    must(scm_region_root(r, sizeof *root, (void **)&root), "root");
    for (int i = 0; i < OPS; i++) {
        int slot = (i * 5) % SLOTS;
        switch (i % 6) {
        case 0: push(r, root, 1000 + i, 1); break;
        case 1: pop(r, root); break;
        case 2:
            if (!root->slots[slot]) must(scm_alloc(r, 24 + i * 13, &root->slots[slot], NULL), "alloc slot");
            break;
        case 3:
            if (root->slots[(slot + 3) % SLOTS]) must(scm_free_at(r, &root->slots[(slot + 3) % SLOTS]), "free_at");
            break;
        case 4: push(r, root, 7, 0); break; /* aborted */
        case 5: push(r, root, 2000 + i, 1); bump_head(r, root); break;
        }
    }
    printf("%lu\n", (unsigned long)scm_persist_points());
    return 0;
}

/* 0: consistent; 1: inconsistent (and says why). */
static int verify(const char *region) {
    scm_region *r = NULL;
    scm_result rc = scm_open(region, 0, SCM_PATH, &r);
    if (rc != SCM_OK) {
        fprintf(stderr, "%s: reopen: %s (%s)\n", region, scm_strerror(rc), scm_last_error());
        return 1;
    }
    if ((rc = scm_check(r)) != SCM_OK) {
        fprintf(stderr, "%s: check: %s\n", region, scm_last_error());
        return 1;
    }
    scm_info info;
    must(scm_region_info(r, &info), "info");
    struct root *root = NULL;
    must(scm_region_root(r, sizeof *root, (void **)&root), "root");
    if (info.objects == 0) return root->list || root->count ? 1 : 0;
    uint64_t count = 0, sum = 0, off = root->list;
    while (off) {
        struct node *n = scm_ptr(r, off);
        uint64_t size;
        if (!n || scm_object_size(n, &size) != SCM_OK || count > root->count) {
            fprintf(stderr, "%s: list node %lu at offset %lu is not an object\n", region, (unsigned long)count,
                    (unsigned long)off);
            return 1;
        }
        count++;
        sum += n->value;
        off = n->next;
    }
    uint64_t slots = 0;
    for (int i = 0; i < SLOTS; i++) {
        uint64_t size;
        if (!root->slots[i]) continue;
        slots++;
        if (scm_object_size(scm_ptr(r, root->slots[i]), &size) != SCM_OK) {
            fprintf(stderr, "%s: slot %d points at no object\n", region, i);
            return 1;
        }
    }
    if (count != root->count || sum != root->sum) {
        fprintf(stderr, "%s: list has %lu nodes summing %lu, root says %lu / %lu\n", region, (unsigned long)count,
                (unsigned long)sum, (unsigned long)root->count, (unsigned long)root->sum);
        return 1;
    }
    if (info.objects != 1 + count + slots) {
        fprintf(stderr, "%s: %lu objects allocated, %lu reachable (a leak)\n", region, (unsigned long)info.objects,
                (unsigned long)(1 + count + slots));
        return 1;
    }
    return scm_close(r) == SCM_OK ? 0 : 1;
}

static int run(char *const argv[], const char *crash_at, char *out, size_t outlen) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        if (crash_at) setenv("SCM_CRASH_AT", crash_at, 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t got = 0;
    ssize_t n;
    while (out && got + 1 < outlen && (n = read(pipefd[0], out + got, outlen - 1 - got)) > 0) got += (size_t)n;
    if (out) out[got] = 0;
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int sweep(const char *dir, long min_trials) {
    char region[4096], out[64], n_text[32];
    snprintf(region, sizeof region, "%s/crash.region", dir);
    char *work_argv[] = {"crash_sweep", "work", region, NULL};
    char *verify_argv[] = {"crash_sweep", "verify", region, NULL};
    unlink(region);
    if (run(work_argv, NULL, out, sizeof out) != 0) {
        fprintf(stderr, "the workload fails without a crash\n");
        return 1;
    }
    long points = atol(out);
    long trials = 0, inconsistent = 0;
    for (long n = 1; n <= points; n++) {
        unlink(region);
        snprintf(n_text, sizeof n_text, "%ld", n);
        int rc = run(work_argv, n_text, NULL, 0);
        if (rc != SCM_CRASH_EXIT) {
            fprintf(stderr, "crash point %ld: the workload exited %d instead of crashing\n", n, rc);
            inconsistent++;
            continue;
        }
        trials++;
        if (run(verify_argv, NULL, NULL, 0) != 0) {
            fprintf(stderr, "  ^ after a crash at persist point %ld\n", n);
            inconsistent++;
        }
        if (n % 500 == 0) fprintf(stderr, "crash sweep: %ld of %ld\n", n, points);
    }
    unlink(region);
    printf("crash sweep: %ld persist points, %ld trials, %ld inconsistent regions\n", points, trials, inconsistent);
    if (trials < min_trials) {
        fprintf(stderr, "only %ld trials, at least %ld wanted\n", trials, min_trials);
        return 1;
    }
    return inconsistent ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "work") == 0) return work(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "verify") == 0) return verify(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "sweep") == 0) return sweep(argv[2], argc > 3 ? atol(argv[3]) : 1000);
    fprintf(stderr, "usage: %s sweep DIR [MIN_TRIALS] | work REGION | verify REGION\n", argv[0]);
    return 2;
}
