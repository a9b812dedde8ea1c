/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf-probe: run inside the sandbox by tests/security, it attempts exactly
 * one crossing per call and reports the outcome. Exit 0 and "ok" when the
 * action SUCCEEDED (the boundary did not hold), exit 1 and "denied: <errno
 * name>" when it failed, exit 2 on bad usage. Tests assert on both.
 * Actions: read, write PATH; connect-tcp, udp-send HOST PORT; connect-unix
 * PATH; connect-abstract NAME; ipc shm|msg KEY; tiocsti; unshare-user;
 * mount-tmpfs DIR; setuid-root; status; fd N; kill PID; sethostname NAME.
 * `rf-probe syscall NAME` tries one syscall the seccomp profiles filter
 * (probe-syscall.c; `rf-probe syscall list` names them all). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
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

int main(int argc, char **argv)
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
    fprintf(stderr, "rf-probe: unknown action %s\n", a);
    return 2;
}
