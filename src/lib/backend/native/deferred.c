/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sandbox built ahead of its command (the warm pool, src/lib/pool/):
 * every wall is up (namespaces, mounts, identity, limits, Landlock,
 * seccomp), and init waits for one RF_MSG_RUN on the report channel: the
 * command's argv, environment and working directory, with its stdin,
 * stdout and stderr passed as descriptors. init reads it itself and only
 * then starts the command's process, as it starts a command known from
 * the beginning (rf_command_clone: no copy of its address space to throw
 * away at the exec, and no other reader of the channel). It runs that one
 * command and ends like any sandbox. The child side never allocates (see
 * sandbox.h): the message lands in a static buffer and is split in
 * place. */
#include "backend/native/report.h"
#include "backend/native/sandbox.h"

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
    int fds[3];      /* stdin, stdout, stderr */
} deferred_cmd;

struct run_header {
    int32_t type; /* RF_MSG_RUN */
    uint32_t argc, envc;
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
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (n < (ssize_t)sizeof h || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int)) ||
        (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        errno = n == 0 ? ECANCELED : EPROTO;
        return rf_fail(f, "wait for the command", NULL);
    }
    memcpy(&h, run_buf, sizeof h);
    memcpy(cmd->fds, CMSG_DATA(c), sizeof cmd->fds);
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
 * received descriptors are close-on-exec, and init has closed its own
 * stdio, so some may already be 0, 1 or 2, in any order: each is first
 * duplicated above 2, then put in place (dup2 clears close-on-exec). */
static _Noreturn void exec_deferred(const deferred_cmd *cmd, int report_sock)
{
    int high[3];
    for (int i = 0; i < 3; i++)
        if ((high[i] = fcntl(cmd->fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
            _exit(RF_EXIT_FAILURE);
    for (int i = 0; i < 3; i++)
        if (dup2(high[i], i) < 0)
            _exit(RF_EXIT_FAILURE);
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

pid_t rf_deferred_start(int sock, rf_setup_fail *f)
{
    if (wait_for_command(sock, &pending, f) < 0)
        return -1;
    pending_sock = sock;
    pid_t pid = rf_command_clone(start_pending, NULL);
    int e = errno;
    for (int i = 0; i < 3; i++)
        close(pending.fds[i]); /* the command's now: a reader sees EOF when it ends */
    errno = e;
    if (pid < 0)
        return rf_fail(f, "start the command", NULL);
    return pid;
}

/* The caller's side: one message, the three descriptors attached. */
int rf_deferred_send(int sock, char *const argv[], char *const env[], const char *cwd, const int fds[3])
{
    char *buf = malloc(RF_RUN_MAX); /* the caller may allocate */
    if (!buf)
        return -1;
    struct run_header h = { .type = RF_MSG_RUN };
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
    int rc = rf_msg_send_with_fds(sock, buf, off, fds, 3);
    int e = errno;
    free(buf);
    errno = e;
    return rc;
}
