/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's half of the firejail backend: the argv, then the landlock
 * backend's init with firejail as its command, so the cgroups, rlimits,
 * timeout, tree kill and status report are the ones the other backends
 * use. firejail is set-uid: nothing confines it before exec (no_new_privs
 * would take its privileges away); it confines the command itself. */
#include "backend/firejail/firejail.h"
#include "backend/landlock/hostproc.h"
#include "channel/report.h"
#include "util/error.h"
#include "util/memfd.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct firejail_runner {
    rf_firejail_invocation inv;
    char **envp; /* firejail's: the plan's (it passes it on) */
} firejail_runner;

static _Noreturn void fail(const rf_hostproc_ctx *c, const char *step, const char *detail, int errnum)
{
    rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, errnum, step, detail);
    _exit(RF_EXIT_FAILURE);
}

/* The profile in a memfd at RF_FIREJAIL_PROFILE_FD, the only descriptor
 * firejail inherits besides stdio. */
static void profile_fd(const rf_hostproc_ctx *c, const char *text)
{
    int fd = rf_memfd_with("ringfence-firejail-profile", text, strlen(text));
    if (fd < 0)
        fail(c, "firejail profile memfd", NULL, errno);
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10); /* dup2 onto itself would keep close-on-exec */
    if (high < 0 || dup2(high, RF_FIREJAIL_PROFILE_FD) < 0)
        fail(c, "firejail profile memfd", NULL, errno);
}

/* In the command's process, with rlimits and the parent-death signal
 * applied (exec of a set-uid program clears the latter: init's tree kill
 * still reaches firejail, whose real uid is the caller's). */
static void exec_firejail(const rf_hostproc_ctx *c)
{
    const firejail_runner *r = c->runner;
    if (chdir(c->plan->cwd) < 0)
        fail(c, "enter working directory", c->plan->cwd, errno);
    profile_fd(c, r->inv.profile);
    execve(RF_FIREJAIL_PATH, r->inv.argv, r->envp);
    fail(c, "execute firejail", RF_FIREJAIL_PATH, errno);
}

/* TIOCSTI pushes input into a terminal as if typed there: into the
 * user's shell, once the command ends. The other backends' seccomp filter
 * refuses it; firejail's does not, so firejail is refused a terminal
 * unless the kernel itself refuses TIOCSTI (dev.tty.legacy_tiocsti = 0,
 * Linux 6.2+; without the file the kernel allows it). */
static int refuse_terminal(const rf_stdio *stdio, rf_error **err)
{
    int fds[3] = { stdio ? stdio->in_fd : -1, stdio ? stdio->out_fd : -1, stdio ? stdio->err_fd : -1 };
    char legacy = '1';
    FILE *f = fopen("/proc/sys/dev/tty/legacy_tiocsti", "re");
    if (f) {
        legacy = (char)fgetc(f);
        fclose(f);
    }
    for (int i = 0; i < 3 && legacy != '0'; i++)
        if (isatty(fds[i] >= 0 ? fds[i] : i))
            return rf_error_set(err, 0, "backend firejail: the command's %s is a terminal, and firejail cannot "
                                        "stop it from typing into it (TIOCSTI; dev.tty.legacy_tiocsti is on)",
                                i == 0 ? "stdin" : i == 1 ? "stdout" : "stderr"),
                   rf_error_hint_set(err, "redirect it (</dev/null, | cat), set the sysctl "
                                          "dev.tty.legacy_tiocsti=0, or use --backend native or bwrap");
    return 0;
}

rf_proc *rf_firejail_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    if (refuse_terminal(stdio, err) < 0)
        return NULL;
    char *empty_env[] = { NULL };
    firejail_runner r = { .envp = plan->env ? plan->env : empty_env };
    if (rf_firejail_build(plan, rf_firejail_list_host, NULL, &r.inv, err) < 0)
        return NULL;
    rf_proc *proc = rf_hostproc_spawn_runner(plan, stdio, exec_firejail, &r, NULL, 0, -1, err);
    rf_firejail_invocation_free(&r.inv);
    return proc;
}
