/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The native backend: namespaces, a tmpfs root, pivot_root, capabilities
 * dropped, no_new_privs, Landlock, seccomp, and a small init as pid 1.
 * Internal to libringfence. */
#pragma once
#include "model/plan.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

/* A setup step that failed in the child: sent to the caller as is. */
typedef struct rf_setup_fail {
    int errnum;
    const char *step;
    char detail[400];
} rf_setup_fail;

/* A mount's source, opened in the setup child: a detached tree for a bind,
 * the file and its checked size for a copy. */
typedef struct rf_mount_src {
    int fd;
    off_t size;
    int upper_fd; /* changes: overlay: the session's directory, a detached tree */
} rf_mount_src;

/* A range of the caller's memory a warm pool's init gives back (shed.c). */
typedef struct rf_shed_range {
    uintptr_t start, end;
} rf_shed_range;
#define RF_SHED_MAX 128

/* Everything the setup child needs, prepared by the caller before clone so
 * the child never allocates (the caller may be multi-threaded). */
typedef struct rf_native_ctx {
    const rf_plan *plan;
    int sock;        /* child's end of the report channel */
    int userns_fd;   /* root caller: the mapped user namespace to enter, else -1 */
    int owner_userns_fd; /* root caller, plan->ws_owned: the workspace's idmap, else -1 */
    int net_fd;      /* network: allowlist: child's end of the socket channel, else -1 */
    rf_mount_src *srcs; /* one per plan mount and one for the cached /etc, filled in the child */
    const char *etc_cache; /* the cached /etc's directory, or "" (etc-cache.c) */
    int stdio[3];    /* -1: inherit; RF_STDIO_PTY: the pty (/dev/null until then) */
    unsigned pty_streams;  /* tty/: the streams that are the pty's slave, or 0 */
    struct winsize pty_size; /* the caller's window at the start */
    int pty_slave;         /* opened after pivot_root; the command's */
    const void *seccomp_bpf; /* compiled by the caller, or NULL */
    const void *observe_bpf; /* plan->observe: the notify filter (observe/), or NULL */
    size_t observe_len;
    size_t seccomp_len;
    struct rf_landlock_rule *landlock_rules; /* built by the caller, with */
    size_t n_landlock_rules;                 /* room for 3 stdio rules more */
    rf_limits_report how;  /* what enforces each limit (rlimit fallbacks) */
    bool late_cgroupns;    /* unshare the cgroup namespace after the attach */
    bool late_netns;       /* the network namespace is made beside the setup (net.c) */
    int fault_fd;          /* test builds: see util/fault.h; else -1 */
    rf_shed_range shed[RF_SHED_MAX]; /* a warm pool's: unmapped by init (shed.c) */
    size_t n_shed;
} rf_native_ctx;

/* Short-lived children that share their parent's memory (CLONE_VM: the
 * userns helper, the command's process until its exec) skip the copy of
 * the address space. The sanitizers' runtimes keep per-thread state in that
 * memory which a second process would change under them: their builds
 * copy. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RF_SHARED_VM_CLONE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RF_SHARED_VM_CLONE 0
#endif
#endif
#ifndef RF_SHARED_VM_CLONE
#define RF_SHARED_VM_CLONE 1
#endif

/* Record errno, step and detail in *f; returns -1. */
int rf_fail(rf_setup_fail *f, const char *step, const char *detail);

/* mount.c */
/* srcs: one per plan mount, and srcs[n_mounts] for the cached /etc. */
/* userns_fd: the idmap of a root caller's binds; owner_userns_fd: the
 * workspace's, where another uid owns it (plan->ws_owned); -1: none. */
int rf_mount_capture_sources(const rf_plan *plan, rf_mount_src *srcs, const char *etc_cache, int userns_fd,
                             int owner_userns_fd, rf_setup_fail *f);
int rf_mount_build_root(const rf_plan *plan, const rf_mount_src *srcs, rf_setup_fail *f);
/* Copy src's checked size of bytes to out (sendfile, else read/write). */
int rf_mount_copy_bytes(const rf_mount_src *src, int out);

/* etc-cache.c: the curated /etc built once per state of its sources and
 * bound read-only. prepare (the caller, before clone): the directory for
 * this plan in dir, built if needed; -1 and "" when there is none, and the
 * child copies as before. covers: mounts[i] is in that directory. */
int rf_etc_cache_prepare(const rf_plan *plan, char *dir, size_t len);
bool rf_etc_cache_covers(const rf_plan *plan, size_t i);

/* caps.c: drop every capability (bounding, ambient, inheritable, permitted,
 * effective), lock the securebits so root inside cannot regain any on
 * exec, and set no_new_privs. */
int rf_caps_drop_all(rf_setup_fail *f);
/* Empty the ambient, inheritable, permitted and effective sets. */
int rf_caps_clear(rf_setup_fail *f);
/* The rlimit fallbacks and defaults, in a child before exec (after the last
 * identity change: RLIMIT_NPROC counts the final uid). */
int rf_limits_apply(const rf_limits *limits, const rf_limits_report *how, rf_setup_fail *f);

/* net.c: bring the loopback interface up in a fresh network namespace;
 * network: allowlist: hand the proxy's listening socket to the caller, and
 * (init) answer the caller's requests for sockets of this namespace. */
int rf_net_loopback_up(rf_setup_fail *f);
int rf_net_send_proxy_listener(int chan, rf_setup_fail *f);
int rf_net_serve_socket_request(int chan); /* -1: channel closed */
/* The network namespace made by a helper process while the setup goes
 * on, instead of in clone3 (half a millisecond of a start, in series):
 * start it, do other work, then join what it made (where the pid counter
 * cannot be set back, start makes it in series and join has nothing to
 * do). reserve_from: any open descriptor; a duplicate of it holds the slot
 * the namespace is put in. */
