/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sandbox built ahead of its command (the warm pool, src/lib/pool/):
 * every wall is up (namespaces, mounts, identity, limits, Landlock,
 * seccomp), and init waits for one RF_MSG_RUN on the report channel: the
 * command's argv, environment and working directory, with its stdin,
 * stdout and stderr passed as descriptors, except those that are to be a
 * terminal of the command's own: for those init makes a pty in the
 * sandbox's devpts and sends its master back (RF_MSG_PTY, as the one-shot
 * start does; docs/terminal.md). init reads it itself and only
 * then starts the command's process, as it starts a command known from
 * the beginning (rf_command_clone: no copy of its address space to throw
 * away at the exec, and no other reader of the channel). It runs that one
 * command and ends like any sandbox. The child side never allocates (see
 * sandbox.h): the message lands in a static buffer and is split in
 * place. */
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct deferred_cmd {
    char **argv, **env;
    const char *cwd; /* "" : stay in the plan's */
    int fds[3];      /* stdin, stdout, stderr; -1 for a pty stream */
    unsigned pty_streams; /* tty/'s bits: the streams that are the pty */
    struct winsize size;
    int slave;       /* the pty's slave, or -1 */
} deferred_cmd;

struct run_header {
    int32_t type; /* RF_MSG_RUN */
    uint32_t argc, envc;
    uint32_t pty_streams;          /* bit i: stream i is the pty (0: none) */
    uint16_t rows, cols, xpixel, ypixel; /* its window */
};

static char run_buf[RF_RUN_MAX];
static char *run_argv[RF_RUN_MAX_ARGS + 1];
static char *run_env[RF_RUN_MAX_ARGS + 1];

/* Split n NUL-terminated strings from *p (bounded by end) into v. */
static int split(char **p, const char *end, uint32_t n, char **v)
{
    for (uint32_t i = 0; i < n; i++) {
        char *s = *p;
        char *z = memchr(s, '\0', (size_t)(end - s));
        if (!z)
            return -1;
        v[i] = s;
        *p = z + 1;
    }
    v[n] = NULL;
    return 0;
}

/* The descriptors attached: exactly one for every stream that is not the
 * pty, in order; the pty's streams stay -1. */
static int take_fds(struct msghdr *mh, ssize_t n, unsigned pty_streams, int fds[3])
{
    int want = 0;
    for (int i = 0; i < 3; i++)
        want += !(pty_streams & (1u << i));
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(mh) : NULL;
    if (want == 0)
        return c ? -1 : 0;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN((size_t)want * sizeof(int)))
        return -1;
    for (int i = 0, k = 0; i < 3; i++) {
        fds[i] = -1;
        if (!(pty_streams & (1u << i)))
            memcpy(&fds[i], CMSG_DATA(c) + (k++) * sizeof(int), sizeof(int));
    }
    return 0;
}

static int wait_for_command(int sock, deferred_cmd *cmd, rf_setup_fail *f)
{
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = run_buf, .iov_len = sizeof run_buf };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    struct run_header h;
    cmd->fds[0] = cmd->fds[1] = cmd->fds[2] = cmd->slave = -1;
    if (n >= (ssize_t)sizeof h)
        memcpy(&h, run_buf, sizeof h);
    if (n < (ssize_t)sizeof h || h.pty_streams > 7 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        take_fds(&mh, n, h.pty_streams, cmd->fds) < 0) {
        errno = n == 0 ? ECANCELED : EPROTO;
        return rf_fail(f, "wait for the command", NULL);
    }
    cmd->pty_streams = h.pty_streams;
    cmd->size = (struct winsize){ .ws_row = h.rows, .ws_col = h.cols, .ws_xpixel = h.xpixel, .ws_ypixel = h.ypixel };
    char *p = run_buf + sizeof h;
    const char *end = run_buf + n;
    char *cwd[2];
    if (h.type != RF_MSG_RUN || h.argc == 0 || h.argc > RF_RUN_MAX_ARGS || h.envc > RF_RUN_MAX_ARGS ||
        split(&p, end, 1, cwd) < 0 || split(&p, end, h.argc, run_argv) < 0 || split(&p, end, h.envc, run_env) < 0) {
        errno = EPROTO;
        return rf_fail(f, "wait for the command", "malformed request");
    }
    cmd->cwd = cwd[0];
    cmd->argv = run_argv;
    cmd->env = run_env;
    return 0;
}

static const char *env_path(char *const *env)
{
    for (size_t i = 0; env[i]; i++)
        if (!strncmp(env[i], "PATH=", 5))
            return env[i] + 5;
    return "/usr/local/bin:/usr/bin:/bin";
}

/* execvpe without allocation: each PATH entry in a stack buffer. */
static int exec_search(char *const *argv, char *const *env)
{
    if (strchr(argv[0], '/'))
        return execve(argv[0], argv, env);
    const char *path = env_path(env);
    int saved = ENOENT;
    for (const char *d = path; *d;) {
        size_t len = strcspn(d, ":");
        char full[PATH_MAX];
        size_t an = strlen(argv[0]);
        if (len + 1 + an < sizeof full) {
            memcpy(full, d, len);
            full[len] = '/';
            memcpy(full + len + 1, argv[0], an + 1);
            execve(full, argv, env);
            if (errno == ENOEXEC) /* found, but no #! line: the shell's business, not a reason to look further */
                return -1;
            if (errno == EACCES)
                saved = EACCES;
        }
        d += len + (d[len] == ':');
    }
    errno = saved;
    return -1;
}

