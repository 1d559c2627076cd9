/* libscm called while a thread is exiting, after the thread's own Rust
 * thread-locals are destroyed: a pthread-key destructor frees an object, as an
 * allocator shim does when a program frees memory at thread exit. It must work,
 * not panic. Usage: tls_exit DIR_ON_TMPFS */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libscm.h"

static pthread_key_t key;
static scm_result free_rc = SCM_EPANIC, persist_rc = SCM_EPANIC, alloc_rc = SCM_EPANIC;
static scm_region *region;

static void at_thread_exit(void *obj) {
    persist_rc = scm_persist(obj, 8);
    free_rc = scm_free(obj);
    alloc_rc = scm_alloc(region, 32, NULL, NULL);
}

static void *thread(void *arg) {
    (void)arg;
    void *obj = NULL;
    if (scm_alloc(region, 64, NULL, &obj) != SCM_OK) return NULL;
    scm_tx_begin(region); /* touch every thread-local of the library */
    scm_tx_add(obj, 8);
    scm_tx_commit(region);
    scm_tx_commit(region); /* a failing call: sets the thread's last error */
    pthread_setspecific(key, obj);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/tls.region", argv[1]);
    unlink(path);
    if (scm_open(path, 1 << 20, SCM_CREATE | SCM_PATH, &region) != SCM_OK) return 1;
    pthread_key_create(&key, at_thread_exit);
    pthread_t t;
    pthread_create(&t, NULL, thread, NULL);
    pthread_join(t, NULL);
    printf("tls_exit: persist %d, free %d, alloc %d\n", persist_rc, free_rc, alloc_rc);
    int ok = persist_rc == SCM_OK && free_rc == SCM_OK && alloc_rc == SCM_OK && scm_check(region) == SCM_OK;
    scm_close(region);
    unlink(path);
    return ok ? 0 : 1;
}
