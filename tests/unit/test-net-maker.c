/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network namespace the setup child joins (backend/native/net.c): made
 * by a helper beside the setup, it is a new one with lo up, never the
 * caller's; when the helper cannot make one, the join fails with the step
 * and the errno and the caller stays where it was, so the setup dies
 * before any command could run in the host's network. Each case runs in a
 * child process in a user namespace of its own (root mapped to the
 * caller), so it needs no privilege and changes nothing on the host. */
#include "tap.h"
#include "ns-helpers.h"
#include "backend/native/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's findings, sent back over a pipe. */
typedef struct {
    int setup_errno;    /* the user namespace could not be made: skip */
    int join_rc;
    int join_errno;
    char step[64];
    int moved_netns;    /* /proc/self/ns/net changed */
    int lo_up;
    int fd_left;        /* the reserved descriptor is still open */
    int helper;         /* a helper process made it */
    int fds_before, fds_after; /* open descriptors around start and join */
} findings;

/* max_netns: the user namespace's limit on network namespaces, or NULL;
 * hide_counter: /proc/sys covered, as on a kernel without ns_last_pid. */
static int enter_own_userns(const char *max_netns, bool hide_counter)
{
    if (ns_enter_userns(0, 0, 0) < 0)
        return -1;
    if (max_netns && ns_write_text("/proc/sys/user/max_net_namespaces", max_netns) < 0)
        return -1;
    if (hide_counter && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                         mount("none", "/proc/sys", "tmpfs", 0, NULL) < 0))
        return -1;
    return 0;
}

static int loopback_is_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int up = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);
    if (s >= 0)
        close(s);
    return up;
}

static void probe(const char *max_netns, bool hide_counter, findings *out)
{
    char before[64] = "", after[64] = "";
    if (enter_own_userns(max_netns, hide_counter) < 0) {
        out->setup_errno = errno ? errno : EIO;
        return;
    }
    (void)!readlink("/proc/self/ns/net", before, sizeof before - 1);
    int anchor = open("/dev/null", O_RDONLY | O_CLOEXEC);
    rf_net_maker m = { .pid = -1, .fd = -1, .pid_counter = -1 };
    rf_setup_fail f = { 0 };
    out->fds_before = tap_count_fds();
    out->join_rc = rf_net_start_namespace(&m, anchor, &f);
    int reserved = m.fd;
    out->helper = m.pid > 0;
    if (out->join_rc == 0)
        out->join_rc = rf_net_join_namespace(&m, &f);
    out->join_errno = f.errnum;
    out->fds_after = tap_count_fds();
    snprintf(out->step, sizeof out->step, "%s", f.step ? f.step : "");
    (void)!readlink("/proc/self/ns/net", after, sizeof after - 1);
    out->moved_netns = strcmp(before, after) != 0;
    out->lo_up = loopback_is_up();
    out->fd_left = reserved >= 0 && fcntl(reserved, F_GETFD) >= 0;
}

static int run_case(const char *max_netns, bool hide_counter, findings *out)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        findings r = { 0 };
        probe(max_netns, hide_counter, &r);
        (void)!write(p[1], &r, sizeof r);
        _exit(0);
    }
    close(p[1]);
    ssize_t n = read(p[0], out, sizeof *out);
    close(p[0]);
    waitpid(pid, NULL, 0);
    return n == (ssize_t)sizeof *out ? 0 : -1;
}

static void test_made_and_joined(void)
{
    findings r = { 0 };
    if (run_case(NULL, false, &r) < 0 || r.setup_errno) {
        printf("ok %d - # SKIP no user namespace here (%s)\n", ++tap_n, strerror(r.setup_errno));
        return;
    }
    is_int(r.join_rc, 0, "the helper makes a network namespace and the caller joins it");
    ok(r.helper, "(a helper process, not the caller)");
    ok(r.moved_netns, "the caller is then in a namespace other than the one it started in");
    ok(r.lo_up, "lo is up in it");
    ok(!r.fd_left, "the namespace's descriptor is closed after the join");
    is_int(r.fds_after, r.fds_before, "nothing the helper opened in our shared table is left open");
}

static void test_helper_fails_closed(void)
{
    findings r = { 0 };
    if (run_case("0", false, &r) < 0 || r.setup_errno) {
        printf("ok %d - # SKIP no user namespace limits to set here (%s)\n", ++tap_n, strerror(r.setup_errno));
        return;
    }
    is_int(r.join_rc, -1, "no network namespace may be made: the join fails");
    is_str(r.step, "network namespace", "the failure names the step");
    is_int(r.join_errno, ENOSPC, "and the kernel's reason (the namespace limit)");
    ok(!r.moved_netns, "the caller is still in its own namespace (and the setup dies there)");
}

/* Without ns_last_pid the helper would leave the command pid 3: the child
 * makes the namespace itself, in series. */
static void test_without_pid_counter(void)
{
    findings r = { 0 };
    if (run_case(NULL, true, &r) < 0 || r.setup_errno) {
        printf("ok %d - # SKIP cannot cover /proc/sys here (%s)\n", ++tap_n, strerror(r.setup_errno));
        return;
    }
    is_int(r.join_rc, 0, "no ns_last_pid: the namespace is made in series");
    ok(!r.helper, "by the caller, no helper");
    ok(r.moved_netns, "the caller is in a new namespace");
    ok(r.lo_up, "lo is up in it");
    ok(!r.fd_left, "no descriptor reserved");
}

int main(void)
{
    test_made_and_joined();
    test_helper_fails_closed();
    test_without_pid_counter();
    return done_testing();
}
