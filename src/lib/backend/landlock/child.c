/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The children of the landlock and none backends: init (a child subreaper
 * in a new session) and the command it forks. Every failure is reported to
 * the caller as {step, errno, detail} before _exit(RF_EXIT_FAILURE), as in
 * the native backend. No allocation here (see hostproc.h). */
#include "backend/landlock/hostproc.h"
#include "limits/limits.h"
#include "channel/report.h"
#include "backend/reaper.h"
#include "landlock/landlock.h"
#include "seccomp/seccomp.h"
#include "util/fault.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Noreturn void die(const rf_hostproc_ctx *c, const rf_setup_fail *f)
{
    rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, f->errnum, f->step, f->detail);
    _exit(RF_EXIT_FAILURE);
}

static int setup_stdio(const rf_hostproc_ctx *c, rf_setup_fail *f)
{
    for (int i = 0; i < 3; i++)
        if (c->stdio[i] >= 0 && c->stdio[i] != i && dup2(c->stdio[i], i) < 0)
            return rf_fail(f, "stdio", NULL);
    return 0;
}

/* Every inherited descriptor above 2 but the report channel: a leaked fd
 * is a hole through every other wall. */
static int close_inherited(const rf_hostproc_ctx *c, rf_setup_fail *f)
{
    /* The report channel, a runner's proxy channel and, in test builds,
     * the fault pipe (fault.h); in ascending order. */
    int keep[3] = { c->sock, c->net_fd, c->fault_fd };
    for (int i = 1; i < 3; i++)
        for (int k = i; k > 0 && keep[k] < keep[k - 1]; k--) {
            int t = keep[k];
            keep[k] = keep[k - 1];
            keep[k - 1] = t;
        }
    unsigned lo = 3;
    for (int i = 0; i < 3; i++) {
        if (keep[i] < 0)
            continue;
        if ((unsigned)keep[i] > lo && syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0U) < 0)
            return rf_fail(f, "close inherited descriptors", NULL);
        lo = (unsigned)keep[i] + 1;
    }
    if (syscall(SYS_close_range, lo, UINT_MAX, 0U) < 0)
        return rf_fail(f, "close inherited descriptors", NULL);
    return 0;
}

/* Root caller: no user namespace to make uid 0 harmless, so the command
 * becomes the unprivileged id itself. The bounding set goes first (it needs
 * CAP_SETPCAP); setresuid away from 0 then clears every other capability.
 * A set-uid runner (firejail) keeps the bounding set: it is what firejail
 * gets back at exec, as it would for that user, and it drops it itself. */
