/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compile the seccomp profiles with libseccomp, export them as BPF bytes,
 * and install such bytes with one syscall. */
#include "seccomp/seccomp.h"
#include "seccomp/seccomp-table.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The argument that carries clone's flags differs on s390. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG(op, mask, datum) SCMP_A1(op, mask, datum)
#else
#define CLONE_FLAGS_ARG(op, mask, datum) SCMP_A0(op, mask, datum)
#endif

_Static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10 && AF_NETLINK == 16,
               "the socket family ranges below assume Linux's numbering");

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
    if (*ctx)
        seccomp_release(*ctx);
}
#define _cleanup_seccomp_ __attribute__((cleanup(seccomp_releasep)))

/* The native number of a syscall name, or -1 if this architecture has none
 * (libseccomp answers negative pseudo numbers for foreign syscalls). */
static int resolve(const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr >= 0)
        return nr;
    const rf_seccomp_rule *r = rf_seccomp_rule_find(name);
    return r && r->fallback_nr >= 0 ? r->fallback_nr : -1;
}

int rf_seccomp_check_names(char *const *names, const char *setting, rf_error **err)
{
    size_t n = rf_strv_len(names);
    if (n > RF_SECCOMP_MAX_NAMES)
        return rf_error_set(err, 0, "%s: %zu syscall names, at most %d", setting, n,
                            RF_SECCOMP_MAX_NAMES);
    for (size_t i = 0; i < n; i++) {
        const char *s = names[i];
        size_t len = strnlen(s, RF_SECCOMP_MAX_NAME_LEN + 1);
        bool well_formed = len > 0 && len <= RF_SECCOMP_MAX_NAME_LEN &&
                           strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
        if (!well_formed || resolve(s) < 0) {
            rf_error_set(err, 0, "%s: unknown syscall '%.*s'", setting, RF_SECCOMP_MAX_NAME_LEN, s);
            return rf_error_hint_set(err, "use syscall names as in syscalls(2) for this "
                                          "architecture, e.g. getcwd or ptrace");
        }
    }
    return 0;
}

static int add_family_rules(scmp_filter_ctx ctx, int nr, int errnum, bool is_socket)
{
    /* Families are an int: any value with high bits set is >= 17 as a
     * 64-bit number, so the truncating kernel cannot be tricked past the
     * equality checks below. */
    int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 1, SCMP_A0(SCMP_CMP_GE, AF_NETLINK + 1));
    for (int f = AF_INET + 1; r == 0 && f < AF_NETLINK; f++)
        if (f != AF_INET6)
            r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 1, SCMP_A0(SCMP_CMP_EQ, f));
    /* Route netlink is what ip(8) and getifaddrs() need; the other netlink
     * protocols (audit, uevents, xfrm, netfilter...) reach kernel subsystems. */
    if (r == 0 && is_socket)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), nr, 2,
                             SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_NE, 0));
    return r;
}

static int add_rule(scmp_filter_ctx ctx, const rf_seccomp_rule *rule)
{
    int nr = resolve(rule->name);
    if (nr < 0)
        return 0; /* not on this architecture: nothing to deny */
    uint32_t act = SCMP_ACT_ERRNO(rule->errnum);
    switch (rule->args) {
    case RF_SC_ARGS_NONE:
        return seccomp_rule_add(ctx, act, nr, 0);
    case RF_SC_ARGS_NEWUSER:
        return seccomp_rule_add(ctx, act, nr, 1,
                                CLONE_FLAGS_ARG(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    case RF_SC_ARGS_IOCTL_TTY: {
        /* The kernel reads cmd as 32 bits: compare only those, or a set high
         * bit would slip TIOCSTI past the filter. */
        int r = seccomp_rule_add(ctx, act, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCSTI));
        return r ? r : seccomp_rule_add(ctx, act, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCLINUX));
    }
    case RF_SC_ARGS_FAMILY:
        return add_family_rules(ctx, nr, rule->errnum, !strcmp(rule->name, "socket"));
    case RF_SC_ARGS_SETID_MODE: {
        unsigned a = rf_seccomp_mode_arg(rule->name);
        int r = seccomp_rule_add(ctx, act, nr, 1, SCMP_CMP(a, SCMP_CMP_MASKED_EQ, S_ISUID, S_ISUID));
        return r ? r : seccomp_rule_add(ctx, act, nr, 1, SCMP_CMP(a, SCMP_CMP_MASKED_EQ, S_ISGID, S_ISGID));
    }
    case RF_SC_ARGS_PERSONALITY:
        return 0; /* an allow-list libseccomp cannot express: see personality_prefix() */
    }
    return -EINVAL;
}

/* Is the profile's row for `rule` in force under req? */
static bool row_active(const rf_seccomp_request *req, const rf_seccomp_rule *rule)
{
    return rf_seccomp_rule_in(rule, req->profile) && !rf_strv_contains(req->allow, rule->name) &&
           !rf_strv_contains(req->deny, rule->name);
}

