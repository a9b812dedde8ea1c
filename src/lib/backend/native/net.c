/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backend/native/report.h"
#include "backend/native/sandbox.h"
#include "net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A fresh network namespace has only "lo", and it is down: programs that
 * talk to themselves over 127.0.0.1 (test servers, language servers) need
 * it up. Nothing else exists, so nothing leaves the sandbox. */
int rf_net_loopback_up(rf_setup_fail *f)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return rf_fail(f, "loopback socket", "lo");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    close(s);
    return rc < 0 ? rf_fail(f, "bring loopback up", "lo") : 0;
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
