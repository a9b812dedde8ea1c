/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf-probe syscall NAME: attempt one syscall the seccomp profiles filter,
 * with arguments that are harmless when nothing filters it (a missing path,
 * a bad fd, an invalid magic number, the probe's own memory), so that the
 * errno seen tells the filter's answer apart from the kernel's own.
 * `rf-probe syscall list` prints the names. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define MISSING "/rf-probe-missing"
#define NR_OPEN_TREE_ATTR 467 /* Linux 6.15, same number on x86_64 and arm64 */

/* Run fn in a child, so a call that changes the caller (ptrace, setsid)
 * leaves the probe alone; the child's result comes back as its exit code. */
static long in_child(long (*fn)(void))
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        long r = fn();
        _exit(r < 0 ? (errno & 0x7f) : 0);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    if (WIFSIGNALED(st)) {
        errno = EINTR;
        return -1;
    }
    if (WEXITSTATUS(st) == 0)
        return 0;
    errno = WEXITSTATUS(st);
    return -1;
}

/* clone/clone3 with raw syscalls: the child is a copy that exits at once. */
static long sc_clone(void)
{
    long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, NULL, 0);
    return r;
}

static long sc_clone3(void)
{
    struct clone_args args = { .exit_signal = SIGCHLD };
    long r = syscall(SYS_clone3, &args, sizeof args);
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, NULL, 0);
    return r;
}

static long sc_unshare(void) { return syscall(SYS_unshare, CLONE_NEWUSER); }
static long sc_mount(void) { return syscall(SYS_mount, "none", MISSING, "tmpfs", 0, NULL); }
static long sc_umount2(void) { return syscall(SYS_umount2, MISSING, 0); }
static long sc_pivot_root(void) { return syscall(SYS_pivot_root, MISSING, MISSING); }
static long sc_fsopen(void) { return syscall(SYS_fsopen, "rf-probe-nofs", 0); }
static long sc_fsconfig(void) { return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0); }
static long sc_fsmount(void) { return syscall(SYS_fsmount, -1, 0, 0); }
static long sc_fspick(void) { return syscall(SYS_fspick, AT_FDCWD, MISSING, 0); }
static long sc_move_mount(void) { return syscall(SYS_move_mount, -1, "", -1, "", 0); }
/* open_tree without OPEN_TREE_CLONE needs no privilege: it succeeds unfiltered. */
static long sc_open_tree(void) { return syscall(SYS_open_tree, AT_FDCWD, "/", O_CLOEXEC); }
static long sc_open_tree_attr(void) { return syscall(NR_OPEN_TREE_ATTR, AT_FDCWD, "/", O_CLOEXEC, NULL, 0); }
static long sc_mount_setattr(void) { return syscall(SYS_mount_setattr, -1, "", 0, NULL, 0); }
/* KEYCTL_GET_KEYRING_ID of the session keyring: succeeds unfiltered. */
static long sc_keyctl(void) { return syscall(SYS_keyctl, 0, -3, 0); }
static long sc_add_key(void) { return syscall(SYS_add_key, "rf-probe-no-type", "d", NULL, 0, -3); }
static long sc_request_key(void) { return syscall(SYS_request_key, "user", "rf-probe-none", NULL, 0); }
static long sc_bpf(void) { return syscall(SYS_bpf, -1, NULL, 0); }
static long sc_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
/* UFFD_USER_MODE_ONLY (1) is allowed unprivileged: succeeds unfiltered. */
static long sc_userfaultfd(void) { return syscall(SYS_userfaultfd, O_CLOEXEC | 1); }

static long sc_io_uring_setup(void)
{
    uint64_t params[32] = { 0 }; /* struct io_uring_params, zeroed */
    return syscall(SYS_io_uring_setup, 1, params);
}

static long sc_io_uring_enter(void) { return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0); }
static long sc_io_uring_register(void) { return syscall(SYS_io_uring_register, -1, 0, NULL, 0); }
/* Invalid flags: the kernel refuses before loading anything. */
static long sc_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL); }
static long sc_kexec_file_load(void) { return syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000UL); }
static long sc_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long sc_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long sc_delete_module(void) { return syscall(SYS_delete_module, "rf_probe_none", O_NONBLOCK); }
/* Wrong magic numbers: EINVAL even for root. */
static long sc_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); }
static long sc_swapon(void) { return syscall(SYS_swapon, MISSING, 0); }
static long sc_swapoff(void) { return syscall(SYS_swapoff, MISSING); }
static long sc_acct(void) { return syscall(SYS_acct, MISSING); }

