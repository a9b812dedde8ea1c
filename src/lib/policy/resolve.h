/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals of rf_policy_resolve, shared by its files. */
#pragma once
#include "config/config.h"
#include "policy/policy.h"
#include "policy/vars.h"

typedef struct rf_resolver {
    const rf_merged *m;
    const json_t *tree;   /* the tree being resolved (merged, or a workspace snapshot) */
    rf_vars vars;
    char *const *envp;
    rf_error **err;
} rf_resolver;

/* Fail with "<path> (from <layer>): <message>". Returns -1. */
int rf_resolve_fail(rf_resolver *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Resolve one merged tree into *p (which has its defaults filled in). */
int rf_resolve_tree(rf_resolver *r, rf_policy *p);
/* Refuse a workspace layer that loosens `before` into `after`. */
int rf_policy_check_tighter(const rf_policy *before, const rf_policy *after, const char *origin,
                            rf_error **err);
