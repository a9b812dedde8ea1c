/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seccomp profile as OCI runtime-spec JSON (linux.seccomp), for
 * `ringfence export oci` and the Localhost profile of `export k8s`.
 *
 * It is written from the same table as the BPF filter (seccomp-table.c), so
 * both deny the same calls. Two differences, both because OCI's rule format
 * is less expressive than hand-written BPF, and both stricter:
 * - personality: the BPF filter lets PER_LINUX, PER_LINUX32 and the query
 *   0xffffffff through; OCI rules cannot express "none of these values", so
 *   every persona with a flag bit other than PER_LINUX32's is refused, the
 *   query included.
 * - syscalls this libseccomp does not know (open_tree_attr) are listed by
 *   name; a runtime whose libseccomp knows them denies them, an older one
 *   ignores the name, as runc and crun do. */
#include "seccomp/seccomp.h"
#include "seccomp/seccomp-table.h"
#include "util/strv.h"

#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* The argument that carries clone's flags differs on s390. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_INDEX 1
#else
#define CLONE_FLAGS_INDEX 0
#endif

static const char *native_arch(void)
{
#if defined(__x86_64__)
    return "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
    return "SCMP_ARCH_AARCH64";
#elif defined(__riscv) && __riscv_xlen == 64
    return "SCMP_ARCH_RISCV64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return "SCMP_ARCH_PPC64LE";
#elif defined(__s390x__)
    return "SCMP_ARCH_S390X";
#elif defined(__i386__)
    return "SCMP_ARCH_X86";
#elif defined(__arm__)
    return "SCMP_ARCH_ARM";
#else
    return NULL;
#endif
}

/* One condition: (arg[index] & mask) == datum, or another op with value. */
static json_t *cond(unsigned index, const char *op, json_int_t value, json_int_t value_two)
{
    json_t *c = json_pack("{s:i, s:I, s:s}", "index", (int)index, "value", value, "op", op);
    if (!strcmp(op, "SCMP_CMP_MASKED_EQ"))
        json_object_set_new(c, "valueTwo", json_integer(value_two));
    return c;
}

static void add_entry(json_t *syscalls, const char *name, int errnum, json_t *args)
{
    json_t *e = json_pack("{s:[s], s:s, s:i}", "names", name, "action", "SCMP_ACT_ERRNO", "errnoRet", errnum);
    if (args)
        json_object_set_new(e, "args", args);
    json_array_append_new(syscalls, e);
}

static void add_masked(json_t *syscalls, const char *name, int errnum, unsigned index, json_int_t mask,
                       json_int_t datum)
{
    add_entry(syscalls, name, errnum, json_pack("[o]", cond(index, "SCMP_CMP_MASKED_EQ", mask, datum)));
}

/* Mirrors add_family_rules() in seccomp.c. */
static void add_family(json_t *syscalls, const char *name, int errnum)
{
    add_entry(syscalls, name, errnum, json_pack("[o]", cond(0, "SCMP_CMP_GE", AF_NETLINK + 1, 0)));
    for (int f = AF_INET + 1; f < AF_NETLINK; f++)
        if (f != AF_INET6)
            add_entry(syscalls, name, errnum, json_pack("[o]", cond(0, "SCMP_CMP_EQ", f, 0)));
    if (!strcmp(name, "socket"))
        add_entry(syscalls, name, EPROTONOSUPPORT,
                  json_pack("[o, o]", cond(0, "SCMP_CMP_EQ", AF_NETLINK, 0), cond(2, "SCMP_CMP_NE", 0, 0)));
}

static void add_rule(json_t *syscalls, json_t *plain, const rf_seccomp_rule *r)
{
    switch (r->args) {
    case RF_SC_ARGS_NONE:
        /* Whole-syscall denials are grouped by errno in `plain`. */
        json_array_append_new(json_object_get(plain, r->errnum == ENOSYS ? "enosys" : "eperm"),
                              json_string(r->name));
        return;
    case RF_SC_ARGS_NEWUSER:
        add_masked(syscalls, r->name, r->errnum, CLONE_FLAGS_INDEX, CLONE_NEWUSER, CLONE_NEWUSER);
        return;
    case RF_SC_ARGS_IOCTL_TTY:
        add_masked(syscalls, r->name, r->errnum, 1, 0xffffffffLL, TIOCSTI);
        add_masked(syscalls, r->name, r->errnum, 1, 0xffffffffLL, TIOCLINUX);
        return;
    case RF_SC_ARGS_FAMILY:
        add_family(syscalls, r->name, r->errnum);
        return;
    case RF_SC_ARGS_SETID_MODE: {
        unsigned a = rf_seccomp_mode_arg(r->name);
        add_masked(syscalls, r->name, r->errnum, a, S_ISUID, S_ISUID);
        add_masked(syscalls, r->name, r->errnum, a, S_ISGID, S_ISGID);
        return;
    }
    case RF_SC_ARGS_PERSONALITY:
        for (unsigned bit = 0; bit < 32; bit++)
            if (bit != 3) /* PER_LINUX32 = 0x0008 */
                add_masked(syscalls, r->name, r->errnum, 0, 1LL << bit, 1LL << bit);
        return;
    }
}

static void add_names(json_t *syscalls, json_t *names, int errnum)
{
    if (json_array_size(names) == 0)
        return;
    json_array_append_new(syscalls, json_pack("{s:O, s:s, s:i}", "names", names, "action", "SCMP_ACT_ERRNO",
                                              "errnoRet", errnum));
}

json_t *rf_seccomp_to_oci(const rf_seccomp_request *req)
{
    if (req->profile == RF_SECCOMP_OFF && !req->deny && !req->deny_inet)
        return json_null();
    json_t *syscalls = json_array();
    json_t *plain = json_pack("{s:[], s:[]}", "eperm", "enosys");
    size_t n;
    const rf_seccomp_rule *rules = rf_seccomp_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (rf_seccomp_rule_in(&rules[i], req->profile) && !rf_strv_contains(req->allow, rules[i].name) &&
            !rf_strv_contains(req->deny, rules[i].name))
            add_rule(syscalls, plain, &rules[i]);
    for (size_t i = 0; req->deny && req->deny[i]; i++) /* deny wins over allow */
        if (!rf_strv_contains(req->deny + i + 1, req->deny[i]))
            json_array_append_new(json_object_get(plain, "eperm"), json_string(req->deny[i]));
    if (req->deny_inet) {
        add_masked(syscalls, "socket", EAFNOSUPPORT, 0, 0xffffffffLL, AF_INET);
        add_masked(syscalls, "socket", EAFNOSUPPORT, 0, 0xffffffffLL, AF_INET6);
    }
    add_names(syscalls, json_object_get(plain, "eperm"), EPERM);
    add_names(syscalls, json_object_get(plain, "enosys"), ENOSYS);
    json_decref(plain);

    json_t *o = json_pack("{s:s, s:[], s:o}", "defaultAction", "SCMP_ACT_ALLOW", "architectures", "syscalls",
                          syscalls);
    /* Only the native ABI: the runtime's filter kills calls of any other
     * (i386 through int 0x80, x32), as ringfence's own filter does. */
    if (native_arch())
        json_array_append_new(json_object_get(o, "architectures"), json_string(native_arch()));
    return o;
}
