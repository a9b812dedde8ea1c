/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf-probe: run inside the sandbox by tests/security, it attempts exactly
 * one crossing per call and reports the outcome. Exit 0 and "ok" when the
 * action SUCCEEDED (the boundary did not hold), exit 1 and "denied: <errno
 * name>" when it failed, exit 2 on bad usage. Tests assert on both.
 * Actions: read, write PATH; connect-tcp, bind-tcp, udp-send HOST PORT; connect-unix
 * PATH; connect-abstract NAME; ipc shm|msg KEY; tiocsti; unshare-user;
 * mount-tmpfs DIR; setuid-root; status; fd N; kill PID; sethostname NAME.
 * `rf-probe syscall NAME` tries one syscall the seccomp profiles filter
 * (probe-syscall.c; `rf-probe syscall list` names them all). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "probe.h"

/* The probe runs under seccomp profiles that deny ptrace, which
 * LeakSanitizer needs at exit; leaks in a one-shot probe do not matter. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

int probe_result(long rc)
{
    if (rc >= 0) {
        puts("ok");
        return 0;
    }
    printf("denied: %s (%s)\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?",
           strerror(errno));
    return 1;
}

static int do_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return probe_result(-1);
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return probe_result(n < 0 ? -1 : 0);
}

static int do_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return probe_result(-1);
    ssize_t n = write(fd, "probe\n", 6);
    close(fd);
    return probe_result(n < 0 ? -1 : 0);
}

static int do_connect_tcp(const char *host, const char *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return probe_result(-1);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
    inet_pton(AF_INET, host, &sa.sin_addr);
    return probe_result(connect(s, (struct sockaddr *)&sa, sizeof sa));
}

/* Take a TCP port (with SO_REUSEADDR and SO_REUSEPORT, the ways to share
 * one): "ok" means the port was free to take. */
static int do_bind_tcp(const char *host, const char *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return probe_result(-1);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
    inet_pton(AF_INET, host, &sa.sin_addr);
    return probe_result(bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 ? -1 : listen(s, 1));
}

static int do_connect_abstract(const char *name)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return probe_result(-1);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t n = strlen(name);
    if (n > sizeof sa.sun_path - 2)
        n = sizeof sa.sun_path - 2;
    memcpy(sa.sun_path + 1, name, n); /* sun_path[0] = 0: abstract */
    return probe_result(connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
}

static int do_udp_send(const char *host, const char *port)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return probe_result(-1);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
    inet_pton(AF_INET, host, &sa.sin_addr);
    return probe_result(sendto(s, "probe", 5, 0, (struct sockaddr *)&sa, sizeof sa));
}

static int do_connect_unix(const char *path)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return probe_result(-1);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sa.sun_path) {
        errno = ENAMETOOLONG;
        return probe_result(-1);
    }
    strcpy(sa.sun_path, path);
    return probe_result(connect(s, (struct sockaddr *)&sa, sizeof sa));
}

static int do_ipc_get(const char *kind, const char *key)
{
    key_t k = (key_t)strtol(key, NULL, 0);
    if (strcmp(kind, "shm") == 0)
        return probe_result(shmget(k, 0, 0));
    return probe_result(msgget(k, 0));
}

static int do_tiocsti(void)
{
    char c = 'x';
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        fd = 0;
    return probe_result(ioctl(fd, TIOCSTI, &c));
}

static int do_unshare_user(void)
{
    return probe_result(unshare(CLONE_NEWUSER));
}

static int do_mount_tmpfs(const char *target)
{
    return probe_result(mount("none", target, "tmpfs", 0, NULL));
}

static int do_setuid_root(void)
{
    return probe_result(setuid(0) == 0 && geteuid() == 0 ? 0 : -1);
}

/* Print /proc/self/status fields the tests look at, then exit 0. */
static int do_status(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return probe_result(-1);
    char line[256];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "NoNewPrivs", 10) || !strncmp(line, "CapEff", 6) ||
            !strncmp(line, "CapBnd", 6) || !strncmp(line, "CapAmb", 6) ||
            !strncmp(line, "CapPrm", 6) || !strncmp(line, "Seccomp:", 8) ||
            !strncmp(line, "Uid", 3) || !strncmp(line, "Gid", 3))
            fputs(line, stdout);
    fclose(f);
    printf("sid=%d pid=%d ppid=%d\n", getsid(0), getpid(), getppid());
    return 0;
}

