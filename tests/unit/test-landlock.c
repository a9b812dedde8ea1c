/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock, applied for real: every check restricts a forked child, which
 * then attempts one access and exits with 0 or the errno it got. The ABI
 * stripping is tested as a pure function for every level. */
#include "tap.h"
#include "landlock/landlock.h"
#include "util/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define APPLY_FAILED 200

static char root[64];
static char p_ro[128], p_rw[128], p_out[128], p_file_ro[128], p_file_rw[128];
static int tcp_port;
static char abstract_name[64];

static void skip(const char *desc, const char *why)
{
    printf("ok %d - %s # SKIP %s\n", ++tap_n, desc, why);
}

typedef int (*op_fn)(const char *arg);

/* Fork; in the child set no_new_privs, apply req, run op(arg) and exit with
 * its result (0 or an errno). */
static int in_domain(const rf_landlock_request *req, op_fn op, const char *arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (rf_landlock_apply(req, NULL, NULL) < 0)
            _exit(APPLY_FAILED);
        _exit(op(arg));
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int res(int r) { return r < 0 ? errno : 0; }

static int op_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    return fd < 0 ? errno : (close(fd), unlink(path), 0);
}

static int op_write(const char *path) { return res(open(path, O_WRONLY | O_CLOEXEC)); }
static int op_read(const char *path) { return res(open(path, O_RDONLY | O_CLOEXEC)); }
static int op_truncate(const char *path) { return res(truncate(path, 0)); }
static int op_mkdir(const char *path) { return res(mkdir(path, 0755)); }

static int op_rename(const char *dir)
{
    char a[300], b[300], d1[256], d2[256];
    snprintf(d1, sizeof d1, "%s/d1", dir);
    snprintf(d2, sizeof d2, "%s/d2", dir);
    snprintf(a, sizeof a, "%s/f", d1);
    snprintf(b, sizeof b, "%s/f", d2);
    if (mkdir(d1, 0755) < 0 || mkdir(d2, 0755) < 0)
        return errno;
    int fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    close(fd);
    int r = res(rename(a, b)); /* across directories: needs REFER */
    unlink(a), unlink(b), rmdir(d1), rmdir(d2);
    return r;
}

static int op_tcp(const char *what)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (!strcmp(what, "connect")) {
        sa.sin_port = htons((uint16_t)tcp_port);
        return res(connect(s, (struct sockaddr *)&sa, sizeof sa));
    }
    return res(bind(s, (struct sockaddr *)&sa, sizeof sa));
}

static int op_abstract(const char *name)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t n = strlen(name);
    memcpy(sa.sun_path + 1, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    return res(connect(s, (struct sockaddr *)&sa, len));
}

static int op_signal_parent(const char *unused) { return res(kill(getppid(), 0)); }

static void write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write(fd, "x\n", 2) < 0)
            perror(path);
        close(fd);
    }
}

static void setup_tree(void)
{
    snprintf(root, sizeof root, "/tmp/rf-landlock.XXXXXX");
    if (!mkdtemp(root))
        abort();
    snprintf(p_ro, sizeof p_ro, "%s/ro", root);
    snprintf(p_rw, sizeof p_rw, "%s/rw", root);
    snprintf(p_out, sizeof p_out, "%s/out", root);
    snprintf(p_file_ro, sizeof p_file_ro, "%s/out/single-ro", root);
    snprintf(p_file_rw, sizeof p_file_rw, "%s/out/single-rw", root);
    mkdir(p_ro, 0755), mkdir(p_rw, 0755), mkdir(p_out, 0755);
    char f[200];
    snprintf(f, sizeof f, "%s/file", p_ro);
    write_file(f);
    snprintf(f, sizeof f, "%s/file", p_out);
    write_file(f);
    write_file(p_file_ro);
    write_file(p_file_rw);
}

static void teardown_tree(void)
{
    const char *files[] = { "ro/file", "out/file", "out/single-ro", "out/single-rw" };
    char f[200];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(f, sizeof f, "%s/%s", root, files[i]);
        unlink(f);
    }
    rmdir(p_ro), rmdir(p_rw), rmdir(p_out), rmdir(root);
}

static void check(const rf_landlock_request *req, op_fn op, const char *arg, int want, const char *desc)
{
    is_int(in_domain(req, op, arg), want, desc);
}

