/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --publish in the proxy, in-process: a host client reaches a server
 * through a socket "the sandbox's init" hands over (here a thread playing
 * init, over the same socket channel). The init closes its copy of that
 * socket only after sending it; when it is slow to (descheduled on a busy
 * machine), the relay may be done with the connection first. Closing a
 * descriptor does not take it out of an epoll set while another copy of
 * the socket lives, so the relay's own close once left a ready entry
 * pointing at the freed relay: the loop spun on it (and read freed memory:
 * a published sandbox died under CI load). Here the init holds its copy
 * on purpose until the relay is done. */
#include "tap.h"
#include "channel/report.h"
#include "model/policy.h"
#include "net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

/* The "sandbox's" server: each connection gets its request read and one
 * answer, then is closed. */
static void *serve(void *arg)
{
    int lfd = (int)(intptr_t)arg;
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[512];
        size_t got = 0;
        ssize_t n;
        while (got < sizeof buf - 1 && (n = read(c, buf + got, sizeof buf - 1 - got)) > 0) {
            got += (size_t)n;
            buf[got] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        static const char answer[] = "HTTP/1.0 200 OK\r\n\r\npublished-hello";
        (void)!write(c, answer, sizeof answer - 1);
        close(c);
    }
}

/* The init's side of the socket channel. It keeps its copy of the first
 * socket (the slow init); the test closes it (one descriptor table). */
typedef struct fake_init {
    int chan;
    _Atomic int held;
} fake_init;

static void *init_main(void *arg)
{
    fake_init *f = arg;
    char byte;
    while (recv(f->chan, &byte, 1, 0) == 1) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        rf_msg_send_fd(f->chan, s);
        if (f->held < 0)
            f->held = s;
        else
            close(s);
    }
    return NULL;
}

/* GET through the published port; the body, or "" when it failed. */
static void fetch(uint16_t port, char *out, size_t size)
{
    out[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        write(fd, req, sizeof req - 1) != (ssize_t)sizeof req - 1) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(fd, out + got, size - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fd);
}

/* The relay adds its bytes to the report when it closes. */
static bool relay_closed(rf_net_proxy *p)
{
    char *r = rf_net_proxy_report(p);
    bool closed = r && !strstr(r, "\"bytes_received\":0,");
    free(r);
    return closed;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

int main(void)
{
    uint16_t sport = 0, hport = 0;
    int server = listen_loopback(&sport);
    int probe = listen_loopback(&hport); /* a free host port: taken again below */
    ok(server >= 0 && probe >= 0, "control: two loopback ports");
    close(probe);
    pthread_t srv;
    pthread_create(&srv, NULL, serve, (void *)(intptr_t)server);

    int chan[2];
    ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) == 0, "control: the socket channel");
    fake_init init = { .chan = chan[1], .held = -1 };
    pthread_t it;
    pthread_create(&it, NULL, init_main, &init);

    rf_net_policy policy = { 0 };
    rf_error *err = NULL;
    rf_net_proxy *p = rf_net_proxy_start(&policy, -1, -1, NULL, NULL, &err);
    char spec[64];
    snprintf(spec, sizeof spec, "127.0.0.1:%u:%u", hport, sport);
    char *publish[] = { spec, NULL };
    ok(p && rf_net_proxy_publish(p, publish, chan[0], &err) == 0 && rf_net_proxy_run(p, &err) == 0,
       "the proxy publishes the port");
    rf_net_proxy_set_audit(p, NULL, NULL);

    char body[256];
    fetch(hport, body, sizeof body);
    like(body, "published-hello", "a host client reaches the server through the published port");
    bool closed = false;
    for (int i = 0; i < 1000 && !(closed = relay_closed(p)); i++)
        usleep(10000);
    ok(closed, "control: the relay is done while init still holds its copy of the socket");

    /* The loop must be idle now: a stale ready entry made it spin. */
    double t0 = cpu_seconds();
    usleep(300000);
    double spent = cpu_seconds() - t0;
    char desc[128];
    snprintf(desc, sizeof desc, "the proxy stays idle after the relay closed (%.3f s of CPU in 0.3 s)", spent);
    ok(spent < 0.1, desc);
    fetch(hport, body, sizeof body);
    like(body, "published-hello", "a second client is served while init still holds the first socket");

    close(init.held);
    fetch(hport, body, sizeof body);
    like(body, "published-hello", "and a third once init let the first go");

    rf_net_proxy_stop(p);
    rf_net_proxy_free(p); /* closes chan[0]: the init thread ends */
    pthread_join(it, NULL);
    close(chan[1]);
    shutdown(server, SHUT_RDWR);
    pthread_join(srv, NULL);
    close(server);
    rf_error_free(err);
    return done_testing();
}
