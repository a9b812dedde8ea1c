/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which process inside asked: its pid as the sandbox numbers it and its
 * name, for the question (docs/network.md, "Asking").
 *
 * A connection: the proxy accepted it on a socket of the sandbox's network
 * namespace, so the sandbox's end is the socket of that namespace whose
 * local address is our peer's. Its inode is in the namespace's TCP table
 * (/proc/PID/net/tcp of any process in it) and its owner is the process
 * holding socket:[INODE]. Everything is read from /proc as the caller: the
 * sandbox's processes are the caller's own (or the caller is root).
 *
 * A hint for the person answering, never a security decision: a process
 * inside can hand its socket to another, or name itself anything. The
 * name is shown as printable ASCII only, so it cannot write escape
 * sequences to the terminal that answers. */
#include "net/ask.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PIDS 4096 /* processes of one namespace looked at */

static int read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

int rf_ask_who_of_pid(pid_t host_pid, rf_ask_who *out)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)host_pid);
    if (read_small(path, buf, sizeof buf) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    rf_printable(out->name, sizeof out->name, buf);
    out->pid = host_pid;
    /* NSpid: the pid in each namespace, the innermost last. */
    snprintf(path, sizeof path, "/proc/%d/status", (int)host_pid);
    const char *ns = read_small(path, buf, sizeof buf) == 0 ? strstr(buf, "\nNSpid:") : NULL;
    if (ns) {
        const char *end = strchr(ns + 1, '\n');
        const char *last = end ? end : ns + strlen(ns);
        while (last > ns && (last[-1] == ' ' || last[-1] == '\t'))
            last--;
        while (last > ns && last[-1] >= '0' && last[-1] <= '9')
            last--;
        out->pid = strtol(last, NULL, 10);
    }
    return 0;
}

/* The pids whose network namespace is `ns` (the processes the caller may
 * look at: others' are skipped). */
static size_t pids_in_netns(const struct stat *ns, pid_t *pids, size_t max)
{
    DIR *d = opendir("/proc");
    size_t n = 0;
    for (struct dirent *e; d && n < max && (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%ld/ns/net", pid);
        if (stat(path, &st) == 0 && st.st_ino == ns->st_ino && st.st_dev == ns->st_dev)
            pids[n++] = (pid_t)pid;
    }
    if (d)
        closedir(d);
    return n;
}

size_t rf_ask_pids_in_netns(const struct stat *ns, pid_t *pids, size_t max)
{
    return pids_in_netns(ns, pids, max);
}

/* The inode of the socket whose local address is `local` and remote
 * `remote`, from the TCP table of pid's network namespace; 0: none. */
static unsigned long socket_inode(pid_t pid, const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
    char path[64], want[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/net/tcp", (int)pid);
    /* The table prints each address as the 32-bit word in host order and
     * the port in hex: "0100007F:A1B2 0100007F:0C38". */
    snprintf(want, sizeof want, "%08X:%04X %08X:%04X", local->sin_addr.s_addr, ntohs(local->sin_port),
             remote->sin_addr.s_addr, ntohs(remote->sin_port));
    FILE *f = fopen(path, "re");
    unsigned long inode = 0;
    while (f && !inode && fgets(line, sizeof line, f)) {
        /* "sl: local rem st tx:rx tr:when retrnsmt uid timeout inode ..." */
        const char *p = strchr(line, ':');
        unsigned long ino;
        if (p && !strncmp(p + 2, want, strlen(want)) &&
            sscanf(p + 2 + strlen(want), " %*s %*s %*s %*s %*s %*s %lu", &ino) == 1)
            inode = ino;
    }
    if (f)
        fclose(f);
    return inode;
}

static bool holds_socket(pid_t pid, const char *link_text)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char path[320], target[64];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            found = !strcmp(target, link_text);
        }
    }
    if (d)
        closedir(d);
    return found;
}

int rf_ask_connection_ends(int fd, struct sockaddr_in *peer, struct sockaddr_in *self, struct stat *ns)
{
    socklen_t pl = sizeof *peer, sl = sizeof *self;
    if (getpeername(fd, (struct sockaddr *)peer, &pl) < 0 || getsockname(fd, (struct sockaddr *)self, &sl) < 0 ||
        peer->sin_family != AF_INET)
        return -1;
    int nsfd = ioctl(fd, SIOCGSKNS);
    int r = nsfd >= 0 ? fstat(nsfd, ns) : -1;
    if (nsfd >= 0)
        close(nsfd);
    return r < 0 ? -1 : 0;
}

int rf_ask_who_of_connection(int fd, rf_ask_who *out)
{
    struct sockaddr_in peer, self;
    struct stat ns;
    if (rf_ask_connection_ends(fd, &peer, &self, &ns) < 0)
        return -1;
    pid_t *pids = malloc(MAX_PIDS * sizeof *pids);
    size_t n = pids ? pids_in_netns(&ns, pids, MAX_PIDS) : 0;
    unsigned long inode = n ? socket_inode(pids[0], &peer, &self) : 0;
    int rc = -1;
    if (inode) {
        char link_text[48];
        snprintf(link_text, sizeof link_text, "socket:[%lu]", inode);
        for (size_t i = 0; i < n && rc < 0; i++)
            if (holds_socket(pids[i], link_text))
                rc = rf_ask_who_of_pid(pids[i], out);
    }
    free(pids);
    return rc;
}
