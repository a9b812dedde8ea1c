/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seccomp filter on every architecture it is built for: a call that
 * carries another architecture's AUDIT_ARCH (a 64-bit kernel's compat
 * entries: i386 on x86_64, AArch32 on arm64), or x32's bit, kills the
 * process, whatever its number; the native calls are judged as the profile
 * says. The compiled program is run here by a small classic-BPF interpreter
 * over made-up seccomp_data, so the check needs no 32-bit entry in the
 * kernel (test-seccomp.c runs the real int 0x80 and x32 calls where there
 * is one) and runs on each architecture of the host matrix. */
#include "tap.h"
#include "seccomp/seccomp.h"
#include "util/error.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define NATIVE AUDIT_ARCH_S390X
#else
#error "no AUDIT_ARCH for this architecture in test-seccomp-arch.c"
#endif

#define BAD 0xdeadbeefU /* the interpreter met an instruction it does not know */

static uint32_t load(const struct seccomp_data *d, uint32_t off)
{
    uint32_t v = BAD;
    if (off + 4 <= sizeof *d && off % 4 == 0)
        memcpy(&v, (const char *)d + off, 4);
    return v;
}

static bool jump_taken(const struct sock_filter *f, uint32_t a, uint32_t x)
{
    uint32_t k = BPF_SRC(f->code) == BPF_X ? x : f->k;
    switch (BPF_OP(f->code)) {
    case BPF_JEQ: return a == k;
    case BPF_JGT: return a > k;
    case BPF_JGE: return a >= k;
    case BPF_JSET: return (a & k) != 0;
    }
    return false;
}

static uint32_t alu(uint16_t code, uint32_t a, uint32_t k)
{
    switch (BPF_OP(code)) {
    case BPF_AND: return a & k;
    case BPF_OR: return a | k;
    case BPF_ADD: return a + k;
    case BPF_SUB: return a - k;
    case BPF_LSH: return k < 32 ? a << k : 0;
    case BPF_RSH: return k < 32 ? a >> k : 0;
    case BPF_NEG: return -a;
    }
    return BAD;
}

/* What the program returns for d (SECCOMP_RET_*), or BAD. The kernel's
 * checker guarantees forward jumps only, so the loop ends. */
static uint32_t run_bpf(const struct sock_filter *p, size_t n, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
    for (size_t pc = 0; pc < n; pc++) {
        const struct sock_filter *f = &p[pc];
        switch (BPF_CLASS(f->code)) {
        case BPF_LD:
            a = BPF_MODE(f->code) == BPF_ABS ? load(d, f->k) : BPF_MODE(f->code) == BPF_IMM ? f->k
                : BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS ? mem[f->k] : BAD;
            break;
        case BPF_LDX:
            x = BPF_MODE(f->code) == BPF_IMM ? f->k : f->k < BPF_MEMWORDS ? mem[f->k] : BAD;
            break;
        case BPF_ST:
        case BPF_STX:
            if (f->k >= BPF_MEMWORDS)
                return BAD;
            mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
            break;
        case BPF_ALU:
            a = alu(f->code, a, BPF_SRC(f->code) == BPF_X ? x : f->k);
            break;
        case BPF_JMP:
            if (BPF_OP(f->code) == BPF_JA)
                pc += f->k;
            else
                pc += jump_taken(f, a, x) ? f->jt : f->jf;
            break;
        case BPF_RET:
            return BPF_RVAL(f->code) == BPF_A ? a : f->k;
        case BPF_MISC:
            if (BPF_MISCOP(f->code) == BPF_TAX)
                x = a;
            else
                a = x;
            break;
        default:
            return BAD;
        }
    }
    return BAD; /* fell off the end: the kernel would refuse the program */
}

static uint32_t verdict(const void *bpf, size_t len, uint32_t arch, uint32_t nr)
{
    struct seccomp_data d = { .nr = (int)nr, .arch = arch };
    return run_bpf(bpf, len / sizeof(struct sock_filter), &d) & SECCOMP_RET_ACTION_FULL;
}

