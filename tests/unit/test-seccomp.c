/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seccomp profiles, applied for real: each case runs rf-probe in a child
 * under the compiled filter (compiled once here, applied after fork, as the
 * native backend does) and once without it. When the kernel alone already
 * answers what the filter would, the case is skipped: it would prove nothing. */
#include "tap.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct filter {
    void *bpf;
    size_t len;
} filter;

static void skip(const char *desc, const char *why)
{
    printf("ok %d - %s # SKIP %s\n", ++tap_n, desc, why);
}

/* Run `rf-probe syscall NAME` under f (NULL: unfiltered). Returns the wait
 * status; the probe's output lands in out. */
static int probe(const filter *f, const char *name, char *out, size_t size)
{
    int p[2];
    out[0] = 0;
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            _exit(120);
        if (f && rf_seccomp_apply_bpf(f->bpf, f->len, NULL) < 0)
            _exit(121);
        execl(RF_PROBE, "rf-probe", "syscall", name, (char *)NULL);
        _exit(122);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < size && (k = read(p[0], out + n, size - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = 0;
    close(p[0]);
    int st = -1;
    waitpid(pid, &st, 0);
    return st;
}

/* "ok", an errno name, "SIGSYS", or "exit N": how a probe run ended. */
static void outcome(const filter *f, const char *name, char *buf, size_t size)
{
    char line[256];
    int st = probe(f, name, line, sizeof line);
    char errname[64] = "?";
    if (WIFSIGNALED(st))
        snprintf(buf, size, "%s", WTERMSIG(st) == SIGSYS ? "SIGSYS" : "signal");
    else if (WEXITSTATUS(st) == 0)
        snprintf(buf, size, "ok");
    else if (WEXITSTATUS(st) == 1 && sscanf(line, "denied: %63s", errname) == 1)
        snprintf(buf, size, "%s", errname);
    else
        snprintf(buf, size, "exit %d", WEXITSTATUS(st));
}

static filter compile(rf_seccomp_profile profile, char *const *deny, char *const *allow)
{
    rf_seccomp_request req = { .profile = profile, .deny = deny, .allow = allow };
    filter f = { 0 };
    rf_error *err = NULL;
    if (rf_seccomp_compile(&req, &f.bpf, &f.len, &err) < 0) {
        printf("# compile: %s\n", rf_error_message(err));
        rf_error_free(err);
    }
    return f;
}

/* Under f, `name` must end as `want`; unfiltered it must end otherwise. */
static void expect(const filter *f, const char *label, const char *name, const char *want)
{
    char desc[256], got[64] = "", control[64] = "";
    snprintf(desc, sizeof desc, "%s: %s -> %s", label, name, want);
    outcome(NULL, name, control, sizeof control);
    if (!strcmp(want, "ok") && strcmp(control, "ok")) {
        skip(desc, "fails here even unfiltered");
        return;
    }
    if (strcmp(want, "ok") && !strcmp(control, want)) {
        skip(desc, "the kernel alone answers the same");
        return;
    }
    /* Some VM kernels have no 32-bit entry at all: int 0x80 is a SIGSEGV
     * before any filter runs, so there is nothing left to deny. */
    if (!strcmp(want, "SIGSYS") && !strcmp(control, "signal")) {
        skip(desc, "the kernel alone kills the process (no 32-bit syscall entry here)");
        return;
    }
    outcome(f, name, got, sizeof got);
    is_str(got, want, desc);
}

static const struct {
    const char *name, *want;
} default_cases[] = {
    { "unshare", "EPERM" }, { "clone", "EPERM" }, { "clone3", "ENOSYS" },
    { "mount", "EPERM" }, { "umount2", "EPERM" }, { "pivot_root", "EPERM" },
    { "fsopen", "EPERM" }, { "fsconfig", "EPERM" }, { "fsmount", "EPERM" },
    { "fspick", "EPERM" }, { "move_mount", "EPERM" }, { "open_tree", "EPERM" },
    { "open_tree_attr", "EPERM" }, { "mount_setattr", "EPERM" },
    { "keyctl", "EPERM" }, { "add_key", "EPERM" }, { "request_key", "EPERM" },
    { "bpf", "EPERM" }, { "perf_event_open", "EPERM" }, { "userfaultfd", "EPERM" },
    { "io_uring_setup", "EPERM" }, { "io_uring_enter", "EPERM" }, { "io_uring_register", "EPERM" },
    { "kexec_load", "EPERM" }, { "kexec_file_load", "EPERM" }, { "init_module", "EPERM" },
    { "finit_module", "EPERM" }, { "delete_module", "EPERM" }, { "reboot", "EPERM" },
    { "swapon", "EPERM" }, { "swapoff", "EPERM" }, { "acct", "EPERM" },
    { "quotactl", "EPERM" }, { "quotactl_fd", "EPERM" }, { "syslog", "EPERM" },
    { "process_vm_readv", "EPERM" }, { "process_vm_writev", "EPERM" },
    { "open_by_handle_at", "EPERM" }, { "name_to_handle_at", "EPERM" },
    { "personality", "EPERM" }, { "personality-high", "EPERM" }, { "personality-query", "ok" },
    { "ioctl-tiocsti", "EPERM" }, { "ioctl-tiocsti-high", "EPERM" }, { "ioctl-tioclinux", "EPERM" },
    { "socket-packet", "EAFNOSUPPORT" }, { "socket-packet-high", "EAFNOSUPPORT" },
    { "socket-netlink-audit", "EPROTONOSUPPORT" }, { "socket-netlink-route", "ok" },
    { "socket-bluetooth", "EAFNOSUPPORT" }, { "socket-key", "EAFNOSUPPORT" },
    { "socket-alg", "EAFNOSUPPORT" }, { "socket-vsock", "EAFNOSUPPORT" },
    { "socket-unix", "ok" }, { "socket-inet", "ok" },
    /* default keeps debuggers working inside */
    { "ptrace", "ok" }, { "pidfd_getfd", "ok" }, { "process_madvise", "ok" }, { "kcmp", "ok" },
    { "getcwd", "ok" },
#ifdef __x86_64__
    { "x32", "SIGSYS" }, { "int80", "SIGSYS" },
#endif
};

static void test_profiles(void)
{
    filter def = compile(RF_SECCOMP_DEFAULT, NULL, NULL);
    ok(def.bpf && def.len > 0 && def.len % 8 == 0, "default profile compiles to BPF");
    for (size_t i = 0; i < sizeof default_cases / sizeof default_cases[0]; i++)
        expect(&def, "default", default_cases[i].name, default_cases[i].want);

    filter strict = compile(RF_SECCOMP_STRICT, NULL, NULL);
    expect(&strict, "strict", "ptrace", "EPERM");
    expect(&strict, "strict", "pidfd_getfd", "EPERM");
    expect(&strict, "strict", "process_madvise", "EPERM");
    expect(&strict, "strict", "kcmp", "EPERM");
    expect(&strict, "strict", "mount", "EPERM");
    expect(&strict, "strict", "getcwd", "ok");
    free(def.bpf);
    free(strict.bpf);
}

/* Writable copies: the request takes char *const * like the policy's strv. */
static char s_getcwd[] = "getcwd", s_personality[] = "personality", s_ptrace[] = "ptrace";

static void test_lists(void)
{
    char *deny[] = { s_getcwd, s_getcwd, NULL };
    filter f = compile(RF_SECCOMP_DEFAULT, deny, NULL);
    expect(&f, "deny getcwd", "getcwd", "EPERM");
    expect(&f, "deny getcwd", "mount", "EPERM");
    free(f.bpf);

    char *allow_pers[] = { s_personality, NULL };
    f = compile(RF_SECCOMP_DEFAULT, NULL, allow_pers);
    expect(&f, "allow personality", "personality", "ok");
    expect(&f, "allow personality", "mount", "EPERM");
    free(f.bpf);

    char *allow_ptrace[] = { s_ptrace, NULL };
    f = compile(RF_SECCOMP_STRICT, NULL, allow_ptrace);
    expect(&f, "strict, allow ptrace", "ptrace", "ok");
    free(f.bpf);

    char *both[] = { s_getcwd, NULL };
    f = compile(RF_SECCOMP_DEFAULT, both, both);
    expect(&f, "deny and allow getcwd: deny wins", "getcwd", "EPERM");
    free(f.bpf);

    f = compile(RF_SECCOMP_OFF, NULL, NULL);
    ok(f.bpf == NULL && f.len == 0, "off without deny: no filter at all");
    f = compile(RF_SECCOMP_OFF, deny, NULL);
    ok(f.len > 0, "off with deny: a filter");
    expect(&f, "off + deny getcwd", "getcwd", "EPERM");
    char control[64], got[64];
    outcome(NULL, "unshare", control, sizeof control);
    outcome(&f, "unshare", got, sizeof got);
    is_str(got, control, "off + deny getcwd: unshare as unfiltered");
    free(f.bpf);
}

static void bad_name(const char *setting, const char *name, const char *desc)
{
    char *copy = strdup(name);
    char *list[] = { copy, NULL };
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT };
    if (!strcmp(setting, "seccomp.deny"))
        req.deny = list;
    else
        req.allow = list;
    void *bpf = NULL;
    size_t len = 0;
    rf_error *err = NULL;
    int r = rf_seccomp_compile(&req, &bpf, &len, &err);
    ok(r < 0 && bpf == NULL, desc);
    char want[128];
    snprintf(want, sizeof want, "%s: unknown syscall", setting);
    like(rf_error_message(err), want, "the error names the setting");
    ok(rf_error_hint(err) != NULL, "with a hint");
    rf_error_free(err);
    free(copy);
}

static void test_errors(void)
{
    bad_name("seccomp.deny", "getcwdd", "unknown name in deny is an error");
    bad_name("seccomp.allow", "no_such_call", "unknown name in allow is an error");
#ifdef __x86_64__
    bad_name("seccomp.deny", "socketcall", "a syscall of another architecture is an error");
#endif
    bad_name("seccomp.deny", "GETCWD", "upper case is not a syscall name");
    bad_name("seccomp.deny", "", "empty name is an error");
    char long_name[RF_SECCOMP_MAX_NAME_LEN + 8];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    bad_name("seccomp.deny", long_name, "overlong name is an error");

    char **many = NULL;
    for (int i = 0; i <= RF_SECCOMP_MAX_NAMES; i++)
        rf_strv_push(&many, "getcwd");
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT, .deny = many };
    void *bpf = NULL;
    size_t len = 0;
    rf_error *err = NULL;
    ok(rf_seccomp_compile(&req, &bpf, &len, &err) < 0, "too many names is an error");
    like(rf_error_message(err), "at most", "and says the limit");
    rf_error_free(err);
    rf_strv_free(many);

    err = NULL;
    is_int(rf_seccomp_apply_bpf("1234567", 7, &err), -EINVAL, "a length that is no BPF program is refused");
    rf_error_free(err);
    is_int(rf_seccomp_apply_bpf(NULL, 0, NULL), 0, "an empty program is a no-op");
}

