/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's half of the native backend: prepare what the child needs,
 * clone3 into the namespaces, write the id maps, say "go". */
#include "backend/backend.h"
#include "backend/native/floor.h"
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "observe/observe.h"
#include "proc/proc.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/ident.h"
#include "util/strv.h"
#include "limits/cgroup.h"
#include "net/net.h"
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int clone_error(int e, rf_error **err)
{
    rf_error_set(err, e, "cannot create the sandbox's namespaces");
    if (e == ENOSPC)
        rf_error_hint_set(err, "a limit on namespaces is reached (sysctl user.max_user_namespaces, "
                               "user.max_net_namespaces, user.max_mnt_namespaces, user.max_pid_namespaces...): "
                               "raise it, or run 'ringfence doctor'");
    else if (e == ENOSYS || ((e == EPERM || e == EINVAL) && rf_ident_seccomp_filtered()))
        rf_error_hint_set(err, "this process runs under a seccomp filter that refuses namespaces (a "
                               "container's: docker's default answers clone3 with ENOSYS and namespace flags "
                               "with EPERM unless CAP_SYS_ADMIN): run the container with a profile that allows "
                               "them (--security-opt seccomp=PROFILE, or seccomp=unconfined), or use --backend "
                               "landlock (docs/containers.md)");
    else if (e == EPERM || e == EINVAL)
        rf_error_hint_set(err, "this kernel does not let unprivileged users create user namespaces. Enable "
                               "them (Debian/Ubuntu: sysctl -w kernel.unprivileged_userns_clone=1; Ubuntu 24.04+: "
                               "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; everywhere: "
                               "user.max_user_namespaces > 0), or run 'ringfence doctor'");
    return -1;
}

/* Born in the v2 cgroup; the cgroup namespace is made by the child once
 * it sits in every hierarchy's cgroup (see sandbox.c). */
static void clone_into_cgroup(struct clone_args *args, rf_native_ctx *ctx, const rf_cgroup *cg)
{
    if (!cg)
        return;
    ctx->late_cgroupns = (args->flags & CLONE_NEWCGROUP) != 0;
    args->flags &= ~(uint64_t)CLONE_NEWCGROUP;
    if (rf_cgroup_v2_dir_fd(cg) >= 0) {
        args->flags |= CLONE_INTO_CGROUP;
        args->cgroup = (uint64_t)rf_cgroup_v2_dir_fd(cg);
    }
}

/* The child is waiting for "go": put it in its cgroups, write its id maps
 * (unprivileged caller), then let it start. */
static rf_proc *release_child(const rf_plan *plan, pid_t pid, int pidfd, int sock, int net_chan,
                              rf_backend_start *start, rf_tty *tty, rf_error **err)
{
    rf_proc *proc = rf_proc_new(pid, pidfd, sock, &plan->limits);
    if (proc)
        proc->tty = tty;
    else
        rf_tty_free(tty);
    if (!proc) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(sock);
        if (net_chan >= 0)
            close(net_chan);
        rf_error_set(err, ENOMEM, "spawn");
        return NULL;
    }
    rf_cgroup *cg = start->cgroup;
    rf_backend_start_give(start, proc);
    rf_fault_point("clone");
    if (cg && rf_cgroup_attach(cg, pid, err) < 0)
        goto fail;
    rf_fault_point("cgroup-attach");
    if (!plan->caller_is_root &&
        rf_userns_write_maps(pid, plan->uid_inside, plan->uid_host, plan->gid_inside, plan->gid_host, err) < 0) {
        rf_error_prefix(err, "map the user namespace");
        if (rf_ident_apparmor_restricts_userns())
            rf_error_hint_set(err, "%s", RF_APPARMOR_HINT);
        goto fail;
    }
    rf_fault_point("uid-map");
    if (rf_msg_send(sock, RF_MSG_GO, 0, NULL, NULL) < 0) {
        rf_error_set(err, errno, "start the sandbox");
        goto fail;
    }
    rf_fault_point("go");
    if (net_chan >= 0) {
        int chan = net_chan;
        net_chan = -1; /* taken by start_proxy */
        if (rf_backend_start_proxy(plan, proc, chan, err) < 0)
            goto fail;
        rf_fault_point("proxy");
    }
    rf_fault_point("spawned");
    return proc;
fail:
    if (net_chan >= 0)
        close(net_chan);
    rf_proc_free(proc); /* kills the child, removes the cgroup */
    return NULL;
}

/* RF_STDIO_PTY: the relay made now (it reads the caller's window size for
 * the child); the pty itself is made inside (sandbox.c). */
static int prepare_pty(const rf_plan *plan, const rf_stdio *stdio, const rf_tty_sink *sink, rf_native_ctx *ctx,
                       rf_tty **ret_tty, rf_error **err)
{
    ctx->pty_streams = rf_tty_streams(stdio);
    if (!ctx->pty_streams)
        return 0;
    if (plan->deferred)
        return rf_error_set(err, EINVAL, "a warm pool's sandbox cannot give its command a terminal (RF_STDIO_PTY)");
    rf_tty *tty = sink ? rf_tty_new_sink(ctx->pty_streams, sink, err) : rf_tty_new(ctx->pty_streams, err);
    if (!tty)
        return -1;
    rf_tty_size(tty, &ctx->pty_size);
    *ret_tty = tty;
    return 0;
}

