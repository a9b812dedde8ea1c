/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of denied syscalls behind the seccomp profiles (internal). */
#pragma once
#include "seccomp/seccomp.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    RF_SC_ARGS_NONE,        /* the whole syscall */
    RF_SC_ARGS_NEWUSER,     /* only when its flags carry CLONE_NEWUSER */
    RF_SC_ARGS_PERSONALITY, /* all but the harmless personas */
    RF_SC_ARGS_IOCTL_TTY,   /* only TIOCSTI and TIOCLINUX */
    RF_SC_ARGS_FAMILY,      /* only the unwanted socket families */
    RF_SC_ARGS_SETID_MODE,  /* only when the mode carries S_ISUID or S_ISGID */
} rf_seccomp_args;

typedef struct rf_seccomp_rule {
    const char *name;
    int fallback_nr;  /* native number when libseccomp does not know the name, or -1 */
    int errnum;       /* what the denied call returns */
    rf_seccomp_args args;
    bool strict_only;
} rf_seccomp_rule;

const rf_seccomp_rule *rf_seccomp_rules(size_t *n);
const rf_seccomp_rule *rf_seccomp_rule_find(const char *name);
bool rf_seccomp_rule_in(const rf_seccomp_rule *r, rf_seccomp_profile profile);
/* " (flags & CLONE_NEWUSER)" and the like, or "". */
const char *rf_seccomp_rule_condition(const rf_seccomp_rule *r);
/* Which argument carries the mode for a RF_SC_ARGS_SETID_MODE row. */
unsigned rf_seccomp_mode_arg(const char *name);
