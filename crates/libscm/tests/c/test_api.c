/* libscm's C API, used as a C program uses it: allocation, root, persistence
 * across reopen, transactions, the persist modes, and every bad argument a
 * caller can pass. Usage: test_api DIR_ON_TMPFS DIR_ON_DISK */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libscm.h"

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, " (last error: %s)\n", scm_last_error());          \
        }                                                                      \
    } while (0)
#define EXPECT(call, code) CHECK((call) == (code), "expected %s", #code)

static char path[4096];
static const char *in(const char *dir, const char *name) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static scm_region *open_new(const char *p, uint64_t size) {
    scm_region *r = NULL;
    unlink(p);
    EXPECT(scm_open(p, size, SCM_CREATE | SCM_PATH, &r), SCM_OK);
    return r;
}

struct root {
    uint64_t list;      /* offset of the first node */
    uint64_t counter;
    uint64_t slot;      /* offset published by scm_alloc */
};

static void test_root_and_persistence(const char *dir) {
    const char *p = in(dir, "root.region");
    scm_region *r = open_new(p, 4 << 20);
    struct root *root = NULL;
    EXPECT(scm_region_root(r, sizeof *root, (void **)&root), SCM_OK);
    CHECK(root && root->list == 0 && root->counter == 0, "a new root is zeroed");
    void *obj = NULL;
    EXPECT(scm_alloc(r, 100, &root->slot, &obj), SCM_OK);
    CHECK(scm_ptr(r, root->slot) == obj, "scm_alloc published the object's offset");
    CHECK(scm_off(r, obj) == root->slot, "scm_off inverts scm_ptr");
    strcpy(obj, "survives");
    EXPECT(scm_persist(obj, 9), SCM_OK);
    root->counter = 42;
    EXPECT(scm_persist(&root->counter, 8), SCM_OK);
    scm_info info;
    EXPECT(scm_region_info(r, &info), SCM_OK);
    CHECK(info.objects == 2 && info.was_clean == 0, "root and one object, new region (objects %lu)",
          (unsigned long)info.objects);
    EXPECT(scm_close(r), SCM_OK);

    EXPECT(scm_open(p, 0, SCM_PATH, &r), SCM_OK);
    EXPECT(scm_region_info(r, &info), SCM_OK);
    CHECK(info.was_clean == 1, "closed cleanly");
    EXPECT(scm_region_root(r, sizeof *root, (void **)&root), SCM_OK);
    CHECK(root->counter == 42, "root survives reopen (got %lu)", (unsigned long)root->counter);
    char *again = scm_ptr(r, root->slot);
    CHECK(again && strcmp(again, "survives") == 0, "object survives reopen at its offset");
    EXPECT(scm_region_root(r, 4096, (void **)&root), SCM_EINVAL); /* larger than the root */
    EXPECT(scm_free_at(r, &root->slot), SCM_OK);
    CHECK(root->slot == 0, "scm_free_at zeroes the location");
    EXPECT(scm_check(r), SCM_OK);
    EXPECT(scm_close(r), SCM_OK);
    unlink(p);
}

static void test_allocator(const char *dir) {
    const char *p = in(dir, "heap.region");
    scm_region *r = open_new(p, 8 << 20);
    scm_info before;
    EXPECT(scm_region_info(r, &before), SCM_OK);
    enum { N = 2000 };
    static void *objs[N];
    for (int i = 0; i < N; i++) {
        EXPECT(scm_alloc(r, 1 + (i * 37) % 1500, NULL, &objs[i]), SCM_OK);
        memset(objs[i], i & 0xff, 1 + (i * 37) % 1500);
    }
    for (int i = 0; i < N; i++) {
        uint64_t size = 0;
        EXPECT(scm_object_size(objs[i], &size), SCM_OK);
        CHECK(size >= (uint64_t)(1 + (i * 37) % 1500), "object %d holds what was asked", i);
        CHECK(((unsigned char *)objs[i])[0] == (i & 0xff), "object %d not overwritten by another", i);
    }
    for (int i = 0; i < N; i += 2) EXPECT(scm_free(objs[i]), SCM_OK);
    for (int i = 1; i < N; i += 2) EXPECT(scm_free(objs[i]), SCM_OK);
    scm_info after;
    EXPECT(scm_region_info(r, &after), SCM_OK);
    CHECK(after.free_bytes == before.free_bytes && after.objects == 0,
          "everything freed and merged back (%lu of %lu free)", (unsigned long)after.free_bytes,
          (unsigned long)before.free_bytes);
    void *big = NULL;
    EXPECT(scm_alloc(r, after.free_bytes - 16, NULL, &big), SCM_OK); /* the whole heap, one block */
    EXPECT(scm_alloc(r, 16, NULL, NULL), SCM_ENOMEM);
    EXPECT(scm_free(big), SCM_OK);
    EXPECT(scm_check(r), SCM_OK);
    EXPECT(scm_close(r), SCM_OK);
    unlink(p);
}