static int do_open_fd(const char *num)
{
    struct stat st;
    return probe_result(fstat(atoi(num), &st));
}

static int do_kill(const char *pid)
{
    return probe_result(kill(atoi(pid), 0));
}

static int do_sethostname(const char *name)
{
    return probe_result(sethostname(name, strlen(name)));
}

/* ── Security-suite actions (tests/security) ──
 * Extra crossings, and a few host-side helpers the tests start OUTSIDE the
 * sandbox to have something to reach for (a listener, an IPC object, a
 * session keyring). Kept apart from the core actions above. */

/* Exit on our own after a minute: a helper a failed test forgot to stop
 * must not outlive the test run. */
#define HELPER_LIFETIME_S 60

static int do_stat(const char *path)
{
    struct stat st;
    return probe_result(stat(path, &st));
}

/* Open for writing without creating or writing anything: proves write
 * access to files where an actual write would harm the host. */
static int do_open_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd >= 0)
        close(fd);
    return probe_result(fd);
}

static int do_ids(void)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    printf("ruid=%u euid=%u suid=%u rgid=%u egid=%u sgid=%u\n", r, e, s, gr, ge, gs);
    return 0;
}

/* Any open descriptor above 2 counts as a leak ("ok"). */
static int do_fds(void)
{
    int found = 0;
    for (int fd = 3; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n < 0 ? 0 : n] = '\0';
        printf("fd %d -> %s\n", fd, target);
        found = 1;
    }
    if (found) {
        puts("ok");
        return 0;
    }
    puts("denied: none open");
    return 1;
}

/* Accept and drop connections until killed or the lifetime ends. */
static _Noreturn void serve(int s)
{
    alarm(HELPER_LIFETIME_S);
    for (;;) {
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0)
            close(c);
    }
}

/* Host helper: listen on 127.0.0.1 at a kernel-chosen port, print it. */
static int do_serve_tcp(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 16) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0)
        return probe_result(-1);
    printf("%d\n", ntohs(sa.sin_port));
    fflush(stdout);
    serve(s);
}

/* Host helper: listen on an abstract unix socket NAME, print "listening". */
static int do_serve_abstract(const char *name)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t n = strnlen(name, sizeof sa.sun_path - 2);
    memcpy(sa.sun_path + 1, name, n);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
        listen(s, 16) < 0)
        return probe_result(-1);
    puts("listening");
    fflush(stdout);
    serve(s);
}

/* Loopback works inside: listen on 127.0.0.1 and connect to ourselves. */
static int do_loopback_tcp(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 1) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0)
        return probe_result(-1);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return probe_result(c < 0 ? -1 : connect(c, (struct sockaddr *)&sa, len));
}

/* Host helper: create a SysV shm segment or message queue, print its id. */
static int do_ipc_create(const char *kind, const char *key)
{
    key_t k = (key_t)strtol(key, NULL, 0);
    int id = strcmp(kind, "shm") == 0 ? shmget(k, 4096, IPC_CREAT | IPC_EXCL | 0600)
                                      : msgget(k, IPC_CREAT | IPC_EXCL | 0600);
    if (id < 0)
        return probe_result(-1);
    printf("%d\n", id);
    return 0;
}

static int do_ptrace(const char *pid)
{
    /* SEIZE does not stop the tracee; our exit detaches. */
    return probe_result(ptrace(PTRACE_SEIZE, (pid_t)atoi(pid), NULL, NULL));
}

static int do_umount(const char *path)
{
    return probe_result(umount2(path, MNT_DETACH));
}

static int do_remount_rw(const char *path)
{
    return probe_result(mount(NULL, path, NULL, MS_REMOUNT | MS_BIND, NULL));
}

/* A fresh procfs in a nested user+pid namespace: the kernel must refuse
 * it while the sandbox's /proc has read-only parts mounted over it. */