/* In the command's process: stdio from the request, then exec. The
 * received descriptors and the pty's slave are close-on-exec, and init
 * has closed its own stdio, so some may already be 0, 1 or 2, in any
 * order: each is first duplicated above 2, then put in place (dup2 clears
 * close-on-exec). The pty's streams: the slave, the controlling terminal
 * of a session of the command's own (rf_pty_take). */
static _Noreturn void exec_deferred(const deferred_cmd *cmd, int report_sock)
{
    int high[3] = { -1, -1, -1 }, slave = -1;
    for (int i = 0; i < 3; i++)
        if (cmd->fds[i] >= 0 && (high[i] = fcntl(cmd->fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
            _exit(RF_EXIT_FAILURE);
    if (cmd->slave >= 0 && (slave = fcntl(cmd->slave, F_DUPFD_CLOEXEC, 3)) < 0)
        _exit(RF_EXIT_FAILURE);
    for (int i = 0; i < 3; i++)
        if (high[i] >= 0 && dup2(high[i], i) < 0)
            _exit(RF_EXIT_FAILURE);
    if (slave >= 0 && rf_pty_take(slave, cmd->pty_streams) < 0) {
        rf_msg_send(report_sock, RF_MSG_SETUP_ERROR, errno, "make the pseudo-terminal the controlling terminal",
                    "/dev/pts");
        _exit(RF_EXIT_FAILURE);
    }
    rf_init_before_exec();
    if (cmd->cwd[0] && chdir(cmd->cwd) < 0) {
        int e = errno;
        rf_msg_send(report_sock, RF_MSG_EXEC_ERROR, e, "chdir", cmd->cwd);
        _exit(RF_EXIT_CANNOT_EXEC);
    }
    exec_search(cmd->argv, cmd->env);
    int e = errno;
    rf_msg_send(report_sock, RF_MSG_EXEC_ERROR, e, "execve", cmd->argv[0]);
    _exit(e == ENOENT ? RF_EXIT_NOT_FOUND : RF_EXIT_CANNOT_EXEC);
}

static deferred_cmd pending;
static int pending_sock = -1;

static int start_pending(void *arg)
{
    (void)arg;
    exec_deferred(&pending, pending_sock);
}

/* A terminal of the command's own: made here, in init (past Landlock and
 * seccomp, already the command's uid, so the slave is the command's), its
 * master to the caller on the report channel before the command starts,
 * so the master always precedes the status. */
static int open_pty(int sock, deferred_cmd *cmd, rf_setup_fail *f)
{
    if (!cmd->pty_streams)
        return 0;
    int master = -1;
    if (rf_pty_open(&cmd->size, &master, &cmd->slave) < 0)
        return rf_fail(f, "open a pseudo-terminal", "/dev/ptmx");
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = RF_MSG_PTY;
    int rc = rf_msg_send_with_fds(sock, &m, sizeof m, &master, 1);
    close(master);
    return rc < 0 ? rf_fail(f, "hand the pseudo-terminal to the caller", NULL) : 0;
}

static void close_pending(void)
{
    for (int i = 0; i < 3; i++)
        if (pending.fds[i] >= 0)
            close(pending.fds[i]); /* the command's now: a reader sees EOF when it ends */
    if (pending.slave >= 0)
        close(pending.slave); /* its end is the master's EOF */
}

pid_t rf_deferred_start(int sock, rf_setup_fail *f)
{
    if (wait_for_command(sock, &pending, f) < 0)
        return -1;
    if (open_pty(sock, &pending, f) < 0) {
        close_pending();
        return -1;
    }
    pending_sock = sock;
    pid_t pid = rf_command_clone(start_pending, NULL);
    int e = errno;
    close_pending();
    errno = e;
    if (pid < 0)
        return rf_fail(f, "start the command", NULL);
    return pid;
}

/* The caller's side: one message, the descriptors of the streams that
 * are not the pty attached, in order. */
int rf_deferred_send(int sock, char *const argv[], char *const env[], const char *cwd, const int fds[3],
                     unsigned pty_streams, const struct winsize *size)
{
    char *buf = malloc(RF_RUN_MAX); /* the caller may allocate */
    if (!buf)
        return -1;
    struct run_header h = { .type = RF_MSG_RUN, .pty_streams = pty_streams };
    if (pty_streams && size) {
        h.rows = size->ws_row;
        h.cols = size->ws_col;
        h.xpixel = size->ws_xpixel;
        h.ypixel = size->ws_ypixel;
    }
    size_t off = sizeof h;
    const char *one[] = { cwd ? cwd : "", NULL };
    char *const *lists[] = { (char *const *)one, argv, env };
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; lists[l] && lists[l][i]; i++) {
            size_t len = strlen(lists[l][i]) + 1;
            if (off + len > RF_RUN_MAX || (l && i >= RF_RUN_MAX_ARGS)) {
                free(buf);
                errno = E2BIG;
                return -1;
            }
            memcpy(buf + off, lists[l][i], len);
            off += len;
            if (l == 1)
                h.argc++;
            else if (l == 2)
                h.envc++;
        }
    }
    memcpy(buf, &h, sizeof h);
    int sent[3];
    size_t nfds = 0;
    for (int i = 0; i < 3; i++)
        if (!(pty_streams & (1u << i)))
            sent[nfds++] = fds[i];
    int rc = rf_msg_send_with_fds(sock, buf, off, sent, nfds);
    int e = errno;
    free(buf);
    errno = e;
    return rc;
}