static void test_filesystem(int abi)
{
    rf_landlock_rule rules[] = { { p_ro, false }, { p_rw, true } };
    rf_landlock_request req = { .rules = rules, .n_rules = 2, .mode = RF_LANDLOCK_REQUIRED };
    char in_rw[200], in_ro[200], ro_file[200], in_out[200], out_file[200], sub[200];
    snprintf(in_rw, sizeof in_rw, "%s/new", p_rw);
    snprintf(in_ro, sizeof in_ro, "%s/new", p_ro);
    snprintf(ro_file, sizeof ro_file, "%s/file", p_ro);
    snprintf(in_out, sizeof in_out, "%s/new", p_out);
    snprintf(out_file, sizeof out_file, "%s/file", p_out);
    snprintf(sub, sizeof sub, "%s/sub", p_rw);

    check(&req, op_create, in_rw, 0, "create beneath a writable rule");
    check(&req, op_mkdir, sub, 0, "mkdir beneath a writable rule");
    rmdir(sub);
    check(&req, op_create, in_out, EACCES, "create outside every rule: EACCES");
    check(&req, op_write, out_file, EACCES, "write outside every rule: EACCES");
    check(&req, op_read, out_file, EACCES, "read outside every rule: EACCES");
    check(&req, op_read, ro_file, 0, "read beneath a read-only rule");
    check(&req, op_read, p_ro, 0, "list a read-only directory");
    check(&req, op_write, ro_file, EACCES, "write beneath a read-only rule: EACCES");
    check(&req, op_create, in_ro, EACCES, "create beneath a read-only rule: EACCES");
    if (abi >= 3)
        check(&req, op_truncate, ro_file, EACCES, "truncate beneath a read-only rule: EACCES (ABI 3)");
    else
        skip("truncate beneath a read-only rule", "needs Landlock ABI 3");
    if (abi >= 2)
        check(&req, op_rename, p_rw, 0, "rename across directories beneath a writable rule (ABI 2)");
    else
        skip("rename across directories", "needs Landlock ABI 2");

    rf_landlock_rule file_rules[] = { { p_file_ro, false }, { p_file_rw, true } };
    rf_landlock_request freq = { .rules = file_rules, .n_rules = 2, .mode = RF_LANDLOCK_REQUIRED };
    check(&freq, op_read, p_file_ro, 0, "a rule on a file: read");
    check(&freq, op_write, p_file_ro, EACCES, "a read-only rule on a file: write EACCES");
    check(&freq, op_write, p_file_rw, 0, "a writable rule on a file: write (file rights only)");
    check(&freq, op_read, out_file, EACCES, "a rule on a file grants nothing beside it");
    check(&freq, op_write, "/dev/null", EACCES, "/dev/null without a rule: EACCES");
    rf_landlock_rule dev_rules[] = { { "/dev/null", true }, { "/dev/zero", false } };
    rf_landlock_request dreq = { .rules = dev_rules, .n_rules = 2, .mode = RF_LANDLOCK_REQUIRED };
    check(&dreq, op_write, "/dev/null", 0, "a writable rule on a character device: write /dev/null");
    check(&dreq, op_read, "/dev/zero", 0, "a read-only rule on a character device: read /dev/zero");

    int used = -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        _exit(rf_landlock_apply(&req, &used, NULL) < 0 ? 255 : used);
    }
    int st;
    waitpid(pid, &st, 0);
    is_int(WEXITSTATUS(st), abi > RF_LANDLOCK_ABI_LATEST ? RF_LANDLOCK_ABI_LATEST : abi,
           "abi_used reports the enforced ABI");
}

static void test_network_and_scope(int abi)
{
    rf_landlock_rule all[] = { { "/", true } };
    rf_landlock_request open_net = { .rules = all, .n_rules = 1, .mode = RF_LANDLOCK_REQUIRED };
    rf_landlock_request no_net = open_net;
    no_net.restrict_tcp = true;
    if (abi >= 4) {
        check(&open_net, op_tcp, "connect", 0, "TCP connect to a local listener without restrict_tcp");
        check(&no_net, op_tcp, "connect", EACCES, "restrict_tcp: connect EACCES (ABI 4)");
        check(&no_net, op_tcp, "bind", EACCES, "restrict_tcp: bind EACCES (ABI 4)");
    } else {
        skip("restrict_tcp", "needs Landlock ABI 4");
    }

    rf_landlock_request scoped = open_net;
    scoped.scope_ipc = true;
    if (abi >= 6) {
        check(&open_net, op_abstract, abstract_name, 0, "abstract unix connect out of the domain unscoped");
        check(&scoped, op_abstract, abstract_name, EPERM, "scope_ipc: abstract unix connect EPERM (ABI 6)");
        check(&open_net, op_signal_parent, NULL, 0, "signal to the parent unscoped");
        check(&scoped, op_signal_parent, NULL, EPERM, "scope_ipc: signal to the parent EPERM (ABI 6)");
    } else {
        skip("scope_ipc", "needs Landlock ABI 6");
    }
}