static int do_nested_proc(const char *target)
{
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
        return probe_result(-1);
    pid_t p = fork();
    if (p < 0)
        return probe_result(-1);
    if (p == 0) {
        int rc = probe_result(mount("proc", target, "proc", 0, NULL));
        fflush(stdout);
        _exit(rc);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* <linux/keyctl.h> values; Debian has no libkeyutils headers by default. */
#define KEY_SPEC_USER (-4)
#define KEY_SPEC_SESSION (-3)
#define KEYCTL_JOIN_SESSION 1
#define KEYCTL_UNLINK_ 9
#define KEYCTL_SEARCH_ 10
#define KEYCTL_READ_ 11

/* Host helper: join a new session keyring holding a "user" key DESC=DATA,
 * then exec CMD: the caller's session keyring the sandbox must not reach. */
static int do_key_session(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION, NULL) < 0 ||
        syscall(SYS_add_key, "user", argv[2], argv[3], strlen(argv[3]), KEY_SPEC_SESSION) < 0)
        return probe_result(-1);
    execvp(argv[4], argv + 4);
    return probe_result(-1);
}

/* Host helper: a "user" key DESC=DATA in the caller's user keyring for as
 * long as CMD runs; unlinked afterwards (the user keyring outlives us). */
static int do_key_user(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    long key = syscall(SYS_add_key, "user", argv[2], argv[3], strlen(argv[3]), KEY_SPEC_USER);
    if (key < 0)
        return probe_result(-1);
    pid_t p = fork();
    if (p == 0) {
        execvp(argv[4], argv + 4);
        _exit(127);
    }
    int st = 0;
    if (p > 0)
        waitpid(p, &st, 0);
    syscall(SYS_keyctl, KEYCTL_UNLINK_, key, KEY_SPEC_USER);
    return p > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* Find a "user" key DESC through our session (default) or user keyring
 * and read it. */
static int do_key_read(const char *desc, const char *ring)
{
    long spec = strcmp(ring, "user") == 0 ? KEY_SPEC_USER : KEY_SPEC_SESSION;
    long id = syscall(SYS_keyctl, KEYCTL_SEARCH_, spec, "user", desc, 0);
    if (id < 0)
        return probe_result(-1);
    char buf[256];
    long n = syscall(SYS_keyctl, KEYCTL_READ_, id, buf, sizeof buf - 1);
    if (n < 0)
        return probe_result(-1);
    buf[n < (long)sizeof buf - 1 ? n : (long)sizeof buf - 1] = '\0';
    printf("key: %s\n", buf);
    return probe_result(0);
}

/* Create PATH with MODE (octal) in the open call itself, no chmod. */
static int do_create_mode(const char *path, const char *mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)strtol(mode, NULL, 8));
    if (fd >= 0)
        close(fd);
    return probe_result(fd);
}

static int do_chmod(const char *path, const char *mode)
{
    return probe_result(chmod(path, (mode_t)strtol(mode, NULL, 8)));
}

/* Host helper: create a POSIX message queue NAME (removed by mq-unlink). */
static int do_mq_create(const char *name)
{
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, NULL);
    if (q == (mqd_t)-1)
        return probe_result(-1);
    mq_close(q);
    return probe_result(0);
}

static int do_mq_open(const char *name)
{
    mqd_t q = mq_open(name, O_RDONLY | O_CLOEXEC);
    if (q != (mqd_t)-1)
        mq_close(q);
    return probe_result(q == (mqd_t)-1 ? -1 : 0);
}

static int do_mq_unlink(const char *name)
{
    return probe_result(mq_unlink(name));
}

#define INJECT_MARK "RFINJECT"

/* From a new session, make fd 0 (a terminal that is no one's controlling
 * terminal) ours, then push a line into its input as if typed. */
