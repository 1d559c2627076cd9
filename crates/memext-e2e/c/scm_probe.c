/* A libscm client for the end-to-end tests, run inside containers.
 *
 *   scm_probe write NAME SIZE TEXT   open (create) region NAME via the broker, store TEXT in its root
 *   scm_probe read NAME              open region NAME via the broker, print its root text
 *   scm_probe raw LINE               send LINE as a request, print the reply (and whether an fd came)
 *   scm_probe orphan NAME            connect, then let the connecting process exit before asking
 *
 * Prints "ok ...", "text ...", "reply ..." or "error CODE MESSAGE"; exits 0 on success.
 * The broker socket is SCM_BROKER_SOCKET (default /run/memext/pmem/pmem.sock). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libscm.h"

static const char *socket_path(void) {
    const char *s = getenv("SCM_BROKER_SOCKET");
    return s ? s : "/run/memext/pmem/pmem.sock";
}

static int error(scm_result rc) {
    printf("error %d %s\n", (int)rc, scm_last_error());
    return 1;
}

static int connect_broker(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path());
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        printf("error connect %s\n", socket_path());
        exit(1);
    }
    return fd;
}

/* Sends one request line and prints the reply line; says whether a descriptor came. */
static int ask(int fd, const char *line) {
    char req[512], buf[512];
    snprintf(req, sizeof req, "%s\n", line);
    if (write(fd, req, strlen(req)) < 0) return 1;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0) {
        printf("error no reply\n");
        return 1;
    }
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    int got_fd = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) got_fd = 1;
    printf("reply %s%s\n", buf, got_fd ? " +fd" : "");
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "write") == 0) {
        scm_region *r = NULL;
        scm_result rc = scm_open(argv[2], strtoull(argv[3], NULL, 10), SCM_CREATE, &r);
        if (rc != SCM_OK) return error(rc);
        char *root = NULL;
        if ((rc = scm_region_root(r, 256, (void **)&root)) != SCM_OK) return error(rc);
        snprintf(root, 256, "%s", argv[4]);
        if ((rc = scm_persist(root, 256)) != SCM_OK) return error(rc);
        printf("ok mode %d\n", (int)scm_mode(r));
        return scm_close(r) == SCM_OK ? 0 : 1;
    }
    if (argc >= 3 && strcmp(argv[1], "read") == 0) {
        scm_region *r = NULL;
        scm_result rc = scm_open(argv[2], 0, 0, &r);
        if (rc != SCM_OK) return error(rc);
        char *root = NULL;
        if ((rc = scm_region_root(r, 256, (void **)&root)) != SCM_OK) return error(rc);
        printf("text %s\n", root);
        return scm_close(r) == SCM_OK ? 0 : 1;
    }
    if (argc >= 3 && strcmp(argv[1], "raw") == 0) return ask(connect_broker(), argv[2]);
    if (argc >= 3 && strcmp(argv[1], "orphan") == 0) {
        /* A child connects the socket and exits; this process, which did not connect,
         * then asks on it. The broker must see that the connecting process is gone. */
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path());
        pid_t child = fork();
        if (child == 0) _exit(connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 ? 0 : 1);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("error connect %s\n", socket_path());
            return 1;
        }
        char line[128];
        snprintf(line, sizeof line, "OPEN %s 0 0", argv[2]);
        return ask(fd, line);
    }
    fprintf(stderr, "usage: scm_probe write NAME SIZE TEXT | read NAME | raw LINE | orphan NAME\n");
    return 2;
}
