/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's supervisor: a thread of the caller serving the seccomp
 * listener of one sandbox (observe.h). Each notification: read the path
 * from the process (bounded, page by page, so an unmapped or unterminated
 * string is a failed read, never a crash), check the notification is still
 * live (the pid was not reused), answer CONTINUE, then classify and record.
 * A hostile command can only slow itself down: every call waits for its
 * answer, and the record table is bounded. */
#include "observe/observe.h"
#include "observe/offer.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

extern const char *const rf_observe_syscalls[];

/* Linux 6.6: wake the stopped caller on the supervisor's CPU, a
 * synchronous hand-off instead of two scheduler round trips. Older
 * headers lack it; older kernels refuse it (then it is simply slower). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

typedef struct record {
    char *path;      /* inside */
    char *host;      /* the host path the verdict is about */
    const char *call;
    rf_seen seen;
    bool write, exec;
    unsigned count;
} record;

/* Which argument holds the path, and what the call means. */
typedef struct call_info {
    int nr;
    const char *name;
    int arg;         /* path argument, or -1 */
    int arg2;        /* a second path (rename's target), or -1 */
    int flags_arg;   /* open flags, or -1 */
    bool write, exec;
    bool sockaddr;   /* connect: a struct sockaddr */
    bool how;        /* openat2: struct open_how */
} call_info;

static const struct {
    const char *name;
    int arg, arg2, flags_arg;
    bool write, exec;
} calls[] = {
    { "open", 0, -1, 1, false, false },       { "openat", 1, -1, 2, false, false },
    { "openat2", 1, -1, -1, false, false },   { "creat", 0, -1, -1, true, false },
    { "stat", 0, -1, -1, false, false },      { "lstat", 0, -1, -1, false, false },
    { "newfstatat", 1, -1, -1, false, false },{ "statx", 1, -1, -1, false, false },
    { "access", 0, -1, -1, false, false },    { "faccessat", 1, -1, -1, false, false },
    { "faccessat2", 1, -1, -1, false, false },{ "readlink", 0, -1, -1, false, false },
    { "readlinkat", 1, -1, -1, false, false },{ "execve", 0, -1, -1, false, true },
    { "execveat", 1, -1, -1, false, true },   { "mkdir", 0, -1, -1, true, false },
    { "mkdirat", 1, -1, -1, true, false },    { "unlink", 0, -1, -1, true, false },
    { "unlinkat", 1, -1, -1, true, false },   { "rmdir", 0, -1, -1, true, false },
    { "rename", 0, 1, -1, true, false },      { "renameat", 1, 3, -1, true, false },
    { "renameat2", 1, 3, -1, true, false },   { "chdir", 0, -1, -1, false, false },
    { "truncate", 0, -1, -1, true, false },   { "connect", 1, -1, -1, false, false },
};

/* The paths of one notification, read while the caller is stopped in it. */
typedef struct pending {
    char a[PATH_MAX], b[PATH_MAX];
    bool have_a, have_b, write;
} pending;

struct rf_observer {
    rf_view *view;
    call_info *info;
    size_t n_info;
    int listener, stop_fd;
    pthread_t thread;
    bool started;
    record *rec;     /* open addressing, RF_OBSERVE_MAX_RECORDS * 2 slots */
    size_t n_rec;
    unsigned long long notifications, dropped, unreadable;
    pending pend;    /* the thread's: two paths are too big for its stack frame's taste */
    rf_offer offer;  /* files.on_hidden: ask; offer.ask NULL otherwise */
    unsigned long long offered;
};

#define SLOTS (RF_OBSERVE_MAX_RECORDS * 2)

rf_observer *rf_observer_new(const rf_plan *plan, rf_error **err)
{
    rf_observer *o = calloc(1, sizeof *o);
    size_t n = sizeof calls / sizeof calls[0];
    if (o) {
        o->listener = o->stop_fd = -1;
        o->info = calloc(n, sizeof *o->info);
        o->rec = calloc(SLOTS, sizeof *o->rec);
        o->view = rf_view_new(plan, getenv("HOME"));
        o->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    }
    if (!o || !o->info || !o->rec || !o->view || o->stop_fd < 0) {
        rf_observer_free(o);
        rf_error_set(err, ENOMEM, "observe");
        return NULL;
    }
    if (plan->files_ask && rf_offer_init(&o->offer, plan, o->stop_fd) < 0) {
        rf_observer_free(o);
        rf_error_set(err, ENOMEM, "files.on_hidden: ask");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(calls[i].name);
        if (nr < 0)
            continue;
        o->info[o->n_info++] = (call_info){ .nr = nr, .name = calls[i].name, .arg = calls[i].arg,
                                            .arg2 = calls[i].arg2, .flags_arg = calls[i].flags_arg,
                                            .write = calls[i].write, .exec = calls[i].exec,
                                            .sockaddr = !strcmp(calls[i].name, "connect"),
                                            .how = !strcmp(calls[i].name, "openat2") };
    }
    return o;
}

