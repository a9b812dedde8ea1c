/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seccomp: the syscall filter every backend applies last before exec.
 *
 * A profile (default, strict, off) denies the syscalls listed with their
 * reasons in docs/seccomp.md; the policy's seccomp.allow exempts names from
 * the profile and seccomp.deny adds names (deny wins over allow). Syscalls
 * of other ABIs (i386 via int 0x80, x32) kill the process: their numbers
 * would otherwise slip past a filter written for the native table.
 *
 * Start-up cost: compile once in the parent (libseccomp allocates), then
 * apply the bytes in the child with rf_seccomp_apply_bpf(), which allocates
 * nothing on success. Measured in bench/seccomp-cost.c. */
#pragma once
#include "model/policy.h"

#include <stdbool.h>
#include <stddef.h>

/* Limits on the policy's lists. */
#define RF_SECCOMP_MAX_NAMES 512
#define RF_SECCOMP_MAX_NAME_LEN 64

typedef struct rf_seccomp_request {
    rf_seccomp_profile profile;
    char *const *deny;  /* NULL-terminated syscall names, or NULL */
    char *const *allow; /* NULL-terminated syscall names, or NULL */
    bool deny_inet;     /* socket(AF_INET/AF_INET6) → EAFNOSUPPORT: network none
                           without a network namespace (landlock backend) */
} rf_seccomp_request;

/* Build the filter as a classic BPF program (an array of struct sock_filter)
 * in *bpf (malloc'd, caller frees) of *len bytes. Profile off with no deny
 * list gives *bpf = NULL, *len = 0: no filter at all. An unknown syscall
 * name, or one missing on this architecture, is an error naming it. */
int rf_seccomp_compile(const rf_seccomp_request *req, void **bpf, size_t *len, rf_error **err);
/* Like rf_seccomp_compile, but reuse the filter a previous start compiled
 * for the same request and build, kept in cache_dir (NULL: no cache). */
int rf_seccomp_compile_cached(const rf_seccomp_request *req, const char *cache_dir, void **bpf, size_t *len,
                              rf_error **err);

/* Install a program from rf_seccomp_compile() on the calling thread. len 0
 * does nothing. Needs PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN). Returns 0 or
 * -errno; fills *err only on failure and only if err is non-NULL. */
int rf_seccomp_apply_bpf(const void *bpf, size_t len, rf_error **err);

/* Does req's filter deny the whole system call `name`, whatever its
 * arguments (the profile's row in force, or seccomp.deny)? */
bool rf_seccomp_denies(const rf_seccomp_request *req, const char *name);

/* rf_seccomp_compile + rf_seccomp_apply_bpf. */
int rf_seccomp_apply(const rf_seccomp_request *req, rf_error **err);

/* What req denies, one line per rule, e.g. "clone (flags & CLONE_NEWUSER):
 * EPERM", for the plan. A NULL-terminated malloc'd strv (util/strv.h). */
int rf_seccomp_describe(const rf_seccomp_request *req, char ***ret, rf_error **err);

/* Check a seccomp.deny / seccomp.allow list as rf_seccomp_compile() will:
 * count, length, and a syscall this architecture has (libseccomp's names,
 * plus the newer ones in the profile table such as open_tree_attr). The
 * error names `setting`. For policy resolution, so both agree. */
int rf_seccomp_check_names(char *const *names, const char *setting, rf_error **err);

/* The filter of req in the OCI runtime spec's linux.seccomp shape
 * (seccomp-oci.c): a new reference, JSON null when there is no filter. */
#include <jansson.h>
json_t *rf_seccomp_to_oci(const rf_seccomp_request *req);

/* The architecture this build's filter is written for ("x86_64",
 * "aarch64", ...: uname -m's names), and the other ABIs a kernel of that
 * architecture also takes calls from, which the filter kills ("i386, x32";
 * "arm (AArch32)"; "none" when there is no other). For plan and doctor. */
const char *rf_seccomp_arch_name(void);
const char *rf_seccomp_foreign_abis(void);

/* "default", "strict", "off"; and back (-1 if unknown). */
const char *rf_seccomp_profile_name(rf_seccomp_profile profile);
int rf_seccomp_profile_from_name(const char *name);