/* Apply in a child and hand back the error text ("message\nhint"). */
static int apply_error(const rf_landlock_request *req, char *msg, size_t size, void (*pre)(void))
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (pre)
            pre();
        rf_error *err = NULL;
        int used = -1;
        int r = rf_landlock_apply(req, &used, &err);
        dprintf(p[1], "%s\n%s\nabi_used=%d", err ? rf_error_message(err) : "",
                err && rf_error_hint(err) ? rf_error_hint(err) : "", used);
        _exit(r < 0 ? -r : 0);
    }
    close(p[1]);
    ssize_t n = read(p[0], msg, size - 1);
    msg[n > 0 ? n : 0] = 0;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* Make the Landlock syscalls fail as they do on a kernel without Landlock
 * (ENOSYS) or with it left out of lsm= (EOPNOTSUPP), as a container's
 * seccomp profile can. */
static void filter_landlock(int errnum)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), SCMP_SYS(landlock_create_ruleset), 0);
    if (seccomp_load(ctx) < 0)
        _exit(250);
    seccomp_release(ctx);
}
static void no_landlock(void) { filter_landlock(ENOSYS); }
static void disabled_landlock(void) { filter_landlock(EOPNOTSUPP); }

static void drop_caps(void)
{
    cap_t none = cap_init();
    cap_set_proc(none);
    cap_free(none);
}

static void test_modes_and_errors(void)
{
    char msg[1024];
    char in_out[200];
    snprintf(in_out, sizeof in_out, "%s/new", p_out);
    rf_landlock_rule rules[] = { { p_rw, true } };
    rf_landlock_request off = { .rules = rules, .n_rules = 1, .mode = RF_LANDLOCK_OFF };
    check(&off, op_create, in_out, 0, "mode off restricts nothing");

    rf_landlock_request req = { .rules = rules, .n_rules = 1, .mode = RF_LANDLOCK_REQUIRED };
    is_int(apply_error(&req, msg, sizeof msg, no_landlock), ENOSYS, "required without Landlock fails");
    like(msg, "landlock: required, but not available", "and says so");
    like(msg, "lsm=", "with a hint on the lsm= boot parameter");
    is_int(apply_error(&req, msg, sizeof msg, disabled_landlock), EOPNOTSUPP,
           "required with Landlock disabled at boot fails");
    like(msg, "add landlock to the lsm= boot parameter", "with the lsm= hint");
    req.mode = RF_LANDLOCK_BEST_EFFORT;
    is_int(apply_error(&req, msg, sizeof msg, no_landlock), 0, "best-effort without Landlock succeeds");
    like(msg, "abi_used=0", "and reports ABI 0");

    rf_landlock_rule missing[] = { { "/nonexistent-rf-landlock", false } };
    req = (rf_landlock_request){ .rules = missing, .n_rules = 1, .mode = RF_LANDLOCK_BEST_EFFORT };
    is_int(apply_error(&req, msg, sizeof msg, NULL), ENOENT, "a missing rule path fails");
    like(msg, "landlock: rule /nonexistent-rf-landlock", "naming the path");
    rf_landlock_rule relative[] = { { "tmp", false } };
    req.rules = relative;
    is_int(apply_error(&req, msg, sizeof msg, NULL), EINVAL, "a relative rule path fails");
    req.n_rules = RF_LANDLOCK_MAX_RULES + 1;
    is_int(apply_error(&req, msg, sizeof msg, NULL), E2BIG, "too many rules fail");

    if (geteuid() == 0) {
        /* Without CAP_SYS_ADMIN, no_new_privs is what the kernel wants. */
        req = (rf_landlock_request){ .rules = rules, .n_rules = 1, .mode = RF_LANDLOCK_REQUIRED };
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            drop_caps();
            rf_error *err = NULL;
            int r = rf_landlock_apply(&req, NULL, &err);
            _exit(r == -EPERM && rf_error_hint(err) && strstr(rf_error_hint(err), "NO_NEW_PRIVS") ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "without no_new_privs: EPERM and a hint");
    } else {
        skip("without no_new_privs", "needs root to drop capabilities");
    }
}

