/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which process inside made a connection, for its audit record, cheaply
 * enough to do for every connection (net/audit.c).
 *
 * ask_who.c finds it through the namespace's TCP table, which lists every
 * socket of the namespace, TIME_WAIT ones too: after a few hundred short
 * connections, reading it cost 3 to 7 ms a connection. Here the table is
 * not read: for each process of the sandbox's network namespace (a list
 * kept between connections, walked again from /proc only when none of
 * them holds the socket), each socket it holds is borrowed with
 * pidfd_getfd(2) and its addresses compared with the connection's ends;
 * the copy is closed at once. The sandbox's processes are the caller's
 * own (or the caller is root), and the sandbox is the caller's descendant,
 * so ptrace access (which pidfd_getfd needs) is granted, Yama's scope 1
 * included. A process that made itself undumpable, or that passed the
 * socket on, is not found: the record says so, it never guesses. */
#include "net/proxy-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCAN_MAX 4096 /* processes looked at in one walk of /proc */

static bool same_ends(int fd, const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
    struct sockaddr_in l, r;
    socklen_t ll = sizeof l, rl = sizeof r;
    return getsockname(fd, (struct sockaddr *)&l, &ll) == 0 && l.sin_family == AF_INET &&
           getpeername(fd, (struct sockaddr *)&r, &rl) == 0 && l.sin_port == local->sin_port &&
           r.sin_port == remote->sin_port && l.sin_addr.s_addr == local->sin_addr.s_addr &&
           r.sin_addr.s_addr == remote->sin_addr.s_addr;
}

/* Does pid, in namespace ns, hold a socket whose ends are local/remote? */
static bool holds(pid_t pid, const struct stat *ns, const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
    if (stat(path, &st) < 0 || st.st_ino != ns->st_ino || st.st_dev != ns->st_dev)
        return false; /* gone, or a reused pid elsewhere */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = pidfd >= 0 ? opendir(path) : NULL;
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char link[320], target[32];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 8 || memcmp(target, "socket:[", 8))
            continue;
        int fd = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(e->d_name), 0);
        if (fd >= 0) {
            found = same_ends(fd, local, remote);
            close(fd);
        }
    }
    if (d)
        closedir(d);
    if (pidfd >= 0)
        close(pidfd);
    return found;
}

static pid_t search(rf_net_proxy *p, const struct stat *ns, const struct sockaddr_in *local,
                    const struct sockaddr_in *remote)
{
    pthread_mutex_lock(&p->who_lock);
    pid_t known[RF_NET_WHO_PIDS];
    size_t n = p->who_n;
    memcpy(known, p->who_pids, n * sizeof *known);
    pthread_mutex_unlock(&p->who_lock);
    for (size_t i = 0; i < n; i++)
        if (holds(known[i], ns, local, remote))
            return known[i];
    pid_t *all = malloc(SCAN_MAX * sizeof *all);
    size_t m = all ? rf_ask_pids_in_netns(ns, all, SCAN_MAX) : 0;
    pid_t hit = 0;
    for (size_t i = 0; i < m && !hit; i++)
        if (holds(all[i], ns, local, remote))
            hit = all[i];
    pthread_mutex_lock(&p->who_lock);
    p->who_n = m < RF_NET_WHO_PIDS ? m : RF_NET_WHO_PIDS;
    if (hit) { /* the one that connects is likely to again: first */
        p->who_pids[0] = hit;
        for (size_t i = 0, j = 1; i < m && j < p->who_n; i++)
            if (all[i] != hit)
                p->who_pids[j++] = all[i];
    } else if (all) {
        memcpy(p->who_pids, all, p->who_n * sizeof *all);
    }
    pthread_mutex_unlock(&p->who_lock);
    free(all);
    return hit;
}

int rf_net_who(rf_net_proxy *p, int fd, rf_ask_who *out)
{
    /* The accepted socket's peer is the sandbox's end's local address. */
    struct sockaddr_in peer, self;
    struct stat ns;
    if (rf_ask_connection_ends(fd, &peer, &self, &ns) < 0)
        return -1;
    pid_t pid = search(p, &ns, &peer, &self);
    return pid > 0 ? rf_ask_who_of_pid(pid, out) : -1;
}
