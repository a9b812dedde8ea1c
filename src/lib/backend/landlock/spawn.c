/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's half of the landlock and none backends: prepare the rules
 * and the compiled filter, start init (no namespaces), hand back a proc
 * whose tree is killed through init. */
#include "backend/landlock/hostproc.h"
#include "channel/report.h"
#include "limits/cgroup.h"
#include "landlock/landlock.h"
#include "proc/proc.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/strv.h"

#include <errno.h>
#include <limits.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void release(rf_hostproc_ctx *c)
{
    free((void *)c->rules);
    free((void *)c->seccomp_bpf);
    rf_strv_free(c->tty_paths);
    c->rules = NULL;
    c->seccomp_bpf = NULL;
    c->tty_paths = NULL;
}

/* A terminal the command's stdio is on: it holds it open already, so
 * reopening it (`echo > /dev/stderr`) grants nothing new. Other terminals
 * of the user stay closed. */
static int add_ttys(rf_hostproc_ctx *c)
{
    for (int i = 0; i < 3; i++) {
        int fd = c->stdio[i] >= 0 ? c->stdio[i] : i;
        char name[PATH_MAX];
        if (!isatty(fd) || ttyname_r(fd, name, sizeof name) != 0 || strncmp(name, "/dev/", 5) != 0)
            continue;
        if (!rf_strv_contains(c->tty_paths, name) && rf_strv_push(&c->tty_paths, name) < 0)
            return -1;
    }
    return 0;
}

static int prepare(const rf_plan *plan, rf_hostproc_ctx *c, rf_error **err)
{
    if (!c->confine)
        return 0;
    if (add_ttys(c) < 0)
        return rf_error_set(err, ENOMEM, "landlock rules");
    size_t n_tty = rf_strv_len(c->tty_paths);
    rf_landlock_rule *rules = calloc(plan->n_rules + n_tty + 1, sizeof(*rules));
    if (!rules)
        return rf_error_set(err, ENOMEM, "landlock rules");
    for (size_t i = 0; i < plan->n_rules; i++)
        rules[i] = (rf_landlock_rule){ .path = plan->rules[i].path, .write = plan->rules[i].write };
    for (size_t i = 0; i < n_tty; i++)
        rules[plan->n_rules + i] = (rf_landlock_rule){ .path = c->tty_paths[i], .write = true };
    c->rules = rules;
    c->n_rules = plan->n_rules + n_tty;

    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny,
                               .allow = plan->seccomp_allow, .deny_inet = plan->seccomp_deny_inet };
    void *bpf = NULL;
    size_t len = 0;
    /* No cache here: without a mount namespace the command can write
     * wherever the caller's Landlock rules allow, and a cache it could
     * write would feed a weaker filter to the next start. */
    if (rf_seccomp_compile(&req, &bpf, &len, err) < 0)
        return -1;
    c->seccomp_bpf = bpf;
    c->seccomp_len = len;
    return 0;
}

/* A runner's filter: a copy, freed by release() like a compiled one. */
static int copy_bpf(rf_hostproc_ctx *c, const void *bpf, size_t len, rf_error **err)
{
    if (!len)
        return 0;
    void *copy = malloc(len);
    if (!copy)
        return rf_error_set(err, ENOMEM, "seccomp filter");
    memcpy(copy, bpf, len);
    c->seccomp_bpf = copy;
    c->seccomp_len = len;
    return 0;
}

static rf_proc *spawn(const rf_plan *plan, const rf_stdio *stdio, const rf_hostproc_ctx *runner, rf_error **err)
{
    rf_backend_start start;
    if (rf_backend_start_prepare(plan, &start, err) < 0)
        return NULL;
    rf_cgroup *cg = start.cgroup;
    rf_limits_report how = start.how;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        rf_error_set(err, errno, "socketpair");
        rf_backend_start_release(&start);
        return NULL;
    }
    rf_hostproc_ctx ctx = { .plan = plan, .sock = sv[1], .caller = getpid(), .stdio = { -1, -1, -1 },
                            .confine = plan->backend == RF_BACKEND_LANDLOCK, .how = how, .wait_go = cg != NULL,
                            .fault_fd = -1, .net_fd = -1 };
    if (stdio)
        memcpy(ctx.stdio, &stdio->in_fd, sizeof ctx.stdio);
    if (runner) {
        ctx.confine = false;
        ctx.exec = runner->exec;
        ctx.runner = runner->runner;
        ctx.net_fd = runner->net_fd;
    }
    if (runner ? copy_bpf(&ctx, runner->seccomp_bpf, runner->seccomp_len, err) < 0 : prepare(plan, &ctx, err) < 0) {
        release(&ctx);
        close(sv[0]);
        close(sv[1]);
        rf_backend_start_release(&start);
        return NULL;
    }
    int pidfd = -1;
    struct clone_args args = { .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD };
    if (cg && rf_cgroup_v2_dir_fd(cg) >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)rf_cgroup_v2_dir_fd(cg);
    }
    ctx.fault_fd = rf_fault_arm();
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    /* Inside another sandbox (ours included) clone3 may answer ENOSYS, so
     * that libc falls back to clone: fork, then a pidfd for our own child
     * (its pid cannot be reused before we reap it). */
    if (pid < 0 && errno == ENOSYS && (pid = fork()) > 0)
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pid == 0)
        rf_hostproc_init(&ctx);
    int e = errno;
    rf_fault_disarm_parent(ctx.fault_fd);
    release(&ctx);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        rf_backend_start_release(&start);
        rf_error_set(err, e, "start the sandbox's init");
        return NULL;
    }
    rf_proc *proc = pidfd >= 0 ? rf_proc_new(pid, pidfd, sv[0], &plan->limits) : NULL;
    if (!proc) {
        e = pidfd < 0 ? errno : ENOMEM;
        /* Closing the channel makes init kill what it started. */
        close(sv[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (pidfd >= 0)
            close(pidfd);
        rf_backend_start_release(&start);
        rf_error_set(err, e, "start the sandbox's init");
        return NULL;
    }
    proc->tree_via_init = true;
    rf_backend_start_give(&start, proc);
    rf_fault_point("clone");
    /* v1 hierarchies (and v2 after a fork fallback): before "go". */
    if (cg && (rf_cgroup_attach(cg, pid, err) < 0 || rf_msg_send(sv[0], RF_MSG_GO, 0, NULL, NULL) < 0)) {
        rf_proc_free(proc);
        return NULL;
    }
    rf_fault_point("spawned");
    return proc;
}

rf_proc *rf_hostproc_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    return spawn(plan, stdio, NULL, err);
}

rf_proc *rf_hostproc_spawn_runner(const rf_plan *plan, const rf_stdio *stdio,
                                  void (*exec)(const rf_hostproc_ctx *c), const void *runner,
                                  const void *bpf, size_t len, int net_fd, rf_error **err)
{
    rf_hostproc_ctx r = { .exec = exec, .runner = runner, .seccomp_bpf = bpf, .seccomp_len = len, .net_fd = net_fd };
    rf_proc *proc = spawn(plan, stdio, &r, err);
    if (net_fd >= 0)
        close(net_fd); /* init's copy is the one that counts */
    return proc;
}