/* Kernel UAPI values, spelled out so the test does not share the code's. */
static void test_abi_stripping(void)
{
    rf_landlock_request all = { .restrict_tcp = true, .scope_ipc = true, .log_denials = true,
                                .mode = RF_LANDLOCK_BEST_EFFORT };
    const struct {
        int abi;
        uint64_t fs, net, scoped;
        uint32_t flags;
    } want[] = {
        { 1, 0x1fff, 0, 0, 0 },      { 2, 0x3fff, 0, 0, 0 }, { 3, 0x7fff, 0, 0, 0 },
        { 4, 0x7fff, 0x3, 0, 0 },    { 5, 0xffff, 0x3, 0, 0 }, { 6, 0xffff, 0x3, 0x3, 0 },
        { 7, 0xffff, 0x3, 0x3, 0x2 }, { 9, 0xffff, 0x3, 0x3, 0x2 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        rf_landlock_attr a;
        char d[128];
        int r = rf_landlock_attr_for(&all, want[i].abi, &a, NULL);
        snprintf(d, sizeof d, "ABI %d: fs %#llx net %#llx scoped %#llx flags %#x", want[i].abi,
                 (unsigned long long)want[i].fs, (unsigned long long)want[i].net,
                 (unsigned long long)want[i].scoped, want[i].flags);
        ok(r == 0 && a.handled_fs == want[i].fs && a.handled_net == want[i].net &&
               a.scoped == want[i].scoped && a.restrict_flags == want[i].flags,
           d);
    }
    rf_landlock_attr a;
    rf_landlock_attr_for(&all, 5, &a, NULL);
    is_int(a.ro_dir, 0xd, "read-only directory: execute, read file, read dir");
    is_int(a.ro_file, 0x5, "read-only file: execute, read file");
    is_int(a.rw_file, 0xc007, "writable file: file rights only (ABI 5)");
    is_int(a.rw_dir, 0xffff, "writable directory: everything handled");
    rf_landlock_attr_for(&all, 1, &a, NULL);
    is_int(a.rw_file, 0x7, "writable file at ABI 1: no truncate, no ioctl");

    rf_landlock_request none = { .mode = RF_LANDLOCK_REQUIRED };
    ok(rf_landlock_attr_for(&none, 4, &a, NULL) == 0 && a.handled_net == 0 && a.scoped == 0,
       "nothing asked: no TCP rules, no scoping");
    rf_error *err = NULL;
    rf_landlock_request req_tcp = { .restrict_tcp = true, .mode = RF_LANDLOCK_REQUIRED };
    ok(rf_landlock_attr_for(&req_tcp, 3, &a, &err) < 0, "required TCP rules at ABI 3: error");
    like(rf_error_message(err), "ABI 4", "naming the ABI needed");
    rf_error_free(err);
    err = NULL;
    rf_landlock_request req_scope = { .scope_ipc = true, .mode = RF_LANDLOCK_REQUIRED };
    ok(rf_landlock_attr_for(&req_scope, 5, &a, &err) < 0, "required scoping at ABI 5: error");
    rf_error_free(err);
    ok(rf_landlock_attr_for(&all, 0, &a, NULL) < 0, "ABI 0: error");
}

int main(void)
{
    test_abi_stripping();
    int abi = rf_landlock_abi();
    if (abi < 1) {
        skip("Landlock enforcement", "Landlock is not available on this kernel");
        return done_testing();
    }
    printf("# Landlock ABI %d\n", abi);
    setup_tree();

    int lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    bind(lsock, (struct sockaddr *)&sa, sizeof sa);
    listen(lsock, 16);
    getsockname(lsock, (struct sockaddr *)&sa, &sl);
    tcp_port = ntohs(sa.sin_port);

    snprintf(abstract_name, sizeof abstract_name, "rf-landlock-test-%d", getpid());
    int usock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un su = { .sun_family = AF_UNIX };
    memcpy(su.sun_path + 1, abstract_name, strlen(abstract_name));
    bind(usock, (struct sockaddr *)&su,
         (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name)));
    listen(usock, 16);

    test_filesystem(abi);
    test_network_and_scope(abi);
    test_modes_and_errors();
    close(lsock);
    close(usock);
    teardown_tree();
    return done_testing();
}
