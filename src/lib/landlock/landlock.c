/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock through raw syscalls: no Debian library wraps them, and the
 * installed <linux/landlock.h> may predate the kernel, so the structures and
 * rights of ABI 2 to 7 are spelled out here with their kernel values. */
#include "landlock/landlock.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* Filesystem rights (ABI 1 unless noted). */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
/* TCP rights (ABI 4). */
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
/* IPC scopes (ABI 6). */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
/* landlock_restrict_self() flags (ABI 7). */
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

/* Everything ABI 1 could say about a file hierarchy. */
#define LL_FS_ABI1                                                                         \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR | \
     LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
     LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)
#define LL_FS_ALL (LL_FS_ABI1 | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
/* The rights that apply to a file itself; the kernel rejects others on a
 * non-directory rule with EINVAL. */
#define LL_FS_FILE (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ_EXEC (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

/* Kernel ABI structures, with every field known up to ABI 7. A kernel with
 * a smaller struct accepts a larger one whose extra fields are zero. */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int rf_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi >= 1)
        return (int)abi;
    /* EOPNOTSUPP: built in, but not in the lsm= list at boot. ENOSYS (or a
     * container's filter answering EPERM): not usable here at all. */
    return errno == EOPNOTSUPP ? -1 : 0;
}

/* Strip what `abi` cannot enforce from the newest set of rights, one level
 * at a time (the structure of the kernel's samples/landlock/sandboxer.c). */
static void strip_for_abi(int abi, uint64_t *fs, uint64_t *net, uint64_t *scoped, uint32_t *flags)
{
    switch (abi) {
    case 1:
        /* ABI 1 (5.13): no REFER, so renames and links across directories are
         * always denied once the ruleset handles any filesystem right. */
        *fs &= ~LL_FS_REFER;
        __attribute__((fallthrough));
    case 2:
        /* ABI 2 (5.19) added REFER; truncate(2) stays uncontrolled before 3. */
        *fs &= ~LL_FS_TRUNCATE;
        __attribute__((fallthrough));
    case 3:
        /* ABI 3 (6.2) added TRUNCATE; TCP bind/connect rules arrive in 4. */
        *net = 0;
        __attribute__((fallthrough));
    case 4:
        /* ABI 4 (6.7) added TCP rules; ioctl on devices is controlled from 5. */
        *fs &= ~LL_FS_IOCTL_DEV;
        __attribute__((fallthrough));
    case 5:
        /* ABI 5 (6.10) added IOCTL_DEV; scoping of abstract unix sockets and
         * signals arrives in 6. */
        *scoped = 0;
        __attribute__((fallthrough));
    case 6:
        /* ABI 6 (6.12) added scoping; audit-logging flags arrive in 7. */
        *flags = 0;
        __attribute__((fallthrough));
    default:
        /* ABI 7 (6.15) added the logging flags: everything above applies.
         * Newer ABIs only add rights, which this code does not ask for. */
        break;
    }
}

int rf_landlock_attr_for(const rf_landlock_request *req, int abi, rf_landlock_attr *ret,
                         rf_error **err)
{
    if (abi < 1)
        return rf_error_set(err, 0, "landlock: no ABI to build rules for");
    uint64_t fs = LL_FS_ALL;
    uint64_t net = req->restrict_tcp ? (LL_NET_BIND_TCP | LL_NET_CONNECT_TCP) : 0;
    uint64_t scoped = req->scope_ipc ? (LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL) : 0;
    uint32_t flags = req->log_denials ? LL_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
    strip_for_abi(abi, &fs, &net, &scoped, &flags);

    if (req->mode == RF_LANDLOCK_REQUIRED) {
        if (req->restrict_tcp && !net) {
            rf_error_set(err, 0, "landlock: TCP rules need Landlock ABI 4, this kernel has %d", abi);
            return rf_error_hint_set(err, "use Linux 6.7 or newer, or a backend with a network namespace");
        }
        if (req->scope_ipc && !scoped) {
            rf_error_set(err, 0, "landlock: IPC scoping needs Landlock ABI 6, this kernel has %d", abi);
            return rf_error_hint_set(err, "use Linux 6.12 or newer, or set landlock: best-effort");
        }
    }
    *ret = (rf_landlock_attr){
        .handled_fs = fs,
        .handled_net = net,
        .scoped = scoped,
        .ro_dir = LL_FS_READ_EXEC & fs,
        .rw_dir = fs,
        .ro_file = LL_FS_READ_EXEC & LL_FS_FILE & fs,
        .rw_file = LL_FS_FILE & fs,
        .restrict_flags = flags,
    };
    return 0;
}