static void test_transactions(const char *dir) {
    const char *p = in(dir, "tx.region");
    scm_region *r = open_new(p, 4 << 20);
    struct root *root = NULL;
    EXPECT(scm_region_root(r, sizeof *root, (void **)&root), SCM_OK);

    EXPECT(scm_tx_begin(r), SCM_OK);
    EXPECT(scm_tx_begin(r), SCM_ETX);
    EXPECT(scm_tx_add(root, sizeof *root), SCM_OK);
    EXPECT(scm_alloc(r, 64, &root->list, NULL), SCM_OK);
    root->counter = 7;
    EXPECT(scm_tx_commit(r), SCM_OK);
    CHECK(root->counter == 7 && root->list != 0, "committed");

    scm_info committed;
    EXPECT(scm_region_info(r, &committed), SCM_OK);
    EXPECT(scm_tx_begin(r), SCM_OK);
    EXPECT(scm_tx_add(root, sizeof *root), SCM_OK);
    uint64_t old_list = root->list;
    EXPECT(scm_alloc(r, 5000, &root->list, NULL), SCM_OK);
    EXPECT(scm_free(scm_ptr(r, old_list)), SCM_OK); /* deferred to commit */
    root->counter = 99;
    EXPECT(scm_tx_abort(r), SCM_OK);
    scm_info aborted;
    EXPECT(scm_region_info(r, &aborted), SCM_OK);
    CHECK(root->counter == 7 && root->list == old_list, "abort restores the root");
    CHECK(aborted.objects == committed.objects && aborted.free_bytes == committed.free_bytes,
          "abort frees what the transaction allocated and keeps what it freed");

    EXPECT(scm_tx_begin(r), SCM_OK);
    EXPECT(scm_tx_add(root, sizeof *root), SCM_OK);
    EXPECT(scm_free(scm_ptr(r, root->list)), SCM_OK);
    EXPECT(scm_free(scm_ptr(r, root->list)), SCM_EINVAL); /* twice in one transaction */
    root->list = 0;
    EXPECT(scm_tx_commit(r), SCM_OK);
    scm_info freed;
    EXPECT(scm_region_info(r, &freed), SCM_OK);
    CHECK(freed.objects == committed.objects - 1, "the deferred free happened at commit");

    EXPECT(scm_tx_commit(r), SCM_ETX);
    EXPECT(scm_tx_abort(r), SCM_ETX);
    EXPECT(scm_tx_add(root, 8), SCM_ETX);
    EXPECT(scm_check(r), SCM_OK);
    EXPECT(scm_close(r), SCM_OK);
    unlink(p);
}

static void test_modes(const char *tmpfs, const char *disk) {
    scm_region *r = open_new(in(tmpfs, "mode.region"), 1 << 20);
    CHECK(scm_mode(r) == SCM_MODE_FENCE, "a tmpfs region is fence-only (got %d)", scm_mode(r));
    EXPECT(scm_sync(r), SCM_OK);
    scm_close(r);
    unlink(in(tmpfs, "mode.region"));
    r = open_new(in(disk, "mode.region"), 1 << 20);
    CHECK(scm_mode(r) == SCM_MODE_MSYNC, "a disk-file region is msync'd (got %d)", scm_mode(r));
    void *obj = NULL;
    EXPECT(scm_alloc(r, 4000, NULL, &obj), SCM_OK);
    memset(obj, 1, 4000);
    EXPECT(scm_persist(obj, 4000), SCM_OK);
    EXPECT(scm_sync(r), SCM_OK);
    scm_close(r);
    unlink(in(disk, "mode.region"));
}

static void test_default_region(const char *dir) {
    CHECK(scmalloc(10) == NULL, "no default region yet");
    setenv("SCM_REGION", in(dir, "default.region"), 1);
    setenv("SCM_REGION_SIZE", "2M", 1);
    unlink(path);
    char *s = scmalloc(10);
    CHECK(s != NULL, "scmalloc opens the region named by SCM_REGION");
    strcpy(s, "abc");
    EXPECT(scm_persist(s, 4), SCM_OK);
    EXPECT(scmsync(), SCM_OK);
    uint64_t *root = scm_root(64);
    CHECK(root && root[7] == 0, "scm_root on the default region");
    CHECK(scm_root(64) == root, "the same root every time");
    EXPECT(scm_free(s), SCM_OK);
    unlink(in(dir, "default.region"));
}