/* Read len bytes at addr of pid; false on any failure (unmapped memory). */
static bool read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* A NUL-terminated string of at most PATH_MAX bytes at addr, read up to
 * each page's end so a string ending just before an unmapped page reads. */
static bool read_path(pid_t pid, uint64_t addr, char *out)
{
    const size_t page = 4096;
    size_t got = 0;
    while (got < PATH_MAX) {
        size_t chunk = page - (size_t)((addr + got) % page);
        if (chunk > PATH_MAX - got)
            chunk = PATH_MAX - got;
        if (!read_mem(pid, addr + got, out + got, chunk))
            return false;
        if (memchr(out + got, '\0', chunk))
            return true;
        got += chunk;
    }
    return false; /* not terminated within PATH_MAX: no such path */
}

static const call_info *info_of(const rf_observer *o, int nr)
{
    for (size_t i = 0; i < o->n_info; i++)
        if (o->info[i].nr == nr)
            return &o->info[i];
    return NULL;
}

static void add_record(rf_observer *o, const char *path, const char *host, rf_seen seen, const call_info *ci,
                       bool write)
{
    uint64_t h = RF_HASH_INIT;
    rf_hash_mix_str(&h, path);
    rf_hash_mix(&h, &seen, sizeof seen);
    for (size_t i = h % SLOTS, probes = 0; probes < SLOTS; i = (i + 1) % SLOTS, probes++) {
        record *r = &o->rec[i];
        if (r->path && r->seen == seen && !strcmp(r->path, path)) {
            r->count++;
            r->write |= write;
            r->exec |= ci->exec;
            return;
        }
        if (r->path)
            continue;
        if (o->n_rec >= RF_OBSERVE_MAX_RECORDS) {
            o->dropped++;
            return;
        }
        r->path = strdup(path);
        r->host = strdup(host);
        if (!r->path || !r->host) {
            free(r->path);
            free(r->host);
            r->path = r->host = NULL;
            o->dropped++;
            return;
        }
        r->call = ci->name;
        r->seen = seen;
        r->write = write;
        r->exec = ci->exec;
        r->count = 1;
        o->n_rec++;
        return;
    }
}

static void classify(rf_observer *o, char *path, const call_info *ci, bool write)
{
    if (!rf_view_normalise(path)) /* relative: in the working directory, which the command sees */
        return;
    char host[PATH_MAX];
    rf_seen seen = rf_view_classify(o->view, path, write, host, sizeof host);
    if (seen == RF_SEEN_HIDDEN || seen == RF_SEEN_READONLY || seen == RF_SEEN_HOME || seen == RF_SEEN_PROTECTED)
        add_record(o, path, host, seen, ci, write);
}

static bool open_writes(uint64_t flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}


static void read_args(const struct seccomp_notif *req, const call_info *ci, pending *p)
{
    pid_t pid = (pid_t)req->pid;
    const __u64 *args = req->data.args;
    p->write = ci->write;
    if (ci->flags_arg >= 0)
        p->write |= open_writes(args[ci->flags_arg]);
    if (ci->how) {
        struct open_how how;
        if (read_mem(pid, args[2], &how, sizeof how.flags))
            p->write |= open_writes(how.flags);
    }
    if (ci->sockaddr) { /* unix sockets only: a docker or podman socket, a bus */
        struct sockaddr_un sun;
        memset(&sun, 0, sizeof sun);
        size_t len = args[2] < sizeof sun ? (size_t)args[2] : sizeof sun;
        if (len > sizeof(sa_family_t) && read_mem(pid, args[1], &sun, len) && sun.sun_family == AF_UNIX &&
            sun.sun_path[0] == '/') {
            size_t n = strnlen(sun.sun_path, len - sizeof(sa_family_t));
            memcpy(p->a, sun.sun_path, n);
            p->a[n] = '\0';
            p->have_a = true;
        }
        return;
    }
    p->have_a = ci->arg >= 0 && read_path(pid, args[ci->arg], p->a);
    p->have_b = ci->arg2 >= 0 && read_path(pid, args[ci->arg2], p->b);
}

/* files.on_hidden: ask: a read-only open of an absolute path the sandbox
 * hides is asked about before the call goes on (offer.c). The question
 * holds this thread, so the command's other path calls wait meanwhile. */