bool rf_seccomp_denies(const rf_seccomp_request *req, const char *name)
{
    if (rf_strv_contains(req->deny, name))
        return true; /* deny wins over allow */
    const rf_seccomp_rule *rule = rf_seccomp_rule_find(name);
    return rule && rule->args == RF_SC_ARGS_NONE && row_active(req, rule);
}

static int build_ctx(const rf_seccomp_request *req, scmp_filter_ctx ctx, rf_error **err)
{
    int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (r == 0)
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* the caller sets it, in order */
    if (r < 0)
        return rf_error_set(err, -r, "seccomp: filter attributes");
    /* A binary tree of syscall numbers: every allowed call pays a few
     * comparisons instead of one per rule. Older libseccomp lacks it. */
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

    size_t n;
    const rf_seccomp_rule *rules = rf_seccomp_rules(&n);
    for (size_t i = 0; i < n; i++) {
        if (!row_active(req, &rules[i]))
            continue;
        r = add_rule(ctx, &rules[i]);
        if (r < 0)
            return rf_error_set(err, -r, "seccomp: rule for %s", rules[i].name);
    }
    /* Without a network namespace, `network: none` means no IP socket at all:
     * Landlock covers TCP only, this covers UDP, raw and ICMP sockets too.
     * The kernel reads the family as 32 bits: compare only those. */
    static const int inet[] = { AF_INET, AF_INET6 };
    for (size_t i = 0; req->deny_inet && i < RF_ARRAY_SIZE(inet); i++) {
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, (scmp_datum_t)inet[i]));
        if (r < 0)
            return rf_error_set(err, -r, "seccomp: rule for IP sockets");
    }
    for (size_t i = 0; req->deny && req->deny[i]; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || !strcmp(req->deny[i], req->deny[j]);
        if (seen)
            continue;
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), resolve(req->deny[i]), 0);
        if (r < 0)
            return rf_error_set(err, -r, "seccomp.deny: rule for %s", req->deny[i]);
    }
    return 0;
}

static int export_bpf(scmp_filter_ctx ctx, size_t reserve, void **ret, size_t *ret_len, rf_error **err)
{
    _cleanup_close_ int fd = memfd_create("rf-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "seccomp: memfd_create");
    int r = seccomp_export_bpf(ctx, fd);
    if (r < 0)
        return rf_error_set(err, -r, "seccomp: export filter");
    struct stat st;
    if (fstat(fd, &st) < 0)
        return rf_error_set(err, errno, "seccomp: export filter");
    size_t len = (size_t)st.st_size;
    if (len == 0 || len % sizeof(struct sock_filter) ||
        len / sizeof(struct sock_filter) + reserve > BPF_MAXINSNS)
        return rf_error_set(err, E2BIG, "seccomp: filter of %zu bytes", len);
    /* `reserve` instructions stay free in front for personality_prefix(). */
    size_t off = reserve * sizeof(struct sock_filter);
    _cleanup_free_ char *buf = malloc(off + len);
    if (!buf)
        return rf_error_set(err, ENOMEM, "seccomp: export filter");
    for (size_t done = 0; done < len;) {
        ssize_t k = pread(fd, buf + off + done, len - done, (off_t)done);
        if (k <= 0)
            return rf_error_set(err, k < 0 ? errno : EIO, "seccomp: read exported filter");
        done += (size_t)k;
    }
    *ret = steal_ptr(&buf);
    *ret_len = off + len;
    return 0;
}

#define PERSONALITY_PREFIX_LEN 9
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#endif

/* libseccomp allows one comparison per argument and rule, so "deny unless
 * the persona is one of three values" takes a few hand-written instructions
 * in front of its program. The kernel reads the persona as 32 bits, so only
 * the low word counts. Every other call (non-native ones too, which
 * libseccomp's program then kills) jumps to that program's first
 * instruction, index PERSONALITY_PREFIX_LEN; jump offsets count from the
 * next instruction. */
static void personality_prefix(struct sock_filter *p)
{
    const struct sock_filter prefix[PERSONALITY_PREFIX_LEN] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0, 7),
        /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 5),
        /* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0000 /* PER_LINUX */, 3, 0),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0008 /* PER_LINUX32 */, 2, 0),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff /* query */, 1, 0),
        /* 8 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    memcpy(p, prefix, sizeof prefix);
}

static bool has_names(char *const *v)
{
    return v && v[0];
}

int rf_seccomp_compile(const rf_seccomp_request *req, void **bpf, size_t *len, rf_error **err)
{
    if (rf_seccomp_check_names(req->deny, "seccomp.deny", err) < 0 ||
        rf_seccomp_check_names(req->allow, "seccomp.allow", err) < 0)
        return -1;
    if (req->profile == RF_SECCOMP_OFF && !has_names(req->deny) && !req->deny_inet) {
        *bpf = NULL;
        *len = 0;
        return 0;
    }
    _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return rf_error_set(err, ENOMEM, "seccomp: seccomp_init");
    if (build_ctx(req, ctx, err) < 0)
        return -1;
    bool prefix = row_active(req, rf_seccomp_rule_find("personality"));
    size_t reserve = prefix ? PERSONALITY_PREFIX_LEN : 0;
    void *buf = NULL;
    size_t n = 0;
    if (export_bpf(ctx, reserve, &buf, &n, err) < 0)
        return -1;
    if (prefix)
        personality_prefix(buf);
    *bpf = buf;
    *len = n;
    return 0;
}

int rf_seccomp_apply_bpf(const void *bpf, size_t len, rf_error **err)
{
    if (len == 0)
        return 0;
    if (!bpf || len % sizeof(struct sock_filter) || len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        rf_error_set(err, EINVAL, "seccomp: not a BPF program (%zu bytes)", len);
        return -EINVAL;
    }
    struct sock_fprog prog = {
        .len = (unsigned short)(len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)bpf,
    };
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
        return 0;
    /* Kernels before 3.17 only have the prctl. */
    if (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
        return 0;
    int e = errno;
    rf_error_set(err, e, "seccomp: install filter");
    if (e == EACCES)
        rf_error_hint_set(err, "set PR_SET_NO_NEW_PRIVS before installing the filter");
    else if (e == EINVAL)
        rf_error_hint_set(err, "this kernel lacks seccomp filters (CONFIG_SECCOMP_FILTER)");
    return -e;
}

