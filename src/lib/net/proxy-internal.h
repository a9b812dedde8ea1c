/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proxy's parts: proxy.c (threads, limits, the report), handshake.c
 * (one client's request, the verdict, the upstream connection), relay.c
 * (bytes both ways, in one epoll loop: splice(2) through a pipe, or
 * peek and send where splice is refused). */
#pragma once
#include "net/net.h"
#include "net/route.h"
#include "net/ask.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* Limits that keep a hostile sandbox from exhausting the host. */
#define RF_NET_MAX_CONNS 1024       /* open relays + handshakes per sandbox */
#define RF_NET_MAX_HANDSHAKES 256   /* threads reading a request, resolving, connecting */
#define RF_NET_HANDSHAKE_S 10       /* to send the request head, to connect */
#define RF_NET_IDLE_S 600           /* a relay with no byte either way */
#define RF_NET_MAX_DESTS 256        /* distinct destinations in the report */
#define RF_NET_MAX_LOG_LINES 50     /* blocked lines on the log fd */
#define RF_NET_MAX_PUBLISH 16
#define RF_NET_RELAY_CHUNK (256 * 1024) /* one peek of the relay loop (no splice) */
#define RF_NET_PIPE_SIZE (1024 * 1024)   /* a big relay pipe: fewer splices per MiB */
#define RF_NET_BIG_PIPES 4    /* big ones per sandbox: they count in the user's pipe quota */
#define RF_NET_SPARE_PIPES 8  /* empty relay pipes kept for the next chunk */
#define RF_NET_SESSION_END_MS 2000  /* stopping: how long route connections get to end */
#define RF_NET_WHO_PIDS 64    /* the sandbox's processes remembered for who.c */

typedef struct rf_net_dest {
    char *host;
    uint16_t port;
    const char *reason; /* NULL: allowed */
    uint64_t count, up, down;
} rf_net_dest;

typedef struct rf_net_relay rf_net_relay;

/* A relay's pipe (relay.c). */
typedef struct rf_net_pipe {
    int fd[2]; /* -1: none */
    bool big;  /* RF_NET_PIPE_SIZE, not the default */
} rf_net_pipe;

/* What an epoll event is about (epoll_event.data.ptr points to one). */
typedef enum { RF_NET_TAG_STOP, RF_NET_TAG_HANDOFF, RF_NET_TAG_LISTENER, RF_NET_TAG_RELAY } rf_net_tag_kind;
typedef struct rf_net_tag {
    rf_net_tag_kind kind;
    int side;  /* relay: 0 client, 1 upstream */
    void *obj; /* the listener or relay */
} rf_net_tag;

typedef struct rf_net_listener {
    rf_net_tag tag;
    int fd;
    bool publish;           /* host side of a --publish */
    uint16_t sandbox_port;  /* publish: where to connect inside */
    char label[64];         /* publish: "127.0.0.1:8080" */
} rf_net_listener;

struct rf_net_proxy {
    rf_net_rules rules;
    rf_route_table routes; /* credential routes (route.c); counters under `lock` */
    rf_net_ask *ask;       /* on_blocked: ask (ask.c), or NULL */
    rf_net_listener listeners[1 + RF_NET_MAX_PUBLISH];
    size_t n_listeners;
    int epfd;
    int stop_fd;      /* eventfd: readable for ever once stopping */
    int handoff[2];   /* handshake threads → loop: rf_net_relay * (NULL: wake) */
    rf_net_tag stop_tag, handoff_tag;
    pthread_t loop;
    bool loop_started;
    atomic_bool stopping;
    bool accept_paused;
    int log_fd;
    int socket_chan;      /* publish: sockets of the sandbox's netns, or -1 */
    pthread_mutex_t chan_lock;

    pthread_mutex_t lock; /* everything below */
    unsigned refs;        /* the owner + each handshake thread */
    unsigned sessions;    /* route connections being served (route_serve.c) */
    pthread_cond_t sessions_done;
    unsigned handshakes, conns; /* conns: handshakes + relays */
    unsigned logged;
    rf_net_dest *dests;
    size_t n_dests;
    bool dests_truncated;
    uint64_t allowed_total, blocked_total, failed_total, up_total, down_total;
    uint64_t published_total;
    rf_net_relay *relay_list; /* owned by the loop thread */
    char *chunk;              /* the loop thread's peek buffer */
    rf_net_pipe spare[RF_NET_SPARE_PIPES]; /* the loop thread's empty pipes */
    size_t n_spare;
    unsigned n_big; /* big pipes open, spare or not */

    /* net/audit.c: the records as they happen, and ps's figures. */
    pthread_mutex_t audit_lock; /* held while a record is written */
    pthread_cond_t audit_told;
    bool audit_known;           /* rf_net_proxy_set_audit was called (or stopping) */
    const struct rf_audit_run *audit; /* NULL: no trail, or stopped */
    int stats_fd;               /* <run>/<id>.net, or -1; the loop thread's */
    uint64_t stats_out, stats_refusals;
    struct timespec stats_at;
    /* net/who.c: the processes of the sandbox's network namespace, as
     * last seen, the last one found holding a connection first. */
    pthread_mutex_t who_lock;
    pid_t who_pids[RF_NET_WHO_PIDS];
    size_t who_n;
};

/* handshake.c: a detached thread per accepted client. */
typedef struct rf_net_client {
    rf_net_proxy *proxy;
    int fd;
    const rf_net_listener *via;
} rf_net_client;
void *rf_net_handshake_main(void *arg);
/* A handshake ended: if it was one at the cap (`at_cap`), the loop may
 * have paused accepting; wake it so that it resumes. Below the cap it
 * never paused, and a wake per connection would cost a loop turn. */
void rf_net_wake_accept(rf_net_proxy *p, bool at_cap);

/* proxy.c: statistics and log, under the lock. Returns the dest index or
 * (size_t)-1 when the table is full. */
size_t rf_net_note(rf_net_proxy *p, const char *host, uint16_t port, const char *reason);
void rf_net_note_failed(rf_net_proxy *p);
void rf_net_add_bytes(rf_net_proxy *p, size_t dest, uint64_t up, uint64_t down);
void rf_net_unref(rf_net_proxy *p);
/* A line (ending in \n) on the log fd, within the cap on lines. */
void rf_net_log(rf_net_proxy *p, const char *line);

/* audit.c. A connection's verdict as it happens: net.refused (reason
 * set), else net.allowed (connected: whether the upstream answered).
 * `who`: the process inside when already looked up (a question), else
 * looked up from client_fd. -1 when the record could not be written (an
 * allowed connection is then refused: nothing unrecorded goes out). */
int rf_net_audit_connection(rf_net_proxy *p, int client_fd, const char *host, uint16_t port, const char *protocol,
                            const char *reason, bool connected, bool asked, const rf_ask_who *who);
/* One request through a route: its name, method, path without the
 * query, status; never a header. -1 when it could not be written. */
int rf_net_audit_route(rf_net_proxy *p, const char *route, const char *method, size_t method_len, const char *path,
                       size_t path_len, int status, uint64_t sent, uint64_t received);
/* who.c: the process inside holding the other end of the accepted
 * connection fd. 0 with *out, -1 when it is not known. */
int rf_net_who(rf_net_proxy *p, int fd, rf_ask_who *out);
/* Stopping: wake waiters, and no record after this returns. */
void rf_net_audit_detach(rf_net_proxy *p);
void rf_net_audit_init(rf_net_proxy *p);
void rf_net_audit_destroy(rf_net_proxy *p);
/* The loop thread: bytes out and refusals to the stats file, when they
 * changed, at most once a second unless `now`. Returns the epoll timeout
 * to use (ms): short while a change waits to be written. */
int rf_net_stats_write(rf_net_proxy *p, bool now);
/* relay.c: bytes sent upstream so far by the relays still open (loop thread). */
uint64_t rf_net_relay_live_up(const rf_net_proxy *p);

/* route_serve.c: a client whose first request is for /route/NAME/...,
 * served on the calling (handshake) thread until the connection ends.
 * `fd` stays the caller's; *buf (RF_NET_HEAD_MAX bytes, malloc'd) holds
 * what was read of it already and becomes the connection's read-ahead:
 * freed while the connection is idle, and *buf is then NULL. */
void rf_net_route_serve(rf_net_proxy *p, int fd, char **buf, size_t len);

/* relay.c: owned by the loop thread once handed off. `first_up` is sent
 * upstream before anything else (a rewritten HTTP head, pipelined bytes). */
rf_net_relay *rf_net_relay_new(int client, int upstream, size_t dest, const char *first_up, size_t first_len);
void rf_net_relay_free(rf_net_relay *r);
/* Free a relay that was never handed to the loop, leaving its two
 * descriptors open: they are the caller's again. */
void rf_net_relay_disown(rf_net_relay *r);
int rf_net_relay_add(rf_net_proxy *p, rf_net_relay *r);
/* true: the relay was closed (and freed); *other_tag is its other side's
 * tag, which a later event of the same epoll batch must not use. */
bool rf_net_relay_event(rf_net_proxy *p, void *tag, uint32_t events, uintptr_t *other_tag);
void rf_net_relay_sweep(rf_net_proxy *p, bool all);
/* Close the spare pipes (the loop has stopped). */
void rf_net_relay_pipes_free(rf_net_proxy *p);
