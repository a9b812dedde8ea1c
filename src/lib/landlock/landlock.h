/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock: unprivileged filesystem (and TCP, and IPC scope) rules for the
 * calling thread and everything it later starts. The backends call this
 * after the sandbox root is in place (after pivot_root, so every path below
 * is the sandbox's own path) and before seccomp.
 *
 * Model: read/execute beneath read-only rules, full access beneath writable
 * rules, nothing elsewhere. A rule on a non-directory gets only the rights
 * that make sense for a file (the kernel refuses directory rights there).
 *
 * Ordering: set PR_SET_NO_NEW_PRIVS first (or hold CAP_SYS_ADMIN), since the
 * kernel refuses landlock_restrict_self() otherwise.
 *
 * Allocation: rf_landlock_apply() allocates nothing on success, so it may run
 * in a child after fork()/clone(). On failure it fills *err (which does
 * allocate) only if err is non-NULL; in a child of a multithreaded process
 * pass err = NULL and report the returned -errno instead. */
#pragma once
#include "model/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The newest Landlock ABI this code knows. Kernels reporting more get the
 * rights of this one (new rights are opt-in, so that is safe). */
#define RF_LANDLOCK_ABI_LATEST 7
/* Upper bound on the rules of one request (each is an fd and a syscall). */
#define RF_LANDLOCK_MAX_RULES 1024

typedef struct rf_landlock_rule {
    const char *path; /* absolute, as the calling process sees it */
    bool write;       /* false: read/execute beneath; true: full access */
} rf_landlock_rule;

typedef struct rf_landlock_request {
    const rf_landlock_rule *rules;
    size_t n_rules;
    bool restrict_tcp;  /* ABI 4+: deny every TCP bind and connect */
    bool scope_ipc;     /* ABI 6+: no abstract unix sockets or signals out of the domain */
    bool log_denials;   /* ABI 7+: audit-log denials of the programs run after exec */
    rf_landlock_mode mode; /* best-effort | required | off */
} rf_landlock_request;

/* What one ABI level can enforce: the rights and flags handed to the kernel. */
typedef struct rf_landlock_attr {
    uint64_t handled_fs;     /* filesystem rights handled (denied unless granted) */
    uint64_t handled_net;    /* TCP rights handled */
    uint64_t scoped;         /* IPC scopes */
    uint64_t ro_dir, rw_dir; /* rights granted beneath a directory rule */
    uint64_t ro_file, rw_file; /* rights granted on a non-directory rule */
    uint32_t restrict_flags; /* landlock_restrict_self() flags */
} rf_landlock_attr;

/* The highest ABI the running kernel supports: >= 1, 0 when Landlock is
 * missing (not built in, or the syscall is filtered by a container), -1 when
 * it is built in but not enabled at boot (absent from lsm=). */
int rf_landlock_abi(void);

/* Pure: the rights and flags `req` asks for, stripped to what `abi` can
 * enforce. In `required` mode, asking for something `abi` lacks (TCP rules
 * below ABI 4, IPC scoping below 6) is an error; best-effort drops it.
 * abi > RF_LANDLOCK_ABI_LATEST is treated as the latest; abi < 1 is an error. */
int rf_landlock_attr_for(const rf_landlock_request *req, int abi, rf_landlock_attr *ret,
                         rf_error **err);

/* Restrict the calling thread (and its future children) to req's rules.
 * *abi_used (may be NULL) is set to the ABI enforced, 0 when nothing was
 * applied (mode off, or best-effort without Landlock). Returns 0, or -errno. */
int rf_landlock_apply(const rf_landlock_request *req, int *abi_used, rf_error **err);
/* What rf_landlock_apply() would refuse for want of ABI, said before any
 * sandbox exists (in the caller, with the message and the fix): 0, or -1
 * with *err. Only `required` can be refused. */
int rf_landlock_check(const rf_landlock_request *req, rf_error **err);
