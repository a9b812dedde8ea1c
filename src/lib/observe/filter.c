/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's seccomp filter: USER_NOTIF on the system calls that take
 * a path, allow everything else. An extra filter beside the policy's (which
 * stays as it is): the kernel runs both and the stricter answer wins, so a
 * call the policy denies is denied without a notification. */
#include "observe/observe.h"
#include "channel/report.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Path-taking calls (observe.c reads their path arguments). Names this
 * architecture lacks (open, stat on aarch64) are skipped. */
const char *const rf_observe_syscalls[] = {
    "open", "openat", "openat2", "creat", "stat", "lstat", "newfstatat", "statx", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "execve", "execveat", "mkdir", "mkdirat", "unlink", "unlinkat",
    "rmdir", "rename", "renameat", "renameat2", "chdir", "truncate", "connect", NULL,
};

/* The *at calls with a descriptor of their own (find's fstatat(dirfd,
 * "name"), fstat as newfstatat(fd, "", AT_EMPTY_PATH)) are nearly always
 * relative to a directory the command already opened, so they are not
 * stopped: only those relative to the working directory (AT_FDCWD) are.
 * An absolute path passed with a real descriptor is missed: advisory.
 * The descriptor argument(s) of each, or -1. */
static const struct {
    const char *name;
    int fd_arg, fd_arg2;
} at_calls[] = {
    { "openat", 0, -1 },     { "openat2", 0, -1 },   { "newfstatat", 0, -1 }, { "statx", 0, -1 },
    { "faccessat", 0, -1 },  { "faccessat2", 0, -1 },{ "readlinkat", 0, -1 }, { "execveat", 0, -1 },
    { "mkdirat", 0, -1 },    { "unlinkat", 0, -1 },  { "renameat", 0, 2 },    { "renameat2", 0, 2 },
};

/* AT_FDCWD as the low 32 bits of the register: an int argument. */
#define FDCWD_LOW ((scmp_datum_t)(uint32_t)AT_FDCWD)

static int add_rule(scmp_filter_ctx ctx, const char *name, int nr)
{
    for (size_t i = 0; i < sizeof at_calls / sizeof at_calls[0]; i++) {
        if (strcmp(at_calls[i].name, name))
            continue;
        int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1,
                                  SCMP_CMP((unsigned)at_calls[i].fd_arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, FDCWD_LOW));
        if (rc == 0 && at_calls[i].fd_arg2 >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1,
                                  SCMP_CMP((unsigned)at_calls[i].fd_arg2, SCMP_CMP_MASKED_EQ, 0xffffffffu,
                                           FDCWD_LOW));
        return rc;
    }
    return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
}

int rf_observe_compile_filter(void **bpf, size_t *len, rf_error **err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return rf_error_set(err, ENOMEM, "observe: seccomp filter");
    /* Other ABIs: the policy's filter kills them; this one has no say. */
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
    for (size_t i = 0; rc == 0 && rf_observe_syscalls[i]; i++) {
        int nr = seccomp_syscall_resolve_name(rf_observe_syscalls[i]);
        if (nr < 0)
            continue;
        rc = add_rule(ctx, rf_observe_syscalls[i], nr);
    }
    int fd = rc == 0 ? memfd_create("rf-observe-bpf", MFD_CLOEXEC) : -1;
    if (rc == 0 && fd >= 0)
        rc = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t size = fd >= 0 && rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    void *buf = size > 0 ? malloc((size_t)size) : NULL;
    if (!buf || pread(fd, buf, (size_t)size, 0) != size) {
        int e = rc < 0 ? -rc : errno ? errno : EIO;
        free(buf);
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, e, "observe: compile the seccomp filter");
    }
    close(fd);
    *bpf = buf;
    *len = (size_t)size;
    return 0;
}

int rf_observe_install(const void *bpf, size_t len, int sock)
{
    struct sock_fprog prog = { .len = (unsigned short)(len / sizeof(struct sock_filter)),
                               .filter = (struct sock_filter *)(uintptr_t)bpf };
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0)
        return -1;
    /* Before any call of ours that the filter stops: until the caller has
     * the listener, nobody would answer. sendmsg is not one of them. */
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = RF_MSG_OBSERVE;
    int rc = rf_msg_send_with_fds(sock, &m, sizeof m, &fd, 1);
    int e = errno;
    close(fd);
    errno = e;
    return rc < 0 ? -1 : 0;
}
