/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool: sandboxes of one policy built ahead (namespaces, mounts,
 * identity, limits, Landlock, seccomp; init waiting), each given exactly
 * one command and then destroyed. A background thread keeps `size` of them
 * ready. Nothing of one command reaches the next: each has its own mount,
 * pid, IPC and network namespaces, /tmp and cgroup, built fresh.
 *
 * rf_pool_run returns once init has reported the status, which it does
 * only after it killed and reaped every other process of the sandbox.
 * What is left then is init's own exit: the kernel taking the namespaces
 * down and the cgroup's removal. The caller need not wait for that; the
 * run's rf_proc is "retired" to the background thread, which frees it
 * (kill and reap init, remove the cgroup) before building the next
 * sandbox. rf_pool_free frees what is still retired. */
#include "pool/pool.h"
#include "audit/run.h"
#include "registry/registry.h"
#include "backend/native/sandbox.h"
#include "proc/proc.h"
#include "tty/tty.h"
#include "util/error.h"
#include "util/clock.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rf_pool {
    rf_plan *plan; /* deferred: the command comes with each run */
    size_t size;
    int devnull;   /* the idle sandboxes' stdio */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the filler: someone took one, or stop */
    rf_proc **idle;
    size_t n_idle;
    rf_proc **retired; /* done: their init is reaped by the filler */
    size_t n_retired, cap_retired;
    bool stopping;
    bool filler_started;
    pthread_t filler;
    unsigned long built, used;
    char last_error[400];
};

static rf_proc *build_one(rf_pool *p, rf_error **err)
{
    rf_stdio io = { p->devnull, p->devnull, p->devnull };
    return rf_spawn(p->plan, &io, err);
}

/* Free what was retired, with the lock dropped meanwhile. */
static void free_retired_locked(rf_pool *p)
{
    while (p->n_retired) {
        rf_proc *proc = p->retired[--p->n_retired];
        pthread_mutex_unlock(&p->lock);
        rf_proc_free(proc);
        pthread_mutex_lock(&p->lock);
    }
}

static void *filler_main(void *arg)
{
    rf_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        free_retired_locked(p);
        /* It dropped the lock: a stop asked meanwhile woke nobody. */
        if (p->stopping)
            break;
        if (p->n_idle >= p->size) {
            pthread_cond_wait(&p->wake, &p->lock);
            continue;
        }
        /* One was just taken: its command runs now. Building the next one
         * at the same moment would compete with it for the CPU and the
         * kernel's mount locks, so wait a little while some are ready. */
        if (p->n_idle > 0) {
            struct timespec t = rf_clock_after_ms(CLOCK_REALTIME, 20);
            pthread_cond_timedwait(&p->wake, &p->lock, &t);
            if (p->stopping || p->n_idle >= p->size || p->n_retired)
                continue;
        }
        pthread_mutex_unlock(&p->lock);
        rf_error *err = NULL;
        rf_proc *proc = build_one(p, &err);
        pthread_mutex_lock(&p->lock);
        if (!proc) {
            snprintf(p->last_error, sizeof p->last_error, "%s", rf_error_message(err));
            rf_error_free(err);
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_sec += 1; /* do not spin on a host that cannot build one */
            pthread_cond_timedwait(&p->wake, &p->lock, &t);
            continue;
        }
        if (p->stopping) {
            pthread_mutex_unlock(&p->lock);
            rf_proc_free(proc);
            pthread_mutex_lock(&p->lock);
            break;
        }
        p->idle[p->n_idle++] = proc;
        p->built++;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

RF_EXPORT rf_pool *rf_pool_new(const rf_policy *policy, size_t size, rf_error **err)
{
    char *argv[] = { (char *)"/bin/true", NULL };
    if (size == 0 || size > 256) {
        rf_error_set(err, EINVAL, "pool: size %zu: expected 1 to 256", size);
        return NULL;
    }
    /* Its sandboxes are built before their commands are known, each would
     * hold an overlay session of its own for as long as it waits. */
    if (policy->changes == RF_CHANGES_OVERLAY) {
        rf_error_set(err, 0, "pool: changes: overlay: a warm pool's sandboxes are built ahead, each holding a "
                             "session of its own while it waits");
        rf_error_hint_set(err, "run without the pool (ringfence run --changes overlay), or --changes direct");
        return NULL;
    }
    /* A pool's sandboxes are built before anyone asks for them, with no
     * channel to whoever would answer for a request: refuse, do not guess. */
    if (policy->net.ask) {
        rf_error_set(err, ENOTSUP, "pool: network.on_blocked: ask is not available for pooled sandboxes");
        rf_error_hint_set(err, "drop --ask (names outside allow_domains are then refused), or run the command with "
                               "ringfence run --ask");
        return NULL;
    }
    rf_pool *p = calloc(1, sizeof *p);
    if (!p) {
        rf_error_set(err, ENOMEM, "pool");
        return NULL;
    }
    p->size = size;
    p->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->idle = calloc(size, sizeof *p->idle);
    p->plan = p->idle && p->devnull >= 0 ? rf_plan_build(policy, argv, err) : NULL;
    if (!p->plan)
        goto fail;
    if (p->plan->backend != RF_BACKEND_NATIVE) {
        rf_error_set(err, ENOTSUP, "pool: the warm pool needs the native backend (this plan uses %s)",
                     rf_plan_backend(p->plan));
        rf_error_hint_set(err, "run without a pool (--no-pool), or on a host where the native backend works");
        goto fail;
    }
    p->plan->deferred = true;
    if (pthread_create(&p->filler, NULL, filler_main, p) != 0) {
        rf_error_set(err, errno, "pool: thread");
        goto fail;
    }
    p->filler_started = true;
    return p;
fail:
    rf_pool_free(p);
    return NULL;
}

RF_EXPORT void rf_pool_free(rf_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    if (p->filler_started)
        pthread_join(p->filler, NULL);
    for (size_t i = 0; i < p->n_idle; i++)
        rf_proc_free(p->idle[i]); /* kills the tree, removes the cgroup */
    for (size_t i = 0; i < p->n_retired; i++)
        rf_proc_free(p->retired[i]);
    free(p->idle);
    free(p->retired);
    rf_plan_free(p->plan);
    if (p->devnull >= 0)
        close(p->devnull);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p);
}

