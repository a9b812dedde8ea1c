/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bytes both ways between a sandboxed client and its upstream, for every
 * connection of a sandbox in one epoll loop. No buffer of ours holds a
 * relay's bytes. Each chunk is spliced from the sender's socket into a
 * pipe and from the pipe into the receiver's: the kernel moves page
 * references, the bytes are never copied to us and back (a 1 GiB tunnel
 * ran at 0.56x of a direct download when we copied). A pipe belongs to a
 * direction only while it holds bytes the receiver has not taken; an
 * empty one goes back to a small pool, so an idle relay holds none. Where
 * splice is refused or no pipe can be had (descriptors), a chunk is
 * peeked from the sender into one shared buffer, sent, and only what the
 * receiver took is then consumed. What the receiver cannot take yet stays
 * in the sender's socket (and in at most one pipe, RF_NET_PIPE_SIZE),
 * whose window then closes: a slow or stalled peer costs kernel buffers
 * (bounded by the kernel), never the supervisor's memory. */
#include "net/proxy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READS_PER_EVENT 8 /* then let the other connections have a turn */

typedef struct half {
    char *pending; /* the first bytes (a rewritten HTTP head), until sent */
    size_t len, off;
    rf_net_pipe pipe; /* spliced from `from`, not yet into `to` */
    size_t piped;  /* bytes in the pipe */
    bool copy;     /* splice refused: peek and send */
    bool blocked;  /* `to` took nothing last time: wait until it is writable */
    bool eof;      /* `from` has nothing more to say */
    bool shut;     /* ...and `to` was told (shutdown SHUT_WR) */
} half;

struct rf_net_relay {
    rf_net_tag tag[2];
    int fd[2];          /* 0: client (sandbox), 1: upstream */
    half dir[2];        /* dir[s]: bytes read from fd[s], written to fd[1-s] */
    uint32_t want[2];   /* the events registered for fd[s] */
    size_t dest;
    uint64_t bytes[2];  /* dir[0]: up, dir[1]: down */
    time_t last;
    rf_net_relay *prev, *next;
};

static time_t now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec;
}

rf_net_relay *rf_net_relay_new(int client, int upstream, size_t dest, const char *first_up, size_t first_len)
{
    rf_net_relay *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd[0] = client;
    r->fd[1] = upstream;
    for (int d = 0; d < 2; d++)
        r->dir[d].pipe.fd[0] = r->dir[d].pipe.fd[1] = -1;
    /* A relay must not add Nagle's wait to what the endpoints chose. */
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    r->dest = dest;
    r->last = now();
    for (int s = 0; s < 2; s++)
        r->tag[s] = (rf_net_tag){ .kind = RF_NET_TAG_RELAY, .side = s, .obj = r };
    if (first_len) {
        r->dir[0].pending = malloc(first_len);
        if (!r->dir[0].pending) {
            free(r);
            return NULL;
        }
        memcpy(r->dir[0].pending, first_up, first_len);
        r->dir[0].len = first_len;
    }
    return r;
}

void rf_net_relay_free(rf_net_relay *r)
{
    if (!r)
        return;
    for (int s = 0; s < 2; s++) {
        if (r->fd[s] >= 0)
            close(r->fd[s]);
        /* A pipe still held has bytes in it: never reused. */
        for (int e = 0; e < 2; e++)
            if (r->dir[s].pipe.fd[e] >= 0)
                close(r->dir[s].pipe.fd[e]);
        free(r->dir[s].pending);
    }
    free(r);
}

void rf_net_relay_disown(rf_net_relay *r)
{
    r->fd[0] = r->fd[1] = -1;
    rf_net_relay_free(r);
}

static bool waiting(const half *h)
{
    return h->len > 0 || h->piped > 0 || h->blocked;
}

/* An empty pipe for half h: a spare one or a new one. -1: none to be had
 * (out of descriptors), the caller copies instead. */
static int take_pipe(rf_net_proxy *p, half *h)
{
    if (p->n_spare > 0) {
        h->pipe = p->spare[--p->n_spare];
        return 0;
    }
    if (pipe2(h->pipe.fd, O_NONBLOCK | O_CLOEXEC) < 0)
        return -1;
    /* A few big ones (past the user's pipe quota, F_SETPIPE_SZ fails and
     * the default stays); more would crowd the user's other programs
     * down to small pipes (fs.pipe-user-pages-soft). */
    h->pipe.big = p->n_big < RF_NET_BIG_PIPES && fcntl(h->pipe.fd[0], F_SETPIPE_SZ, RF_NET_PIPE_SIZE) >= 0;
    p->n_big += h->pipe.big;
    return 0;
}

