/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What run, learn, exec and run --via share (none of them calls another):
 * start a plan, forward signals, wait, report and write the status; the
 * command's stdio; a command run in a warm pool's sandbox (--via). */
#include "cli.h"
#include "options.h"

#include "proc/proc.h"
#include "util/cleanup.h"
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static rf_proc *volatile running;

/* How long a command runs before ringfence gives its stack pages back. */
#define RF_CLI_IDLE_S 0.1

/* Forward what the user sends ringfence to the command (through the
 * sandbox's init). rf_proc_kill is one syscall: async-signal-safe. */
static void forward(int sig)
{
    if (running)
        rf_proc_kill(running, sig);
}

static void install_forwarding(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* --status-json FILE: a new file beside the old one, fsync'd, renamed over
 * it, so a full disk or a crash leaves the old file whole, never a
 * truncated record and no temporary file. A FILE that is not a regular
 * file (a fifo, /dev/stdout) is written in place. Returns -1 with errno. */
int rf_cli_write_atomic(const char *path, const char *json, size_t len)
{
    _cleanup_free_ char *real = realpath(path, NULL); /* a symlink: its target */
    const char *target = real ? real : path;
    struct stat st;
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
        _cleanup_close_ int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -1 : rf_write_all(fd, json, len);
    }
    _cleanup_free_ char *tmp = NULL;
    const char *slash = strrchr(target, '/');
    int dlen = slash ? (int)(slash - target + 1) : 0;
    if (asprintf(&tmp, "%.*s.%s.rf-XXXXXX", dlen, target, slash ? slash + 1 : target) < 0) {
        tmp = NULL;
        errno = ENOMEM;
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    mode_t um = umask(0);
    umask(um);
    int rc = fchmod(fd, 0666 & ~um) < 0 || rf_write_all(fd, json, len) < 0 || fsync(fd) < 0 ? -1 : 0;
    int e = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, target) < 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0)
        unlink(tmp);
    errno = e;
    return rc;
}

static void write_status(const rf_cli_opts *o, const rf_status *st)
{
    char *json = rf_status_to_json(st);
    if (!json)
        return;
    if (o->status_fd >= 0 && dprintf(o->status_fd, "%s\n", json) < 0)
        fprintf(stderr, "ringfence: cannot write the status to --status-fd %d: %s\n", o->status_fd,
                strerror(errno));
    _cleanup_free_ char *line = NULL;
    if (o->status_json_file && asprintf(&line, "%s\n", json) >= 0 &&
        rf_cli_write_atomic(o->status_json_file, line, strlen(line)) < 0) {
        fprintf(stderr, "ringfence: cannot write --status-json %s: %s\n", o->status_json_file, strerror(errno));
        fprintf(stderr, "hint: the file was left as it was; free space there or choose another file "
                        "(the exit status is still the command's)\n");
    }
    free(json);
}

static void explain_end(const rf_plan *plan, const rf_status *st)
{
    (void)plan;
    if (st->setup_error) {
        fprintf(stderr, "ringfence: %s\n", st->setup_error);
        if (st->setup_hint)
            fprintf(stderr, "hint: %s\n", st->setup_hint);
    } else if (st->timed_out) {
        fprintf(stderr, "ringfence: killed: timed out after %gs (the whole process tree was stopped)\n",
                st->wall_seconds);
    } else if (st->oom_killed) {
        char limit[32] = "";
        rf_limits_format_memory(st->memory_limit_bytes, limit, sizeof limit);
        fprintf(stderr, "ringfence: killed: out of memory (limit %s)\n", limit);
    }
}

/* fd is a terminal, the one on stdin. */
static bool same_terminal(int fd)
{
    struct stat a, b;
    return isatty(fd) && fstat(0, &a) == 0 && fstat(fd, &b) == 0 && a.st_rdev == b.st_rdev;
}