static bool alive(rf_proc *proc)
{
    struct pollfd pf = { .fd = proc->pidfd, .events = POLLIN };
    return poll(&pf, 1, 0) == 0;
}

/* Tell the filler one was taken. After the hand-over, not before: waking
 * a thread (often on an idle CPU) costs the waker tens of microseconds,
 * which would delay the command. */
static void wake_filler(rf_pool *p)
{
    pthread_mutex_lock(&p->lock);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* A ready sandbox, or one built now when none is. */
static rf_proc *take(rf_pool *p, rf_error **err)
{
    for (;;) {
        pthread_mutex_lock(&p->lock);
        rf_proc *proc = p->n_idle ? p->idle[--p->n_idle] : NULL;
        p->used++;
        pthread_mutex_unlock(&p->lock);
        if (!proc)
            return build_one(p, err);
        if (alive(proc))
            return proc;
        rf_proc_free(proc); /* died while idle (its setup failed, say) */
    }
}

/* The plan's environment with `add` ("KEY=VALUE") on top. */
static char **environment(const rf_plan *plan, char *const *add)
{
    char **env = rf_strv_copy(plan->env);
    for (size_t i = 0; env && add && add[i]; i++) {
        const char *eq = strchr(add[i], '=');
        if (!eq || eq == add[i])
            continue;
        char key[256];
        size_t n = (size_t)(eq - add[i]);
        if (n >= sizeof key)
            continue;
        memcpy(key, add[i], n);
        key[n] = '\0';
        if (rf_strv_env_set(&env, key, eq + 1) != 0) {
            rf_strv_free(env);
            return NULL;
        }
    }
    return env;
}

/* RF_STDIO_PTY streams: how the master is taken (see pool.h), and the
 * window size the pty starts with. */
static int prepare_pty(rf_proc *proc, unsigned streams, const struct winsize *hold, struct winsize *size,
                       rf_error **err)
{
    *size = (struct winsize){ 0 };
    if (!streams)
        return 0;
    if (hold) {
        proc->pty_hold = true;
        *size = *hold;
        return 0;
    }
    if (!(proc->tty = rf_tty_new(streams, err)))
        return -1;
    rf_tty_size(proc->tty, size);
    return 0;
}

/* The sandbox's command is known only now: the trail and `ringfence ps`
 * learn it (both named the pool's placeholder at rf_spawn). */
static int note_command(rf_pool *p, rf_proc *proc, const rf_pool_request *req, rf_error **err)
{
    if (proc->registry_dir) {
        rf_registry_entry e = { .id = proc->id, .pid = proc->pid, .argv = req->argv,
                                .workspace = p->plan->workspace, .backend = rf_backend_name(p->plan->backend),
                                .instance = p->plan->instance, .tree_via_init = proc->tree_via_init };
        (void)rf_registry_add(proc->registry_dir, &e, NULL); /* not fatal, as at rf_spawn */
    }
    return proc->audit ? rf_audit_run_command(proc->audit, req->argv, req->cwd, err) : 0;
}

rf_proc *rf_pool_start(rf_pool *p, const rf_pool_request *req, const struct winsize *hold, rf_error **err)
{
    if (!req->argv || !req->argv[0]) {
        rf_error_set(err, EINVAL, "pool: no command");
        return NULL;
    }
    rf_proc *proc = take(p, err);
    if (!proc) {
        wake_filler(p);
        return NULL;
    }
    unsigned streams = rf_tty_streams(&req->stdio);
    struct winsize size;
    char **env = environment(p->plan, req->env_add);
    int fds[3] = { req->stdio.in_fd >= 0 ? req->stdio.in_fd : 0, req->stdio.out_fd >= 0 ? req->stdio.out_fd : 1,
                   req->stdio.err_fd >= 0 ? req->stdio.err_fd : 2 };
    if (env && prepare_pty(proc, streams, hold, &size, err) < 0) {
        rf_strv_free(env);
        wake_filler(p);
        rf_proc_free(proc);
        return NULL;
    }
    int rc = env ? rf_deferred_send(proc->sock, req->argv, env, req->cwd, fds, streams, &size) : -1;
    int e = errno;
    rf_strv_free(env);
    wake_filler(p);
    errno = e;
    if (rc < 0) {
        rf_proc_free(proc);
        rf_error_set(err, errno ? errno : ENOMEM, "pool: hand the command to a sandbox");
        return NULL;
    }
    if (note_command(p, proc, req, err) < 0) {
        rf_proc_free(proc); /* an unrecorded run is refused, as at rf_spawn */
        return NULL;
    }
    /* The deadlines count from the command's start, not the sandbox's. */
    clock_gettime(CLOCK_MONOTONIC, &proc->started);
    if (req->timeout_s > 0)
        proc->limits.timeout_s = req->timeout_s;
    return proc;
}

/* Hand a finished run to the filler (see the top); freed here when the
 * list cannot grow or the filler is not there to do it. */
void rf_pool_retire(rf_pool *p, rf_proc *proc)
{
    if (!proc)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->filler_started && !p->stopping && p->n_retired == p->cap_retired) {
        size_t cap = p->cap_retired ? p->cap_retired * 2 : 8;
        rf_proc **r = realloc(p->retired, cap * sizeof *r);
        if (r) {
            p->retired = r;
            p->cap_retired = cap;
        }
    }
    bool queued = p->filler_started && !p->stopping && p->n_retired < p->cap_retired;
    if (queued) {
        p->retired[p->n_retired++] = proc;
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    if (!queued)
        rf_proc_free(proc);
}

RF_EXPORT int rf_pool_run(rf_pool *p, const rf_pool_request *req, rf_status *out, rf_error **err)
{
    memset(out, 0, sizeof *out);
    rf_proc *proc = rf_pool_start(p, req, NULL, err);
    if (!proc)
        return -1;
    int rc = rf_proc_wait(proc, out, err);
    if (rc == 0 && proc->have_exit)
        rf_pool_retire(p, proc); /* the tree is gone: only init's exit is left */
    else
        rf_proc_free(proc);
    return rc;
}

RF_EXPORT char *rf_pool_plan_json(const rf_pool *p)
{
    return rf_plan_to_json(p->plan);
}

RF_EXPORT size_t rf_pool_idle(rf_pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->n_idle;
    pthread_mutex_unlock(&p->lock);
    return n;
}