static int do_steal_tty(void)
{
    pid_t p = fork();
    if (p < 0)
        return probe_result(-1);
    if (p == 0) {
        setsid();
        (void)ioctl(0, TIOCSCTTY, 0);
        int rc = 0;
        for (const char *c = INJECT_MARK "\n"; *c && rc == 0; c++)
            rc = ioctl(0, TIOCSTI, c);
        rc = probe_result(rc);
        fflush(stdout);
        _exit(rc);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* Host helper: run CMD with a fresh pty, no one's controlling terminal,
 * as stdin (as a harness might), then report whether anything CMD did
 * pushed INJECT_MARK into that terminal's input ("ok" = it did). */
static int do_pty_run(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
        return probe_result(-1);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0)
        return probe_result(-1);
    pid_t p = fork();
    if (p == 0) {
        dup2(s, 0);
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    char buf[4096];
    size_t len = 0;
    struct pollfd pfd = { .fd = m, .events = POLLIN };
    while (len < sizeof buf - 1 && poll(&pfd, 1, 200) > 0) {
        ssize_t n = read(m, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    if (strstr(buf, INJECT_MARK)) {
        puts("ok");
        return 0;
    }
    puts("denied: nothing injected");
    return 1;
}

static int dispatch(int argc, char **argv);

/* nested ACTION [ARG...]: the action from inside a new user and mount
 * namespace, where the caller holds every capability again. If creating
 * them fails the sandbox already holds; if it works it must gain nothing. */
static int do_nested(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return probe_result(-1);
    return dispatch(argc - 1, argv + 1);
}

static int dispatch_security(int argc, char **argv)
{
    const char *a = argv[1];
    const char *x = argc > 2 ? argv[2] : "";
    const char *y = argc > 3 ? argv[3] : "";
    if (!strcmp(a, "stat")) return do_stat(x);
    if (!strcmp(a, "open-write")) return do_open_write(x);
    if (!strcmp(a, "ids")) return do_ids();
    if (!strcmp(a, "fds")) return do_fds();
    if (!strcmp(a, "serve-tcp")) return do_serve_tcp();
    if (!strcmp(a, "serve-abstract")) return do_serve_abstract(x);
    if (!strcmp(a, "loopback-tcp")) return do_loopback_tcp();
    if (!strcmp(a, "ipc-create")) return do_ipc_create(x, y);
    if (!strcmp(a, "ptrace")) return do_ptrace(x);
    if (!strcmp(a, "umount")) return do_umount(x);
    if (!strcmp(a, "remount-rw")) return do_remount_rw(x);
    if (!strcmp(a, "nested-proc")) return do_nested_proc(x);
    if (!strcmp(a, "key-session")) return do_key_session(argc, argv);
    if (!strcmp(a, "key-user")) return do_key_user(argc, argv);
    if (!strcmp(a, "key-read")) return do_key_read(x, y);
    if (!strcmp(a, "nested")) return do_nested(argc, argv);
    if (!strcmp(a, "create-mode")) return do_create_mode(x, y);
    if (!strcmp(a, "chmod")) return do_chmod(x, y);
    if (!strcmp(a, "steal-tty")) return do_steal_tty();
    if (!strcmp(a, "pty-run")) return do_pty_run(argc, argv);
    if (!strcmp(a, "mq-create")) return do_mq_create(x);
    if (!strcmp(a, "mq")) return do_mq_open(x);
    if (!strcmp(a, "mq-unlink")) return do_mq_unlink(x);
    if (!strcmp(a, "observe-hostile")) return probe_observe_hostile(x, y);
    return -1;
}

int main(int argc, char **argv)
{
    return dispatch(argc, argv);
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rf-probe ACTION [ARG...]\n");
        return 2;
    }
    const char *a = argv[1];
    const char *x = argc > 2 ? argv[2] : "";
    const char *y = argc > 3 ? argv[3] : "";
    if (!strcmp(a, "read")) return do_read(x);
    if (!strcmp(a, "write")) return do_write(x);
    if (!strcmp(a, "connect-tcp")) return do_connect_tcp(x, y);
    if (!strcmp(a, "bind-tcp")) return do_bind_tcp(x, y);
    if (!strcmp(a, "connect-abstract")) return do_connect_abstract(x);
    if (!strcmp(a, "connect-unix")) return do_connect_unix(x);
    if (!strcmp(a, "udp-send")) return do_udp_send(x, y);
    if (!strcmp(a, "ipc")) return do_ipc_get(x, y);
    if (!strcmp(a, "tiocsti")) return do_tiocsti();
    if (!strcmp(a, "unshare-user")) return do_unshare_user();
    if (!strcmp(a, "mount-tmpfs")) return do_mount_tmpfs(x);
    if (!strcmp(a, "setuid-root")) return do_setuid_root();
    if (!strcmp(a, "status")) return do_status();
    if (!strcmp(a, "fd")) return do_open_fd(x);
    if (!strcmp(a, "kill")) return do_kill(x);
    if (!strcmp(a, "sethostname")) return do_sethostname(x);
    if (!strcmp(a, "syscall")) return probe_syscall(x);
    int rc = dispatch_security(argc, argv);
    if (rc >= 0)
        return rc;
    fprintf(stderr, "rf-probe: unknown action %s\n", a);
    return 2;
}