static void drop_pipe(rf_net_proxy *p, rf_net_pipe *pp)
{
    if (pp->fd[0] < 0)
        return;
    close(pp->fd[0]);
    close(pp->fd[1]);
    p->n_big -= pp->big;
    *pp = (rf_net_pipe){ .fd = { -1, -1 } };
}

/* Half h's pipe is empty again: keep it for the next chunk (of any relay
 * of this sandbox) or close it. */
static void give_pipe(rf_net_proxy *p, half *h)
{
    if (p->n_spare < RF_NET_SPARE_PIPES) {
        p->spare[p->n_spare++] = h->pipe;
        h->pipe = (rf_net_pipe){ .fd = { -1, -1 } };
    } else {
        drop_pipe(p, &h->pipe);
    }
}

void rf_net_relay_pipes_free(rf_net_proxy *p)
{
    while (p->n_spare > 0)
        drop_pipe(p, &p->spare[--p->n_spare]);
}

/* Each fd: readable while its direction is open and not waiting for the
 * receiver; writable while the other direction waits for it. */
static uint32_t interest(const rf_net_relay *r, int s)
{
    uint32_t ev = 0;
    if (!r->dir[s].eof && !waiting(&r->dir[s]))
        ev |= EPOLLIN;
    if (waiting(&r->dir[1 - s]))
        ev |= EPOLLOUT;
    return ev;
}

static int update(rf_net_proxy *p, rf_net_relay *r)
{
    for (int s = 0; s < 2; s++) {
        uint32_t ev = interest(r, s);
        if (ev == r->want[s])
            continue;
        struct epoll_event e = { .events = ev, .data.ptr = &r->tag[s] };
        if (epoll_ctl(p->epfd, EPOLL_CTL_MOD, r->fd[s], &e) < 0)
            return -1;
        r->want[s] = ev;
    }
    return 0;
}

/* Out of the epoll set before its descriptors close: closing one does
 * not remove it while another copy of the socket lives (a published
 * connection's sandbox side is also the sandbox's init's until it closes
 * its own), and the entry would then report, ready for ever, a freed
 * relay (tests/unit/test-net-publish.c). */
static void unwatch(rf_net_proxy *p, rf_net_relay *r, int sides)
{
    for (int s = 0; s < sides; s++)
        epoll_ctl(p->epfd, EPOLL_CTL_DEL, r->fd[s], NULL);
}

int rf_net_relay_add(rf_net_proxy *p, rf_net_relay *r)
{
    for (int s = 0; s < 2; s++) {
        r->want[s] = interest(r, s);
        struct epoll_event e = { .events = r->want[s], .data.ptr = &r->tag[s] };
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, r->fd[s], &e) < 0) {
            unwatch(p, r, s); /* the caller frees r */
            return -1;
        }
    }
    r->next = p->relay_list;
    if (r->next)
        r->next->prev = r;
    p->relay_list = r;
    return 0;
}

static void relay_close(rf_net_proxy *p, rf_net_relay *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        p->relay_list = r->next;
    if (r->next)
        r->next->prev = r->prev;
    rf_net_add_bytes(p, r->dest, r->bytes[0], r->bytes[1]);
    for (int d = 0; d < 2; d++)
        drop_pipe(p, &r->dir[d].pipe); /* bytes the receiver never took */
    pthread_mutex_lock(&p->lock);
    p->conns--;
    pthread_mutex_unlock(&p->lock);
    unwatch(p, r, 2);
    rf_net_relay_free(r);
}

/* Splice what the pipe of direction d holds into fd[1-d]. 0: all gone
 * (the pipe is given back); 1: some left, the receiver is full; -1: error. */
static int drain(rf_net_proxy *p, rf_net_relay *r, int d)
{
    half *h = &r->dir[d];
    while (h->piped > 0) {
        ssize_t n = splice(h->pipe.fd[0], NULL, r->fd[1 - d], NULL, h->piped, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            h->blocked = true;
            return 1;
        }
        if (n <= 0)
            return -1;
        h->piped -= (size_t)n;
        r->bytes[d] += (uint64_t)n;
    }
    if (h->pipe.fd[0] >= 0)
        give_pipe(p, h);
    return 0;
}

/* Write what is pending in direction d: the first bytes, then the pipe.
 * 0: all gone; 1: some left; -1: error. */
