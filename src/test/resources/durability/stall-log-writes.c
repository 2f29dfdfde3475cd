/*
 * Preloaded into a test's own mariadbd (DurableCommitsTest): while the file STALL_LOG_WRITES names
 * exists, every write to InnoDB's redo log (ib_logfile*) waits before it is made. A commit is then
 * held between the moment InnoDB calls it done and the moment it reaches the log, for as long as the
 * test needs, never by chance.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int is_redo_log(int fd) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, target, sizeof target - 1);
    if (length < 0) {
        return 0;
    }
    target[length] = 0;
    return strstr(target, "/ib_logfile") != NULL;
}

static void wait_while_stalled(int fd) {
    const char *flag = getenv("STALL_LOG_WRITES");
    if (flag == NULL || access(flag, F_OK) != 0 || !is_redo_log(fd)) {
        return;
    }
    while (access(flag, F_OK) == 0) {
        usleep(10000);
    }
}

/* glibc's 64-bit redirect calls pwrite64, other callers pwrite: the same wait in front of either. */
#define HELD_UNTIL_LET_GO(name)                                                  \
    ssize_t name(int fd, const void *buffer, size_t count, off_t offset) {       \
        static ssize_t (*real)(int, const void *, size_t, off_t);                \
        if (real == NULL) {                                                      \
            real = dlsym(RTLD_NEXT, #name);                                      \
        }                                                                        \
        wait_while_stalled(fd);                                                  \
        return real(fd, buffer, count, offset);                                  \
    }

HELD_UNTIL_LET_GO(pwrite64)
HELD_UNTIL_LET_GO(pwrite)