static long sc_quotactl(void)
{
    char buf[64];
    return syscall(SYS_quotactl, (0x800004U << 8) /* QCMD(Q_GETFMT, USRQUOTA) */, MISSING, 0, buf);
}

static long sc_quotactl_fd(void) { return syscall(SYS_quotactl_fd, -1, 0, 0, NULL); }
/* SYSLOG_ACTION_SIZE_BUFFER: read-only. */
static long sc_syslog(void) { return syscall(SYS_syslog, 10, NULL, 0); }

/* Copy within the probe's own memory: succeeds unfiltered. */
static long vm_copy(long nr)
{
    char src[8] = "probe", dst[8] = "";
    struct iovec local = { dst, sizeof dst }, remote = { src, sizeof src };
    if (nr == SYS_process_vm_writev) {
        local.iov_base = src;
        remote.iov_base = dst;
    }
    return syscall(nr, getpid(), &local, 1, &remote, 1, 0);
}

static long sc_process_vm_readv(void) { return vm_copy(SYS_process_vm_readv); }
static long sc_process_vm_writev(void) { return vm_copy(SYS_process_vm_writev); }
static long sc_open_by_handle_at(void) { return syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY); }

static long sc_name_to_handle_at(void)
{
    struct {
        unsigned int bytes;
        int type;
        unsigned char h[128];
    } fh = { .bytes = 128 };
    int mount_id;
    return syscall(SYS_name_to_handle_at, AT_FDCWD, "/", &fh, &mount_id, 0);
}

/* ADDR_NO_RANDOMIZE (0x0040000), and the high-word trick on top. */
static long sc_personality(void) { return syscall(SYS_personality, 0x0040000UL); }
static long sc_personality_query(void) { return syscall(SYS_personality, 0xffffffffUL); }
static long sc_personality_high(void) { return syscall(SYS_personality, 0x100040000UL); }

/* A pty whose slave is the controlling terminal of a new session, so that
 * TIOCSTI is allowed by the kernel (as long as dev.tty.legacy_tiocsti = 1). */
static int ctty_slave(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || setsid() < 0)
        return -1;
    const char *name = ptsname(m);
    int s = name ? open(name, O_RDWR | O_CLOEXEC) : -1;
    if (s >= 0)
        ioctl(s, TIOCSCTTY, 0);
    return s;
}

static long tiocsti(void)
{
    char c = ' ';
    int s = ctty_slave();
    return s < 0 ? -1 : ioctl(s, TIOCSTI, &c);
}

/* The kernel reads the command as 32 bits: set bits above must not help. */
static long tiocsti_high(void)
{
    char c = ' ';
    int s = ctty_slave();
    return s < 0 ? -1 : syscall(SYS_ioctl, s, (1UL << 32) | TIOCSTI, &c);
}

static long tioclinux(void)
{
    char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless on a console */
    int s = ctty_slave();
    return s < 0 ? -1 : ioctl(s, TIOCLINUX, &sub);
}

static long sc_ioctl_tiocsti(void) { return in_child(tiocsti); }
static long sc_ioctl_tiocsti_high(void) { return in_child(tiocsti_high); }
static long sc_ioctl_tioclinux(void) { return in_child(tioclinux); }

static long sock(int family, int type, int proto)
{
    return socket(family, type | SOCK_CLOEXEC, proto);
}

static long sc_socket_packet(void) { return sock(AF_PACKET, SOCK_RAW, 0); }
static long sc_socket_netlink_audit(void) { return sock(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */); }
static long sc_socket_netlink_route(void) { return sock(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */); }
static long sc_socket_bluetooth(void) { return sock(AF_BLUETOOTH, SOCK_RAW, 1 /* BTPROTO_HCI */); }
static long sc_socket_key(void) { return sock(AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */); }
static long sc_socket_alg(void) { return sock(AF_ALG, SOCK_SEQPACKET, 0); }
static long sc_socket_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM, 0); }
static long sc_socket_unix(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static long sc_socket_inet(void) { return sock(AF_INET, SOCK_STREAM, 0); }
static long sc_socket_packet_high(void) { return syscall(SYS_socket, 0x100000000L | AF_PACKET, SOCK_RAW, 0); }

static long traceme(void) { return syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0); }
static long sc_ptrace(void) { return in_child(traceme); }

static long sc_pidfd_getfd(void)
{
    long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    return pidfd < 0 ? pidfd : syscall(SYS_pidfd_getfd, pidfd, 0, 0);
}

