/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>

#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fresh network namespace has only "lo", and it is down: programs that
 * talk to themselves over 127.0.0.1 (test servers, language servers) need
 * it up. Nothing else exists, so nothing leaves the sandbox. */
static int loopback_up(int s)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        return -1;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(s, SIOCSIFFLAGS, &ifr);
}

int rf_net_loopback_up(rf_setup_fail *f)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return rf_fail(f, "loopback socket", "lo");
    int rc = loopback_up(s);
    close(s);
    return rc < 0 ? rf_fail(f, "bring loopback up", "lo") : 0;
}

/* The helper's exit status: 0, or the errno of what failed, with this bit
 * set if it was the loopback (these calls' errno values are all < 128). */
#define MAKER_LOOPBACK 0x80

static int maker_status(bool loopback)
{
    int e = errno > 0 && errno < MAKER_LOOPBACK ? errno : EIO;
    return e | (loopback ? MAKER_LOOPBACK : 0);
}

/* In the helper, which shares our descriptor table and, outside sanitizer
 * builds, our memory (so it touches nothing of ours but the stack in m and
 * the descriptor slot m->fd; errno is shared too: it is only read after a
 * failure, and any failure here fails the setup). It makes the namespace,
 * brings lo up in it, and puts the namespace's descriptor at m->fd. */
static int make_namespace(void *arg)
{
    const rf_net_maker *m = arg;
    if (unshare(CLONE_NEWNET) < 0)
        return maker_status(false);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0 || loopback_up(s) < 0)
        return maker_status(true);
    int ns = ioctl(s, SIOCGSKNS); /* the socket's namespace: ours now */
    int rc = ns < 0 || dup3(ns, m->fd, O_CLOEXEC) < 0 ? maker_status(false) : 0;
    /* The table is shared: what we opened stays open unless closed. */
    close(s);
    if (ns >= 0)
        close(ns);
    return rc; /* the namespace lives on at m->fd */
}

/* A task that shares our memory starts on our CPU (here: 200 of 200, where
 * 196 of 200 forks start on an idle one) and waits there until the setup
 * blocks: nothing would overlap. So the helper is sent to the caller's
 * other CPUs, and brought back to ours at the join if it has not finished
 * by then (wait_for_helper): behind a busy CPU it would otherwise keep us
 * waiting while ours idles. Measured in docs/performance.md. */
static void move_elsewhere(rf_net_maker *m)
{
    cpu_set_t others;
    int me = sched_getcpu();
    m->moved = me >= 0 && sched_getaffinity(0, sizeof others, &others) == 0 && CPU_COUNT(&others) > 1;
    if (!m->moved)
        return;
    CPU_CLR(me, &others);
    (void)sched_setaffinity(m->pid, sizeof others, &others);
}

int rf_net_start_namespace(rf_net_maker *m, int reserve_from, rf_setup_fail *f)
{
    /* The helper takes pid 2 of the sandbox's pid namespace; once it is
     * gone, the counter is set back so that the command is pid 2 as ever.
     * Opened now, while the host's /proc is still there: the write acts
     * on the writer's own pid namespace. */
    m->pid_counter = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    if (m->pid_counter < 0) { /* a kernel without it: made here, in series */
        m->pid = -1;
        if (unshare(CLONE_NEWNET) < 0)
            return rf_fail(f, "network namespace", NULL);
        return rf_net_loopback_up(f);
    }
    /* A slot of our own for the helper's dup3 (atomic in the shared table). */
    m->fd = fcntl(reserve_from, F_DUPFD_CLOEXEC, 3);
    if (m->fd < 0)
        return rf_fail(f, "network namespace", NULL);
    m->pid = rf_clone_sharing(make_namespace, m, CLONE_FILES, m->stack + sizeof m->stack);
    if (m->pid < 0)
        return rf_fail(f, "network namespace", NULL);
    move_elsewhere(m);
    return 0;
}

static int wait_for_helper(rf_net_maker *m, int *status)
{
    pid_t r = waitpid(m->pid, status, WNOHANG);
    int me = r == 0 && m->moved ? sched_getcpu() : -1;
    if (me >= 0) {
        cpu_set_t here;
        CPU_ZERO(&here);
        CPU_SET(me, &here);
        (void)sched_setaffinity(m->pid, sizeof here, &here);
    }
    while (r <= 0) {
        r = waitpid(m->pid, status, 0);
        if (r < 0 && errno != EINTR)
            return -1;
    }
    return 0;
}

int rf_net_join_namespace(rf_net_maker *m, rf_setup_fail *f)
{
    if (m->pid < 0)
        return 0; /* made in series: we are in it */
    int status;
    if (wait_for_helper(m, &status) < 0)
        return rf_fail(f, "network namespace", NULL);
    (void)!write(m->pid_counter, "1", 1); /* pid 2 is free again: the command's */
    close(m->pid_counter);
    m->pid_counter = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
        errno = code & ~MAKER_LOOPBACK;
        if (code & MAKER_LOOPBACK)
            return rf_fail(f, "bring loopback up", "lo");
        return rf_fail(f, "network namespace", NULL);
    }
    /* A container's seccomp filter may deny setns (podman's and docker's
     * default, without CAP_SYS_ADMIN): then a namespace made here, in
     * series, as a kernel without ns_last_pid gets. */
    if (setns(m->fd, CLONE_NEWNET) < 0) {
        if (errno != EPERM)
            return rf_fail(f, "join the network namespace", NULL);
        close(m->fd);
        m->fd = -1;
        if (unshare(CLONE_NEWNET) < 0)
            return rf_fail(f, "network namespace", NULL);
        return rf_net_loopback_up(f);
    }
    close(m->fd);
    m->fd = -1;
    return 0;
}

/* network: allowlist. The proxy's listening socket is made here, in the
 * sandbox's network namespace, and handed to the caller, which accepts on
 * it from the host's side (a socket stays in the namespace it was made
 * in). The sandbox keeps no copy: nothing inside can accept the proxy's
 * clients, and the port is taken, so nothing inside can bind it. */
int rf_net_send_proxy_listener(int chan, rf_setup_fail *f)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return rf_fail(f, "proxy socket", NULL);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(RF_NET_PROXY_PORT),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rc = bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 1024) < 0 ? -1 : rf_msg_send_fd(chan, s);
    int e = errno;
    close(s);
    errno = e;
    return rc < 0 ? rf_fail(f, "proxy socket", "127.0.0.1:3128") : 0;
}

/* init, for --publish: each request on `chan` gets a fresh TCP socket of
 * this namespace, with which the caller connects to the sandbox's server. */
int rf_net_serve_socket_request(int chan)
{
    char byte;
    ssize_t n = recv(chan, &byte, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return -1; /* the caller closed it (no --publish, or it is gone) */
    if (n != 1)
        return 0;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        send(chan, "E", 1, MSG_NOSIGNAL); /* no descriptor: the caller sees a failure */
        return 0;
    }
    rf_msg_send_fd(chan, s);
    close(s);
    return 0;
}