/* --pty, --no-pty, or neither: a terminal on stdin means a terminal inside
 * where the backend can make one (native); the others keep the caller's
 * stdio quietly, and refuse an explicit --pty (rf_spawn). In pty mode the
 * command's stdin is the pty, and its stdout and stderr too where ours are
 * that terminal; a redirected one (run -- cmd > file) keeps our fd. With
 * --pty and no terminal, the pty is relayed to our stdin and stdout. */
const rf_stdio *rf_cli_choose_stdio(const rf_cli_opts *o, bool native, rf_stdio *io)
{
    /* Auto: only in the terminal's foreground job. In the background
     * (run -- cmd &) raw mode would stop us with SIGTTOU; there the old
     * way lets the command run on as it always did. */
    bool tty_in = isatty(0) && (o->pty == RF_CLI_PTY_ON || tcgetpgrp(0) == getpgrp());
    if (o->pty == RF_CLI_PTY_OFF ||
        (o->pty == RF_CLI_PTY_AUTO && (!tty_in || !native)))
        return NULL;
    io->in_fd = RF_STDIO_PTY;
    io->out_fd = !tty_in || same_terminal(1) ? RF_STDIO_PTY : -1;
    io->err_fd = tty_in && same_terminal(2) ? RF_STDIO_PTY : -1;
    return io;
}

int rf_cli_execute(const rf_cli_opts *o, const rf_plan *plan)
{
    rf_error *err = NULL;
    rf_stdio io = RF_STDIO_INHERIT;
    rf_proc *proc = rf_spawn(plan, rf_cli_choose_stdio(o, !strcmp(rf_plan_backend(plan), "native"), &io), &err);
    if (!proc) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    char *const *warnings = rf_proc_warnings(proc);
    for (size_t i = 0; warnings && warnings[i]; i++)
        fprintf(stderr, "ringfence: warning: %s\n", warnings[i]);
    if (o->status_fd >= 0)
        dprintf(o->status_fd, "{\"child-pid\":%d}\n", (int)rf_proc_pid(proc));
    /* From here we only wait, maybe for days, maybe a thousand of us: the
     * stack pages the policy, the plan and the start used go back once the
     * command has run a while (a short one ends before that). */
    rf_proc_release_stack_when_idle(proc, RF_CLI_IDLE_S);
    running = proc;
    install_forwarding();
    rf_status st;
    int code;
    if (rf_proc_wait(proc, &st, &err) < 0) {
        code = rf_cli_report(err);
        rf_error_free(err);
    } else {
        explain_end(plan, &st);
        write_status(o, &st);
        code = st.exit_code;
        if ((o->explain_denials || o->learn) && rf_cli_observed(o, plan, proc, &st) < 0 && code == 0)
            code = RF_EXIT_FAILURE; /* learn --write could not write its file */
        rf_status_clear(&st);
    }
    running = NULL;
    rf_proc_free(proc);
    return code;
}

/* run --via: the same options as the server's make the same policy key. */
int rf_cli_run_via(rf_cli_opts *o, char **argv)
{
    int code;
    rf_policy *policy = rf_cli_policy(o, &code);
    if (!policy)
        return code;
    char *key = rf_policy_key(policy);
    rf_policy_free(policy);
    char cwd[4096];
    rf_status st;
    rf_error *err = NULL;
    /* A pool's sandbox is always the native backend's: it can make a pty. */
    rf_stdio io = RF_STDIO_INHERIT;
    const rf_stdio *stdio = rf_cli_choose_stdio(o, true, &io);
    if (!key || rf_pool_client_run_stdio(o->via, key, argv, getcwd(cwd, sizeof cwd) ? cwd : "", stdio, &st,
                                         &err) < 0) {
        code = err ? rf_cli_report(err) : RF_EXIT_FAILURE;
        rf_error_free(err);
    } else {
        if (st.setup_error)
            fprintf(stderr, "ringfence: %s\n", st.setup_error);
        code = st.exit_code;
        rf_status_clear(&st);
    }
    free(key);
    return code;
}