static long sc_process_madvise(void)
{
    static char page[4096] __attribute__((aligned(4096)));
    struct iovec iov = { page, sizeof page };
    long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    return pidfd < 0 ? pidfd : syscall(SYS_process_madvise, pidfd, &iov, 1, 20 /* MADV_COLD */, 0);
}

static long sc_kcmp(void) { return syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 0, 0); }
static long sc_getcwd(void)
{
    char buf[4096];
    return syscall(SYS_getcwd, buf, sizeof buf);
}

/* Other ABIs: a filter for the native table must kill these (SIGSYS). */
static long sc_x32(void)
{
#ifdef __x86_64__
    return syscall(0x40000000 | SYS_getpid);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static long sc_int80(void)
{
#ifdef __x86_64__
    long r = 20; /* getpid in the i386 table */
    /* A kernel without a 32-bit entry answers SIGSEGV: let it kill us as
     * it would any program, not AddressSanitizer's handler turn it into
     * exit 1, so the test can tell "the kernel refused" from a filter. */
    signal(SIGSEGV, SIG_DFL);
    __asm__ volatile("int $0x80" : "+a"(r) : : "memory");
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
#else
    errno = ENOSYS;
    return -1;
#endif
}

static const struct {
    const char *name;
    long (*fn)(void);
} calls[] = {
    { "unshare", sc_unshare }, { "clone", sc_clone }, { "clone3", sc_clone3 },
    { "mount", sc_mount }, { "umount2", sc_umount2 }, { "pivot_root", sc_pivot_root },
    { "fsopen", sc_fsopen }, { "fsconfig", sc_fsconfig }, { "fsmount", sc_fsmount },
    { "fspick", sc_fspick }, { "move_mount", sc_move_mount }, { "open_tree", sc_open_tree },
    { "open_tree_attr", sc_open_tree_attr }, { "mount_setattr", sc_mount_setattr },
    { "keyctl", sc_keyctl }, { "add_key", sc_add_key }, { "request_key", sc_request_key },
    { "bpf", sc_bpf }, { "perf_event_open", sc_perf_event_open }, { "userfaultfd", sc_userfaultfd },
    { "io_uring_setup", sc_io_uring_setup }, { "io_uring_enter", sc_io_uring_enter },
    { "io_uring_register", sc_io_uring_register }, { "kexec_load", sc_kexec_load },
    { "kexec_file_load", sc_kexec_file_load }, { "init_module", sc_init_module },
    { "finit_module", sc_finit_module }, { "delete_module", sc_delete_module },
    { "reboot", sc_reboot }, { "swapon", sc_swapon }, { "swapoff", sc_swapoff }, { "acct", sc_acct },
    { "quotactl", sc_quotactl }, { "quotactl_fd", sc_quotactl_fd }, { "syslog", sc_syslog },
    { "process_vm_readv", sc_process_vm_readv }, { "process_vm_writev", sc_process_vm_writev },
    { "open_by_handle_at", sc_open_by_handle_at }, { "name_to_handle_at", sc_name_to_handle_at },
    { "personality", sc_personality }, { "personality-query", sc_personality_query },
    { "personality-high", sc_personality_high },
    { "ioctl-tiocsti", sc_ioctl_tiocsti }, { "ioctl-tiocsti-high", sc_ioctl_tiocsti_high },
    { "ioctl-tioclinux", sc_ioctl_tioclinux },
    { "socket-packet", sc_socket_packet }, { "socket-packet-high", sc_socket_packet_high },
    { "socket-netlink-audit", sc_socket_netlink_audit },
    { "socket-netlink-route", sc_socket_netlink_route }, { "socket-bluetooth", sc_socket_bluetooth },
    { "socket-key", sc_socket_key }, { "socket-alg", sc_socket_alg }, { "socket-vsock", sc_socket_vsock },
    { "socket-unix", sc_socket_unix }, { "socket-inet", sc_socket_inet },
    { "ptrace", sc_ptrace }, { "pidfd_getfd", sc_pidfd_getfd }, { "process_madvise", sc_process_madvise },
    { "kcmp", sc_kcmp }, { "getcwd", sc_getcwd }, { "x32", sc_x32 }, { "int80", sc_int80 },
};

int probe_syscall(const char *name)
{
    if (!strcmp(name, "list")) {
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            puts(calls[i].name);
        return 0;
    }
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!strcmp(name, calls[i].name))
            return probe_result(calls[i].fn() < 0 ? -1 : 0);
    fprintf(stderr, "rf-probe: unknown syscall %s (see 'rf-probe syscall list')\n", name);
    return 2;
}
