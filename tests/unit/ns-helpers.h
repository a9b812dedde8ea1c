/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by unit tests that enter namespaces of their own (never the code
 * under test): write a /proc file, and enter a new user namespace with one
 * id mapped, so that an unprivileged run gets the capabilities in it. */
#pragma once
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int ns_write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A new user namespace (and whatever extra_flags asks for besides) where
 * uid_in/gid_in are our own effective ids; setgroups is denied. */
static inline int ns_enter_userns(int extra_flags, uid_t uid_in, gid_t gid_in)
{
    char map[64];
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | extra_flags) < 0 || ns_write_text("/proc/self/setgroups", "deny") < 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid_in, (unsigned)uid);
    if (ns_write_text("/proc/self/uid_map", map) < 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid_in, (unsigned)gid);
    return ns_write_text("/proc/self/gid_map", map);
}