typedef struct rf_net_maker {
    pid_t pid;
    int fd;                          /* reserved for the namespace's descriptor */
    bool moved;                      /* sent to our other CPUs */
    int pid_counter;                 /* the pid namespace's ns_last_pid, or -1 */
    _Alignas(16) char stack[16384]; /* the helper's, when it shares our memory */
} rf_net_maker;
int rf_net_start_namespace(rf_net_maker *m, int reserve_from, rf_setup_fail *f);
int rf_net_join_namespace(rf_net_maker *m, rf_setup_fail *f);

/* userns.c */
int rf_userns_write_maps(pid_t pid, uid_t uid_in, uid_t uid_host, gid_t gid_in, gid_t gid_host,
                         rf_error **err);
/* A user namespace mapping uid_in→uid_host, for a root caller (idmapped
 * binds and the identity the sandbox enters). Returns an fd or -1. */
int rf_userns_create_mapped(uid_t uid_in, uid_t uid_host, gid_t gid_in, gid_t gid_host, rf_error **err);

/* confine.c: what the caller prepares (allocating) and the child applies
 * (not allocating): the Landlock rules mirroring the mounts and the
 * compiled seccomp filter. */
int rf_confine_prepare(const rf_plan *plan, rf_native_ctx *ctx, rf_error **err);
void rf_confine_release(rf_native_ctx *ctx);
int rf_confine_apply(const rf_native_ctx *ctx, rf_setup_fail *f);

/* deferred.c: a sandbox built before its command (plan->deferred). */
#define RF_RUN_MAX 65536      /* one RF_MSG_RUN: cwd, argv, env */
#define RF_RUN_MAX_ARGS 1024
/* init: read the one RF_MSG_RUN from the report channel and start its
 * command (rf_command_clone); its pid, or -1 (errno ECANCELED: the caller
 * closed the channel). */
pid_t rf_deferred_start(int sock, rf_setup_fail *f);
int rf_deferred_send(int sock, char *const argv[], char *const env[], const char *cwd, const int fds[3],
                     unsigned pty_streams, const struct winsize *size);

/* shed.c: plan (the caller, before clone) lists the caller's memory a
 * warm pool's init does not need; release (init, once setup is done and
 * nothing of the caller's is read again) unmaps it. */
void rf_shed_plan(rf_native_ctx *c);
void rf_shed_release(const rf_native_ctx *c);
/* Init, once it has waited a while (rf_init_release_stack_when_idle): the
 * stack pages setup used below its frame are given back (every sandbox,
 * one-shot or pooled). */
void rf_shed_stack(void);

/* sandbox.c: the setup sequence; never returns. */
_Noreturn void rf_sandbox_child(rf_native_ctx *ctx);
/* fn(arg) in a process sharing our memory (a copy in sanitizer builds)
 * and what flags adds; its pid, or -1. */
pid_t rf_clone_sharing(int (*fn)(void *), void *arg, int flags, void *stack_top);
/* Start the command's process: fn(arg) must exec or _exit. */
pid_t rf_command_clone(int (*fn)(void *), void *arg);

/* init.c: the sandbox's init; reaps, forwards signals, reports and exits
 * with the command's status. Never returns. ops NULL: pid 1 of the native
 * backend's pid namespace. Otherwise a child subreaper on the host (landlock
 * and none backends), which ends the tree itself through these: */
typedef struct rf_init_ops {
    int (*signal_all)(pid_t command, int sig);            /* backend/reaper.h */
    void (*kill_all)(pid_t command, int *status, bool *done);
    pid_t caller;             /* init's parent at start */
    int parent_death_signal;  /* set with PR_SET_PDEATHSIG: checked against caller */
    bool terminate_command;   /* a runner (bwrap, firejail) is the command: the caller's
                                 "terminate" goes to it alone, and it ends its sandbox
                                 in order (so the command's status and CPU time come
                                 back); "kill" still reaches every process */
} rf_init_ops;
_Noreturn void rf_init_run(pid_t command, int sock, const rf_init_ops *ops);
/* The signals init passes on to its command (a runner passes them on
 * again: bwrap/child.c). */
#define RF_INIT_N_FORWARDED 6
extern const int rf_init_forwarded[RF_INIT_N_FORWARDED];
/* First thing in each process of ours forked from the caller (a sandbox's
 * setup child and init, the container backend's supervisor): every
 * signal's disposition back to its default (none of the caller's handlers
 * or ignored signals). */
void rf_init_reset_signals(void);
/* The native setup child works under umask 0 (modes exactly as given). */
void rf_init_own_umask(void);
/* In the command's process, last before exec: no signal blocked, the
 * caller's umask back. */
void rf_init_before_exec(void);
/* Before rf_init_run: also answer socket requests on `chan` (native
 * backend, network: allowlist with --publish). */
void rf_init_serve_sockets(int chan);
/* Before rf_init_run: give the setup's stack pages back (rf_shed_stack)
 * once init has waited RF_INIT_IDLE_MS with nothing to do, not at once: a
 * short command has ended by then and its start paid nothing for it. */
#define RF_INIT_IDLE_MS 100
void rf_init_release_stack_when_idle(void);
/* Before rf_init_run, with no command: a warm pool's sandbox. The first
 * message on the report channel is its command (rf_deferred_start). */
void rf_init_await_command(void);

/* spawn.c */
/* sink: see rf_spawn_with_sink (backend.h); NULL for rf_spawn's relay. */
struct rf_tty_sink;
rf_proc *rf_native_spawn(const rf_plan *plan, const rf_stdio *stdio, const struct rf_tty_sink *sink,
                         rf_error **err);