static const struct {
    const char *name;
    uint32_t arch;
} arches[] = {
    { "x86_64", AUDIT_ARCH_X86_64 }, { "i386", AUDIT_ARCH_I386 }, { "aarch64", AUDIT_ARCH_AARCH64 },
    { "arm", AUDIT_ARCH_ARM }, { "riscv64", AUDIT_ARCH_RISCV64 }, { "ppc64le", AUDIT_ARCH_PPC64LE },
    { "ppc", AUDIT_ARCH_PPC }, { "s390x", AUDIT_ARCH_S390X }, { "s390", AUDIT_ARCH_S390 },
    { "mips", AUDIT_ARCH_MIPS }, { "0x12345678 (made up)", 0x12345678 },
};

/* denied: a native call the profile answers with an errno. */
static void check_profile(const char *label, rf_seccomp_profile profile, char *const *deny, const char *denied,
                          uint32_t denied_nr)
{
    rf_seccomp_request req = { .profile = profile, .deny = deny };
    void *bpf = NULL;
    size_t len = 0;
    rf_error *err = NULL;
    char desc[200];
    if (rf_seccomp_compile(&req, &bpf, &len, &err) < 0) {
        snprintf(desc, sizeof desc, "%s: compiles (%s)", label, rf_error_message(err));
        ok(0, desc);
        rf_error_free(err);
        return;
    }
    snprintf(desc, sizeof desc, "%s: a native getpid is allowed", label);
    is_int(verdict(bpf, len, NATIVE, SYS_getpid), SECCOMP_RET_ALLOW, desc);
    snprintf(desc, sizeof desc, "%s: a native %s fails with an errno", label, denied);
    is_int(verdict(bpf, len, NATIVE, denied_nr), SECCOMP_RET_ERRNO, desc);
    /* The number means something else, or nothing, in the other table: the
     * native one's getpid, mount and personality, and 0-ish ones. */
    static const uint32_t nrs[] = { SYS_getpid, SYS_mount, SYS_personality, 0, 1, 11, 20, 1023 };
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++) {
        if (arches[i].arch == NATIVE)
            continue;
        bool all = true;
        for (size_t j = 0; j < sizeof nrs / sizeof nrs[0]; j++)
            all = all && verdict(bpf, len, arches[i].arch, nrs[j]) == SECCOMP_RET_KILL_PROCESS;
        snprintf(desc, sizeof desc, "%s: a call with AUDIT_ARCH %s kills the process (%s build)", label, arches[i].name,
                 rf_seccomp_arch_name());
        ok(all, desc);
    }
#if defined(__x86_64__)
    /* x32 calls come in as x86_64's AUDIT_ARCH with bit 30 in the number. */
    snprintf(desc, sizeof desc, "%s: an x32 getpid (0x40000000 | 39) kills the process", label);
    is_int(verdict(bpf, len, NATIVE, 0x40000000U | SYS_getpid), SECCOMP_RET_KILL_PROCESS, desc);
#endif
    free(bpf);
}

static char s_getcwd[] = "getcwd";

int main(void)
{
    char *deny[] = { s_getcwd, NULL };
    check_profile("default", RF_SECCOMP_DEFAULT, NULL, "mount", SYS_mount);
    check_profile("strict", RF_SECCOMP_STRICT, NULL, "ptrace", SYS_ptrace);
    check_profile("off + deny getcwd", RF_SECCOMP_OFF, deny, "getcwd", SYS_getcwd);
    /* The interpreter itself: a program it cannot read is not a pass. */
    struct sock_filter junk[] = { BPF_STMT(0xff, 0) };
    ok(run_bpf(junk, 1, &(struct seccomp_data){ 0 }) == BAD, "the interpreter refuses what it cannot read");

    ok(strcmp(rf_seccomp_foreign_abis(), "none") != 0 || NATIVE == AUDIT_ARCH_RISCV64,
       "the other ABIs of this architecture are named");
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
