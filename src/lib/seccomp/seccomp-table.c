/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The syscalls the profiles deny, in one table. Each row's reason is in
 * docs/seccomp.md; keep the two in step. */
#include "seccomp/seccomp-table.h"
#include "util/cleanup.h"

#include <errno.h>
#include <string.h>

#define DEF false /* in the default and strict profiles */
#define STRICT true /* in the strict profile only */

/* open_tree_attr (Linux 6.15) is newer than libseccomp 2.5; from syscall 424
 * on, every architecture except alpha, ia64 and mips shares one numbering. */
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || defined(__powerpc64__) || \
    defined(__s390x__) || defined(__loongarch64)
#define NR_OPEN_TREE_ATTR 467
#else
#define NR_OPEN_TREE_ATTR -1
#endif

static const rf_seccomp_rule rules[] = {
    /* Nested user namespaces: the door to capabilities over new namespaces,
     * where most unprivileged kernel exploits start. */
    { "unshare", -1, EPERM, RF_SC_ARGS_NEWUSER, DEF },
    { "clone", -1, EPERM, RF_SC_ARGS_NEWUSER, DEF },
    /* clone3 passes its flags in memory a filter cannot read: answer ENOSYS
     * so libc falls back to clone, whose flags are checked above. */
    { "clone3", -1, ENOSYS, RF_SC_ARGS_NONE, DEF },
    /* The mount family: the sandbox's view of the filesystem is fixed. */
    { "mount", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "umount2", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "pivot_root", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "fsopen", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "fsconfig", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "fsmount", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "fspick", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "move_mount", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "open_tree", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "open_tree_attr", NR_OPEN_TREE_ATTR, EPERM, RF_SC_ARGS_NONE, DEF },
    { "mount_setattr", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Kernel keyrings are not namespaced: keys of other sandboxes and of the
     * user's session would be reachable. */
    { "keyctl", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "add_key", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "request_key", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Large kernel attack surfaces an agent's commands have no use for. */
    { "bpf", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "perf_event_open", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "userfaultfd", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "io_uring_setup", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "io_uring_enter", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "io_uring_register", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Changing the running kernel or the machine. */
    { "kexec_load", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "kexec_file_load", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "init_module", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "finit_module", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "delete_module", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "reboot", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "swapon", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "swapoff", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "acct", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "quotactl", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "quotactl_fd", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Host-wide information. */
    { "syslog", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Reading and writing another process's memory without ptrace. */
    { "process_vm_readv", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "process_vm_writev", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* File handles bypass path lookup (the "shocker" container escape). */
    { "open_by_handle_at", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    { "name_to_handle_at", -1, EPERM, RF_SC_ARGS_NONE, DEF },
    /* Only PER_LINUX, PER_LINUX32 and the query pass: the other personality
     * flags switch off ASLR or make data executable. */
    { "personality", -1, EPERM, RF_SC_ARGS_PERSONALITY, DEF },
    /* Typing into the terminal of the process outside. */
    { "ioctl", -1, EPERM, RF_SC_ARGS_IOCTL_TTY, DEF },
    /* No setuid or setgid files: for a root caller the workspace is
     * idmapped, so a file the sandbox creates belongs to host root, and a
     * setuid bit on it would hand root to any host user who runs it. */
    { "chmod", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "fchmod", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "fchmodat", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "fchmodat2", 452, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "creat", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "open", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "openat", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "mknod", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    { "mknodat", -1, EPERM, RF_SC_ARGS_SETID_MODE, DEF },
    /* openat2 passes its mode in memory a filter cannot read: ENOSYS, and
     * libc and careful programs fall back to openat, checked above. */
    { "openat2", -1, ENOSYS, RF_SC_ARGS_NONE, DEF },
    /* Socket families beyond unix, IPv4, IPv6 and route netlink. */
    { "socket", -1, EAFNOSUPPORT, RF_SC_ARGS_FAMILY, DEF },
    { "socketpair", -1, EAFNOSUPPORT, RF_SC_ARGS_FAMILY, DEF },
    /* strict: no debugging or inspecting of other processes at all. */
    { "ptrace", -1, EPERM, RF_SC_ARGS_NONE, STRICT },
    { "pidfd_getfd", -1, EPERM, RF_SC_ARGS_NONE, STRICT },
    { "process_madvise", -1, EPERM, RF_SC_ARGS_NONE, STRICT },
    { "kcmp", -1, EPERM, RF_SC_ARGS_NONE, STRICT },
};

const rf_seccomp_rule *rf_seccomp_rules(size_t *n)
{
    *n = RF_ARRAY_SIZE(rules);
    return rules;
}

const rf_seccomp_rule *rf_seccomp_rule_find(const char *name)
{
    for (size_t i = 0; i < RF_ARRAY_SIZE(rules); i++)
        if (!strcmp(rules[i].name, name))
            return &rules[i];
    return NULL;
}

bool rf_seccomp_rule_in(const rf_seccomp_rule *r, rf_seccomp_profile profile)
{
    if (profile == RF_SECCOMP_OFF)
        return false;
    return !r->strict_only || profile == RF_SECCOMP_STRICT;
}

const char *rf_seccomp_rule_condition(const rf_seccomp_rule *r)
{
    switch (r->args) {
    case RF_SC_ARGS_NEWUSER:
        return " (flags & CLONE_NEWUSER)";
    case RF_SC_ARGS_PERSONALITY:
        return " (other than PER_LINUX, PER_LINUX32, 0xffffffff)";
    case RF_SC_ARGS_IOCTL_TTY:
        return " (TIOCSTI, TIOCLINUX)";
    case RF_SC_ARGS_FAMILY:
        return " (families other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK/NETLINK_ROUTE)";
    case RF_SC_ARGS_SETID_MODE:
        return " (mode & (S_ISUID|S_ISGID))";
    case RF_SC_ARGS_NONE:
        break;
    }
    return "";
}

unsigned rf_seccomp_mode_arg(const char *name)
{
    static const struct { const char *name; unsigned arg; } args[] = {
        { "chmod", 1 }, { "fchmod", 1 }, { "creat", 1 }, { "mknod", 1 },
        { "fchmodat", 2 }, { "fchmodat2", 2 }, { "open", 2 }, { "mknodat", 2 },
        { "openat", 3 },
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        if (!strcmp(args[i].name, name))
            return args[i].arg;
    return 1;
}