static bool offer_open(rf_observer *o, const struct seccomp_notif *req, const call_info *ci, const pending *p)
{
    bool open_call = ci->flags_arg >= 0 || ci->how;
    if (!open_call || p->write)
        return false;
    char path[PATH_MAX], host[PATH_MAX];
    snprintf(path, sizeof path, "%s", p->a);
    if (!rf_view_normalise(path) || rf_view_classify(o->view, path, false, host, sizeof host) != RF_SEEN_HIDDEN)
        return false;
    uint64_t flags = ci->flags_arg >= 0 ? req->data.args[ci->flags_arg] : 0;
    if (ci->how) {
        struct open_how how;
        if (!read_mem((pid_t)req->pid, req->data.args[2], &how, sizeof how.flags))
            return false;
        flags = how.flags;
    }
    if (flags & (O_DIRECTORY | O_PATH))
        return false;
    if (!rf_offer_try(&o->offer, o->listener, req->id, (pid_t)req->pid, host, flags & O_CLOEXEC))
        return false;
    o->offered++;
    return true;
}

static void serve_one(rf_observer *o)
{
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        return; /* ENOENT: the caller died meanwhile */
    o->notifications++;
    const call_info *ci = info_of(o, req.data.nr);
    pending *p = &o->pend;
    p->have_a = p->have_b = p->write = false;
    if (ci)
        read_args(&req, ci, p);
    /* Still the same process in the same call? Else what we read may be
     * another's memory: dropped. */
    bool live = ioctl(o->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0;
    if (live && ci && o->offer.ask && p->have_a && offer_open(o, &req, ci, p))
        return;
    struct seccomp_notif_resp resp = { .id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
    (void)ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    if (!ci || !live)
        return;
    if (!p->have_a && ci->arg >= 0 && !ci->sockaddr)
        o->unreadable++;
    if (p->have_a)
        classify(o, p->a, ci, p->write);
    if (p->have_b)
        classify(o, p->b, ci, p->write);
}

static void *serve(void *arg)
{
    rf_observer *o = arg;
    for (;;) {
        struct pollfd pfd[2] = { { .fd = o->listener, .events = POLLIN }, { .fd = o->stop_fd, .events = POLLIN } };
        if (poll(pfd, 2, -1) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            serve_one(o);
            continue;
        }
        /* Hung up: every process of the sandbox is gone. Stop asked with
         * nothing pending: the same. */
        if ((pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) || (pfd[1].revents & POLLIN))
            break;
    }
    return NULL;
}

int rf_observer_start(rf_observer *o, int listener)
{
    if (!o || o->started) {
        close(listener);
        return -1;
    }
    o->listener = listener;
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    if (pthread_create(&o->thread, NULL, serve, o) != 0) {
        /* Nobody would answer the sandbox's calls: they would hang. Closing
         * the listener makes them fail with ENOSYS instead: fail closed. */
        close(o->listener);
        o->listener = -1;
        return -1;
    }
    o->started = true;
    return 0;
}

void rf_observer_stop(rf_observer *o)
{
    if (!o || !o->started)
        return;
    uint64_t one = 1;
    if (write(o->stop_fd, &one, sizeof one) < 0) {
        /* an eventfd write of 1 only fails on overflow */
    }
    pthread_join(o->thread, NULL);
    o->started = false;
    close(o->listener);
    o->listener = -1;
}

static const char *seen_name(rf_seen s)
{
    switch (s) {
    case RF_SEEN_HIDDEN: return "hidden";
    case RF_SEEN_READONLY: return "read-only";
    case RF_SEEN_HOME: return "home";
    case RF_SEEN_PROTECTED: return "protected";
    default: return "visible";
    }
}

char *rf_observer_report(rf_observer *o)
{
    json_t *paths = json_array();
    for (size_t i = 0; o && i < SLOTS; i++) {
        const record *r = &o->rec[i];
        if (!r->path)
            continue;
        json_array_append_new(paths, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:I}", "path", r->path, "host",
                                               r->host, "seen", seen_name(r->seen), "call", r->call, "write",
                                               r->write, "exec", r->exec, "count", (json_int_t)r->count));
    }
    json_t *root = json_pack("{s:o, s:I, s:I, s:I}", "paths", paths, "notifications",
                             (json_int_t)(o ? o->notifications : 0), "dropped", (json_int_t)(o ? o->dropped : 0),
                             "unreadable", (json_int_t)(o ? o->unreadable : 0));
    if (root && o && o->offer.ask)
        json_object_set_new(root, "asked", rf_net_ask_report(o->offer.ask));
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

char *rf_observer_asked(rf_observer *o)
{
    if (!o || !o->offer.ask)
        return NULL;
    json_t *a = rf_net_ask_report(o->offer.ask);
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

void rf_observer_free(rf_observer *o)
{
    if (!o)
        return;
    rf_observer_stop(o);
    for (size_t i = 0; o->rec && i < SLOTS; i++) {
        free(o->rec[i].path);
        free(o->rec[i].host);
    }
    free(o->rec);
    free(o->info);
    rf_offer_clear(&o->offer);
    rf_view_free(o->view);
    if (o->listener >= 0)
        close(o->listener);
    if (o->stop_fd >= 0)
        close(o->stop_fd);
    free(o);
}
