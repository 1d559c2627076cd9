/* Sleeps a second at a time. On each return to user space after it was
 * switched out, the kernel writes the thread's rseq area (registered by
 * glibc >= 2.35 unless GLIBC_TUNABLES=glibc.pthread.rseq=0) before any of
 * its own code runs: a fault the kernel takes on its behalf, not a page
 * fault of its own. Prints the size glibc registered (0: none). */
#include <stdio.h>
#include <unistd.h>
#include <sys/rseq.h>

int main(void) {
    printf("rseq size %u\n", __rseq_size);
    fflush(stdout);
    for (;;)
        sleep(1);
}