/* Landlock missing: fine for best-effort, an error with a fix for required. */
static int unavailable(const rf_landlock_request *req, int abi, rf_error **err)
{
    if (req->mode != RF_LANDLOCK_REQUIRED)
        return 0;
    if (abi < 0) {
        rf_error_set(err, EOPNOTSUPP, "landlock: required, but disabled in this kernel");
        rf_error_hint_set(err, "add landlock to the lsm= boot parameter (e.g. "
                               "lsm=landlock,lockdown,yama,integrity,apparmor,bpf; see "
                               "/sys/kernel/security/lsm for the current list) and reboot, "
                               "or set landlock: best-effort");
        return -EOPNOTSUPP;
    }
    rf_error_set(err, ENOSYS, "landlock: required, but not available here");
    rf_error_hint_set(err, "use a kernel built with CONFIG_SECURITY_LANDLOCK=y (Linux 5.13+) "
                           "and landlock in its lsm= boot parameter; inside a container, its "
                           "seccomp profile must allow the landlock_* syscalls; or set "
                           "landlock: best-effort");
    return -ENOSYS;
}

static int add_path_rule(int ruleset_fd, const rf_landlock_rule *rule, const rf_landlock_attr *a,
                         rf_error **err)
{
    if (!rule->path || rule->path[0] != '/') {
        rf_error_set(err, EINVAL, "landlock: rule path '%s' is not absolute", rule->path ? rule->path : "");
        return -EINVAL;
    }
    _cleanup_close_ int fd = open(rule->path, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        rf_error_set(err, e, "landlock: rule %s", rule->path);
        return -e;
    }
    struct ll_path_beneath_attr pb = { .parent_fd = fd };
    if (S_ISDIR(st.st_mode))
        pb.allowed_access = rule->write ? a->rw_dir : a->ro_dir;
    else
        pb.allowed_access = rule->write ? a->rw_file : a->ro_file;
    if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
        int e = errno;
        rf_error_set(err, e, "landlock: add rule %s", rule->path);
        return -e;
    }
    return 0;
}

static int restrict_self(int ruleset_fd, uint32_t flags, rf_error **err)
{
    if (syscall(SYS_landlock_restrict_self, ruleset_fd, flags) == 0)
        return 0;
    int e = errno;
    rf_error_set(err, e, "landlock: restrict_self");
    if (e == EPERM && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
        rf_error_hint_set(err, "set PR_SET_NO_NEW_PRIVS before applying Landlock");
    return -e;
}

int rf_landlock_check(const rf_landlock_request *req, rf_error **err)
{
    if (req->mode != RF_LANDLOCK_REQUIRED)
        return 0;
    int abi = rf_landlock_abi();
    if (abi < 1)
        return unavailable(req, abi, err) < 0 ? -1 : 0;
    rf_landlock_attr a;
    return rf_landlock_attr_for(req, abi > RF_LANDLOCK_ABI_LATEST ? RF_LANDLOCK_ABI_LATEST : abi, &a,
                                err);
}

int rf_landlock_apply(const rf_landlock_request *req, int *abi_used, rf_error **err)
{
    if (abi_used)
        *abi_used = 0;
    if (req->mode == RF_LANDLOCK_OFF)
        return 0;
    if (req->n_rules > RF_LANDLOCK_MAX_RULES) {
        rf_error_set(err, E2BIG, "landlock: %zu rules, at most %d", req->n_rules, RF_LANDLOCK_MAX_RULES);
        return -E2BIG;
    }
    int abi = rf_landlock_abi();
    if (abi < 1)
        return unavailable(req, abi, err);
    if (abi > RF_LANDLOCK_ABI_LATEST)
        abi = RF_LANDLOCK_ABI_LATEST;

    rf_landlock_attr a;
    if (rf_landlock_attr_for(req, abi, &a, err) < 0)
        return -EOPNOTSUPP;
    struct ll_ruleset_attr attr = {
        .handled_access_fs = a.handled_fs,
        .handled_access_net = a.handled_net,
        .scoped = a.scoped,
    };
    _cleanup_close_ int ruleset_fd =
        (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset_fd < 0) {
        int e = errno;
        rf_error_set(err, e, "landlock: create ruleset (ABI %d)", abi);
        return -e;
    }
    /* No TCP port rule is added: with TCP handled, every bind and connect is
     * denied, which is what network: none means without a netns. */
    for (size_t i = 0; i < req->n_rules; i++) {
        int r = add_path_rule(ruleset_fd, &req->rules[i], &a, err);
        if (r < 0)
            return r;
    }
    int r = restrict_self(ruleset_fd, a.restrict_flags, err);
    if (r < 0)
        return r;
    if (abi_used)
        *abi_used = abi;
    return 0;
}