static void *thread_main(void *arg)
{
    return arg;
}

/* glibc starts threads and posix_spawn children with clone3 and must fall
 * back to clone on the filter's ENOSYS. */
static void test_fallback(void)
{
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT };
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (rf_seccomp_apply(&req, NULL) < 0)
            _exit(2);
        pthread_t t;
        void *ret = NULL;
        if (pthread_create(&t, NULL, thread_main, (void *)1) != 0 || pthread_join(t, &ret) != 0 ||
            ret != (void *)1)
            _exit(3);
        char *argv[] = { (char *)"rf-probe", (char *)"syscall", (char *)"getcwd", NULL };
        pid_t child;
        int st;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        if (posix_spawn(&child, RF_PROBE, &fa, NULL, argv, NULL) != 0 || waitpid(child, &st, 0) < 0 ||
            !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            _exit(4);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    is_int(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), 0,
           "threads and posix_spawn work under the filter (clone3 falls back to clone)");
}

static void test_apply_and_describe(void)
{
    char *deny[] = { s_getcwd, NULL };
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT, .deny = deny };
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (rf_seccomp_apply(&req, NULL) < 0)
            _exit(2);
        char buf[256];
        _exit(syscall(SYS_getcwd, buf, sizeof buf) < 0 && errno == EPERM ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rf_seccomp_apply: getcwd denied in the child");

    char **lines = NULL;
    ok(rf_seccomp_describe(&req, &lines, NULL) == 0, "describe");
    ok(rf_strv_contains(lines, "mount: EPERM"), "describe lists mount: EPERM");
    ok(rf_strv_contains(lines, "clone3: ENOSYS"), "describe lists clone3: ENOSYS");
    ok(rf_strv_contains(lines, "getcwd: EPERM"), "describe lists the deny list");
    ok(!rf_strv_contains(lines, "ptrace: EPERM"), "default leaves ptrace");
    rf_strv_free(lines);
    req = (rf_seccomp_request){ .profile = RF_SECCOMP_STRICT };
    ok(rf_seccomp_describe(&req, &lines, NULL) == 0 && rf_strv_contains(lines, "ptrace: EPERM"),
       "strict denies ptrace");
    rf_strv_free(lines);
    req = (rf_seccomp_request){ .profile = RF_SECCOMP_OFF };
    ok(rf_seccomp_describe(&req, &lines, NULL) == 0 && lines && !lines[0], "off describes nothing");
    rf_strv_free(lines);

    for (int p = RF_SECCOMP_DEFAULT; p <= RF_SECCOMP_OFF; p++)
        is_int(rf_seccomp_profile_from_name(rf_seccomp_profile_name(p)), p, "profile name round trip");
    is_int(rf_seccomp_profile_from_name("loose"), -1, "unknown profile name");
}

int main(void)
{
    test_profiles();
    test_lists();
    test_errors();
    test_apply_and_describe();
    test_fallback();
    return done_testing();
}