static void test_bad_input(const char *dir) {
    scm_region *r = NULL;
    int local = 0;
    EXPECT(scm_open(NULL, 1 << 20, SCM_CREATE | SCM_PATH, &r), SCM_EINVAL);
    EXPECT(scm_open(in(dir, "x.region"), 1 << 20, 0x80 | SCM_PATH, &r), SCM_EINVAL);
    EXPECT(scm_open(in(dir, "x.region"), 1 << 20, SCM_CREATE | SCM_PATH, NULL), SCM_EINVAL);
    unlink(in(dir, "x.region"));
    EXPECT(scm_open(in(dir, "small.region"), 4096, SCM_CREATE | SCM_PATH, &r), SCM_EINVAL);
    unlink(in(dir, "small.region"));
    EXPECT(scm_open(in(dir, "absent.region"), 0, SCM_PATH, &r), SCM_EIO);
    EXPECT(scm_open("../escape", 1 << 20, SCM_CREATE, &r), SCM_EINVAL); /* broker names */
    EXPECT(scm_open(".hidden", 1 << 20, SCM_CREATE, &r), SCM_EINVAL);
    setenv("SCM_BROKER_SOCKET", in(dir, "no-broker.sock"), 1);
    EXPECT(scm_open("data", 1 << 20, SCM_CREATE, &r), SCM_EBROKER);
    EXPECT(scm_open_fd(-1, 0, &r), SCM_EINVAL);

    /* Not a region: random bytes, and a symlink, which is never followed. */
    int fd = open(in(dir, "junk"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    for (int i = 0; i < 1 << 18; i++) CHECK(write(fd, "junkjunk", 8) == 8, "write junk");
    EXPECT(scm_open_fd(fd, 0, &r), SCM_ECORRUPT);
    close(fd);
    char target[4096];
    snprintf(target, sizeof target, "%s", in(dir, "junk"));
    CHECK(symlink(target, in(dir, "link.region")) == 0, "symlink: %s", strerror(errno));
    EXPECT(scm_open(in(dir, "link.region"), 1 << 20, SCM_CREATE | SCM_PATH, &r), SCM_EIO);
    unlink(in(dir, "link.region"));
    unlink(in(dir, "junk"));

    r = open_new(in(dir, "bad.region"), 1 << 20);
    void *obj = NULL;
    EXPECT(scm_alloc(r, 64, NULL, &obj), SCM_OK);
    EXPECT(scm_alloc(r, 0, NULL, &obj), SCM_EINVAL);
    EXPECT(scm_alloc(r, UINT64_MAX, NULL, &obj), SCM_EINVAL);
    EXPECT(scm_alloc(r, 1ull << 40, NULL, &obj), SCM_ENOMEM);
    EXPECT(scm_alloc(r, 8, (uint64_t *)&local, &obj), SCM_EINVAL); /* publish outside */
    EXPECT(scm_alloc((scm_region *)&local, 8, NULL, &obj), SCM_EINVAL); /* not a handle */
    EXPECT(scm_free(&local), SCM_EINVAL);
    EXPECT(scm_free((char *)obj + 16), SCM_EINVAL); /* interior pointer */
    EXPECT(scm_free(NULL), SCM_OK);
    EXPECT(scm_free(obj), SCM_OK);
    EXPECT(scm_free(obj), SCM_EINVAL); /* double free */
    EXPECT(scm_persist(&local, 4), SCM_EINVAL);
    EXPECT(scm_persist(obj, 1ull << 40), SCM_EINVAL);
    EXPECT(scm_tx_add(&local, 4), SCM_EINVAL);
    EXPECT(scm_region_info(r, NULL), SCM_EINVAL);
    CHECK(scm_mode((scm_region *)&local) == SCM_MODE_NONE, "bad handle has no mode");
    CHECK(scm_ptr(r, 1ull << 40) == NULL, "offset past the region");
    CHECK(scm_off(r, &local) == 0, "pointer outside the region");
    EXPECT(scm_close(r), SCM_OK);
    EXPECT(scm_close(r), SCM_EINVAL); /* closed already */
    EXPECT(scm_close(NULL), SCM_EINVAL);
    CHECK(strcmp(scm_strerror(SCM_ENOMEM), "region full") == 0, "strerror");
    unlink(in(dir, "bad.region"));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR_ON_TMPFS DIR_ON_DISK\n", argv[0]);
        return 2;
    }
    test_root_and_persistence(argv[1]);
    test_root_and_persistence(argv[2]);
    test_allocator(argv[1]);
    test_transactions(argv[1]);
    test_transactions(argv[2]);
    test_modes(argv[1], argv[2]);
    test_default_region(argv[1]);
    test_bad_input(argv[1]);
    printf("test_api: %d failures\n", failures);
    return failures ? 1 : 0;
}