rf_proc *rf_native_spawn(const rf_plan *plan, const rf_stdio *stdio, const rf_tty_sink *sink, rf_error **err)
{
    /* Below the kernel floor, refuse before anything is made (floor.h). */
    if (rf_native_floor_check(err) < 0)
        return NULL;
    rf_backend_start start;
    if (rf_backend_start_prepare(plan, &start, err) < 0)
        return NULL;
    int sv[2] = { -1, -1 }, nv[2] = { -1, -1 }, userns_fd = -1, owner_userns_fd = -1;
    rf_tty *tty = NULL;
    rf_observer *observer = NULL;
    rf_native_ctx ctx = { .plan = plan, .userns_fd = -1, .owner_userns_fd = -1, .net_fd = -1,
                          .stdio = { -1, -1, -1 }, .how = start.how, .fault_fd = -1, .pty_slave = -1 };
    _cleanup_free_ rf_mount_src *srcs = calloc(plan->n_mounts + 1, sizeof(*srcs));
    if (!srcs) {
        rf_error_set(err, ENOMEM, "spawn");
        goto fail;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        (plan->network == RF_NET_ALLOWLIST && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, nv) < 0)) {
        rf_error_set(err, errno, "socketpair");
        goto fail;
    }
    if (plan->caller_is_root &&
        (userns_fd = rf_userns_create_mapped(plan->uid_inside, plan->uid_host, plan->gid_inside, plan->gid_host,
                                             err)) < 0)
        goto fail;
    if (plan->caller_is_root && plan->ws_owned &&
        (owner_userns_fd = rf_userns_create_mapped(plan->ws_uid, plan->uid_host, plan->ws_gid, plan->gid_host,
                                                   err)) < 0)
        goto fail;
    ctx.owner_userns_fd = owner_userns_fd;
    ctx.sock = sv[1];
    ctx.net_fd = nv[1];
    ctx.userns_fd = userns_fd;
    ctx.srcs = srcs;
    if (stdio)
        memcpy(ctx.stdio, &stdio->in_fd, sizeof ctx.stdio);
    if (prepare_pty(plan, stdio, sink, &ctx, &tty, err) < 0)
        goto fail;
    if (rf_confine_prepare(plan, &ctx, err) < 0)
        goto fail;
    if (plan->observe && !(observer = rf_observer_new(plan, err)))
        goto fail;
    char etc_cache[4096];
    (void)rf_etc_cache_prepare(plan, etc_cache, sizeof etc_cache); /* none: the child copies */
    ctx.etc_cache = etc_cache;
    if (plan->deferred)
        rf_shed_plan(&ctx); /* an idle init holds no copy of our memory */

    int pidfd = -1;
    uint64_t flags = (uint64_t)plan->clone_flags | CLONE_PIDFD;
    if (plan->caller_is_root)
        flags &= ~(uint64_t)CLONE_NEWUSER; /* entered later, see sandbox.c */
    /* The child's helper makes the network namespace while the child
     * builds the mounts (net.c), unless the proxy needs it at once. */
    ctx.late_netns = (flags & CLONE_NEWNET) && plan->network != RF_NET_ALLOWLIST;
    if (ctx.late_netns)
        flags &= ~(uint64_t)CLONE_NEWNET;
    struct clone_args args = { .flags = flags, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD };
    clone_into_cgroup(&args, &ctx, start.cgroup);
    ctx.fault_fd = rf_fault_arm();
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0)
        rf_sandbox_child(&ctx);
    int e = errno;
    rf_fault_disarm_parent(ctx.fault_fd);
    rf_confine_release(&ctx);
    close(sv[1]);
    if (nv[1] >= 0)
        close(nv[1]);
    if (userns_fd >= 0)
        close(userns_fd);
    if (owner_userns_fd >= 0)
        close(owner_userns_fd);
    if (pid < 0) {
        close(sv[0]);
        if (nv[0] >= 0)
            close(nv[0]);
        rf_backend_start_release(&start);
        rf_tty_free(tty);
        clone_error(e, err);
        return NULL;
    }
    rf_proc *proc = release_child(plan, pid, pidfd, sv[0], nv[0], &start, tty, err);
    if (proc)
        proc->observer = observer; /* before any wait reads RF_MSG_OBSERVE */
    else
        rf_observer_free(observer);
    return proc;

fail:
    rf_observer_free(observer);
    rf_confine_release(&ctx);
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (nv[i] >= 0)
            close(nv[i]);
    }
    if (userns_fd >= 0)
        close(userns_fd);
    if (owner_userns_fd >= 0)
        close(owner_userns_fd);
    rf_tty_free(tty);
    rf_backend_start_release(&start);
    return NULL;
}