static int flush(rf_net_proxy *p, rf_net_relay *r, int d)
{
    half *h = &r->dir[d];
    h->blocked = false; /* writable again: the next pump tries */
    while (h->off < h->len) {
        ssize_t n = send(r->fd[1 - d], h->pending + h->off, h->len - h->off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? 1 : -1;
        h->off += (size_t)n;
        r->bytes[d] += (uint64_t)n;
    }
    free(h->pending);
    h->pending = NULL;
    h->len = h->off = 0;
    return drain(p, r, d);
}

/* One chunk from fd[d] to fd[1-d] through a pipe. 1: moved it all, go
 * on; 0: stop (nothing to read, the end, the receiver is full); -1:
 * error; 2: splice refused or no pipe, copy instead. */
static int splice_chunk(rf_net_proxy *p, rf_net_relay *r, int d)
{
    half *h = &r->dir[d];
    if (h->pipe.fd[0] < 0 && take_pipe(p, h) < 0)
        return 2;
    ssize_t n;
    do
        n = splice(r->fd[d], NULL, h->pipe.fd[1], NULL, RF_NET_PIPE_SIZE, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EINVAL) {
        h->copy = true;
        give_pipe(p, h);
        return 2;
    }
    if (n <= 0) {
        give_pipe(p, h);
        if (n < 0)
            return errno == EAGAIN ? 0 : -1;
        h->eof = true;
        return 0;
    }
    h->piped = (size_t)n;
    int rc = drain(p, r, d);
    return rc < 0 ? -1 : rc == 0;
}

/* One chunk by copying: peek from fd[d], send to fd[1-d], consume what
 * was sent. Same results as splice_chunk (but never 2). */
static int copy_chunk(rf_net_proxy *p, rf_net_relay *r, int d)
{
    half *h = &r->dir[d];
    ssize_t n = recv(r->fd[d], p->chunk, RF_NET_RELAY_CHUNK, MSG_PEEK);
    if (n < 0 && errno == EINTR)
        return 1;
    if (n < 0)
        return errno == EAGAIN ? 0 : -1;
    if (n == 0) {
        h->eof = true;
        return 0;
    }
    ssize_t w;
    do
        w = send(r->fd[1 - d], p->chunk, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    if (w < 0 && errno != EAGAIN)
        return -1;
    if (w <= 0) {
        h->blocked = true;
        return 0;
    }
    /* Consume exactly what was sent (MSG_TRUNC: discard, no copy). */
    if (recv(r->fd[d], NULL, (size_t)w, MSG_TRUNC) != w)
        return -1;
    r->bytes[d] += (uint64_t)w;
    if (w < n)
        h->blocked = true;
    return w == n;
}

/* Move chunks from fd[d] to fd[1-d] until either would block (or for a
 * few chunks: then the other connections have a turn). */
static int pump(rf_net_proxy *p, rf_net_relay *r, int d)
{
    half *h = &r->dir[d];
    for (int i = 0; i < READS_PER_EVENT && !h->eof && !waiting(h); i++) {
        int rc = h->copy ? 2 : splice_chunk(p, r, d);
        if (rc == 2)
            rc = copy_chunk(p, r, d);
        if (rc <= 0)
            return rc;
    }
    return 0;
}

/* Half-close the receiver once a sender is done and its bytes delivered;
 * the relay ends when both directions have. */
static bool finish_halves(rf_net_relay *r)
{
    for (int d = 0; d < 2; d++)
        if (r->dir[d].eof && !waiting(&r->dir[d]) && !r->dir[d].shut) {
            shutdown(r->fd[1 - d], SHUT_WR);
            r->dir[d].shut = true;
        }
    return r->dir[0].shut && r->dir[1].shut;
}

bool rf_net_relay_event(rf_net_proxy *p, void *tag, uint32_t events, uintptr_t *other_tag)
{
    rf_net_tag *t = tag;
    rf_net_relay *r = t->obj;
    int s = t->side;
    int rc = 0;
    *other_tag = (uintptr_t)&r->tag[1 - s];
    r->last = now();
    /* Writable: what waited goes out, then more of the same direction
     * at once (saves an epoll turn and two interest changes). */
    if ((events & EPOLLOUT) && (rc = flush(p, r, 1 - s)) == 0)
        rc = pump(p, r, 1 - s);
    if (rc >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        rc = pump(p, r, s);
    if (rc >= 0 && (events & EPOLLERR) && !(events & EPOLLIN))
        rc = -1;
    if (rc < 0 || finish_halves(r) || update(p, r) < 0) {
        relay_close(p, r);
        return true;
    }
    return false;
}

/* Close relays idle for too long (or all of them, when stopping). */
void rf_net_relay_sweep(rf_net_proxy *p, bool all)
{
    time_t t = now();
    rf_net_relay *next;
    for (rf_net_relay *r = p->relay_list; r; r = next) {
        next = r->next;
        if (all || t - r->last > RF_NET_IDLE_S)
            relay_close(p, r);
    }
}

uint64_t rf_net_relay_live_up(const rf_net_proxy *p)
{
    uint64_t n = 0;
    for (const rf_net_relay *r = p->relay_list; r; r = r->next)
        n += r->bytes[0];
    return n;
}