int rf_seccomp_apply(const rf_seccomp_request *req, rf_error **err)
{
    _cleanup_free_ void *bpf = NULL;
    size_t len = 0;
    if (rf_seccomp_compile(req, &bpf, &len, err) < 0)
        return -EINVAL;
    return rf_seccomp_apply_bpf(bpf, len, err);
}

const char *rf_seccomp_arch_name(void)
{
#if defined(__x86_64__) && defined(__ILP32__)
    return "x32";
#elif defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__i386__)
    return "i686";
#elif defined(__arm__)
    return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return "ppc64le";
#elif defined(__s390x__)
    return "s390x";
#else
    return "unknown";
#endif
}

const char *rf_seccomp_foreign_abis(void)
{
    /* The compat entries a 64-bit kernel keeps for 32-bit programs: their
     * calls carry another AUDIT_ARCH (or, for x32, the x32 bit), which
     * SCMP_FLTATR_ACT_BADARCH answers with a kill. */
#if defined(__x86_64__) && !defined(__ILP32__)
    return "i386, x32";
#elif defined(__aarch64__)
    return "arm (AArch32)";
#elif defined(__powerpc64__)
    return "ppc (32-bit)";
#elif defined(__s390x__)
    return "s390 (31-bit)";
#else
    return "none";
#endif
}

static int push_foreign(char ***v)
{
    char *line = NULL;
    if (asprintf(&line, "other architectures' syscalls (%s): killed", rf_seccomp_foreign_abis()) < 0)
        return -1;
    return rf_strv_push_take(v, line);
}

static int push_line(char ***v, const char *name, const char *cond, int errnum)
{
    char *line = NULL;
    if (asprintf(&line, "%s%s: %s", name, cond, strerrorname_np(errnum)) < 0)
        return -1;
    return rf_strv_push_take(v, line);
}

int rf_seccomp_describe(const rf_seccomp_request *req, char ***ret, rf_error **err)
{
    if (rf_seccomp_check_names(req->deny, "seccomp.deny", err) < 0 ||
        rf_seccomp_check_names(req->allow, "seccomp.allow", err) < 0)
        return -1;
    char **v = NULL;
    int r = 0;
    size_t n;
    const rf_seccomp_rule *rules = rf_seccomp_rules(&n);
    for (size_t i = 0; r == 0 && i < n; i++)
        if (row_active(req, &rules[i]) && resolve(rules[i].name) >= 0)
            r = push_line(&v, rules[i].name, rf_seccomp_rule_condition(&rules[i]), rules[i].errnum);
    for (size_t i = 0; r == 0 && req->deny && req->deny[i]; i++)
        r = push_line(&v, req->deny[i], "", EPERM);
    if (r == 0 && req->deny_inet)
        r = push_line(&v, "socket", " (family AF_INET, AF_INET6)", EAFNOSUPPORT);
    if (r == 0 && (req->profile != RF_SECCOMP_OFF || has_names(req->deny) || req->deny_inet))
        r = push_foreign(&v);
    if (r < 0) {
        rf_strv_free(v);
        return rf_error_set(err, ENOMEM, "seccomp: describe");
    }
    if (!v && !(v = calloc(1, sizeof *v)))
        return rf_error_set(err, ENOMEM, "seccomp: describe");
    *ret = v;
    return 0;
}

static const char *const profile_names[] = {
    [RF_SECCOMP_DEFAULT] = "default",
    [RF_SECCOMP_STRICT] = "strict",
    [RF_SECCOMP_OFF] = "off",
};

const char *rf_seccomp_profile_name(rf_seccomp_profile profile)
{
    if ((unsigned)profile >= RF_ARRAY_SIZE(profile_names))
        return NULL;
    return profile_names[profile];
}

int rf_seccomp_profile_from_name(const char *name)
{
    for (size_t i = 0; i < RF_ARRAY_SIZE(profile_names); i++)
        if (name && !strcmp(name, profile_names[i]))
            return (int)i;
    return -1;
}