static int drop_ids(const rf_plan *plan, rf_setup_fail *f)
{
    /* Raw system calls throughout: after clone3 in a multithreaded caller,
     * glibc's set*id() would wait for the caller's other threads, which
     * are not in this process, for ever. */
    if (syscall(SYS_setgroups, 0, NULL) < 0)
        return rf_fail(f, "drop supplementary groups", NULL);
    for (int cap = 0; cap < 64 && !plan->keep_bounding; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return rf_fail(f, "drop bounding capabilities", NULL);
    gid_t g = plan->gid_host;
    uid_t u = plan->uid_host;
    if (syscall(SYS_setresgid, g, g, g) < 0 || syscall(SYS_setresuid, u, u, u) < 0)
        return rf_fail(f, "switch to the unprivileged id", NULL);
    if (syscall(SYS_setresuid, 0, 0, 0) == 0 || geteuid() == 0) {
        errno = EPERM;
        return rf_fail(f, "switch to the unprivileged id", "uid 0 could be regained");
    }
    return 0;
}

/* Before the ids change: the rules' paths are opened with the caller's
 * permissions, so a rule the unprivileged id could not open does not stop
 * the start (it grants nothing that id could use). */
static int apply_landlock(const rf_hostproc_ctx *c, rf_setup_fail *f)
{
    const rf_plan *plan = c->plan;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return rf_fail(f, "set no_new_privs", NULL);
    rf_landlock_request req = {
        .rules = c->rules,
        .n_rules = c->n_rules,
        .restrict_tcp = plan->restrict_tcp, /* network: none, without a netns */
        .scope_ipc = true,                  /* ABI 6+: no signals or abstract sockets out */
        .mode = plan->landlock,
    };
    int rc = rf_landlock_apply(&req, NULL, NULL);
    if (rc < 0) {
        errno = -rc;
        return rf_fail(f, "landlock", plan->landlock == RF_LANDLOCK_REQUIRED ? "landlock: required" : NULL);
    }
    return 0;
}

/* seccomp last: it forbids calls the steps before it need. */
static int apply_seccomp(const rf_hostproc_ctx *c, rf_setup_fail *f)
{
    int rc = c->seccomp_bpf ? rf_seccomp_apply_bpf(c->seccomp_bpf, c->seccomp_len, NULL) : 0;
    if (rc < 0) {
        errno = -rc;
        return rf_fail(f, "seccomp", NULL);
    }
    return 0;
}

static _Noreturn void run_command(const rf_hostproc_ctx *c, pid_t init, const sigset_t *oldmask)
{
    const rf_plan *plan = c->plan;
    rf_setup_fail f = { 0 };
    /* Its own process group: init signals the group as a whole. */
    if (setpgid(0, 0) < 0 && rf_fail(&f, "setpgid", NULL) < 0)
        die(c, &f);
    if (c->confine && apply_landlock(c, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "landlock");
    if (plan->drop_ids && drop_ids(plan, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "identity"); /* parent-death signal cleared here */
    /* After the last credential change, which clears it: if init is
     * killed, the command goes with it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 && rf_fail(&f, "set parent-death signal", NULL) < 0)
        die(c, &f);
    if (getppid() != init)
        _exit(RF_EXIT_FAILURE); /* init is already gone */
    /* Entered with the identity the command will have. */
    if (!c->exec && chdir(plan->cwd) < 0 && rf_fail(&f, "enter working directory", plan->cwd) < 0)
        die(c, &f);
    if (rf_limits_apply(&plan->limits, &c->how, &f) < 0)
        die(c, &f);
    /* Whatever the caller held (ambient or file capabilities of a non-root
     * caller) is dropped too; no_new_privs is already set. */
    if (c->confine && (rf_caps_clear(&f) < 0 || apply_seccomp(c, &f) < 0))
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "seccomp");
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    if (c->exec)
        c->exec(c); /* another runner (bwrap) takes over from here */
    execve(plan->exec_path, plan->argv, plan->env);
    int e = errno;
    rf_msg_send(c->sock, RF_MSG_EXEC_ERROR, e, "execve", plan->exec_path);
    _exit(e == ENOENT ? RF_EXIT_NOT_FOUND : RF_EXIT_CANNOT_EXEC);
}

_Noreturn void rf_hostproc_init(rf_hostproc_ctx *c)
{
    rf_setup_fail f = { 0 };
    rf_init_reset_signals();
    /* init kills the tree before it dies, so the parent-death signal must
     * be one it catches (see init.c), not SIGKILL. */
    if (prctl(PR_SET_PDEATHSIG, RF_HOSTPROC_DEATH_SIGNAL, 0, 0, 0) < 0 && rf_fail(&f, "set parent-death signal", NULL) < 0)
        die(c, &f);
    if (getppid() != c->caller)
        _exit(RF_EXIT_FAILURE); /* the caller is already gone */
    if (setup_stdio(c, &f) < 0 || close_inherited(c, &f) < 0)
        die(c, &f);
    /* With limits, the caller moves us into the cgroups first: wait. */
    struct rf_msg go;
    if (c->wait_go && (rf_msg_recv(c->sock, &go) != 1 || go.type != RF_MSG_GO))
        _exit(RF_EXIT_FAILURE); /* the caller is gone */
    /* A new session: no controlling terminal for the whole tree, so no
     * TIOCSTI into the caller's terminal and no job-control signals. */
    if (setsid() < 0 && rf_fail(&f, "setsid", NULL) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "init-session");
    /* Orphans below us come to us, not to the host's init. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 && rf_fail(&f, "become a child subreaper", NULL) < 0)
        die(c, &f);
    /* Blocked until init's signalfd takes over, so none is lost. */
    sigset_t all, oldmask;
    sigfillset(&all);
    if (sigprocmask(SIG_SETMASK, &all, &oldmask) < 0 && rf_fail(&f, "block signals", NULL) < 0)
        die(c, &f);
    pid_t init = getpid();
    /* A raw clone, not fork(): glibc's fork() takes locks (malloc, stdio,
     * atfork) another thread of the caller may have held at clone3 time. */
    pid_t cmd = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
    if (cmd < 0 && rf_fail(&f, "fork the command", NULL) < 0)
        die(c, &f);
    if (cmd == 0)
        run_command(c, init, &oldmask);
    /* Only the runner sends on it: the caller must see it close when the
     * runner dies before sending. */
    if (c->net_fd >= 0)
        close(c->net_fd);
    rf_fault_child_point(c->fault_fd, c->sock, "exec"); /* the command is forked and execs */
    static const rf_init_ops ops_template = {
        .signal_all = rf_reaper_signal_all,
        .kill_all = rf_reaper_kill_all,
        .parent_death_signal = RF_HOSTPROC_DEATH_SIGNAL,
    };
    rf_init_ops ops = ops_template;
    ops.caller = c->caller;
    ops.terminate_command = c->exec != NULL;
    rf_init_run(cmd, c->sock, &ops);
}
