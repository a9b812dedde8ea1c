/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals of rf_policy_resolve, shared by its files. */
#pragma once
#include "config/config.h"
#include "model/policy.h"
#include "policy/vars.h"

typedef struct rf_resolver {
    const rf_merged *m;
    const json_t *tree;   /* the tree being resolved (merged, or a workspace snapshot) */
    rf_vars vars;
    char *const *envp;
    char ***warnings;     /* &policy->warnings */
    size_t *expose_index; /* optional: for policy->exposes[i], its index in the merged list */
    rf_error **err;
} rf_resolver;

/* Fail with "<path> (from <layer>): <message>". Returns -1. */
int rf_resolve_fail(rf_resolver *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "path (from layer)" for messages; points into buf. */
const char *rf_resolve_what(const rf_resolver *r, const char *path, char *buf, size_t size);
/* resolve_net.c: the network object. */
int rf_resolve_network(rf_resolver *r, rf_policy *p);
/* resolve_ask.c: network.on_blocked, ask, ask_timeout. */
int rf_resolve_ask(rf_resolver *r, rf_policy *p);
/* Resolve one merged tree into *p (which has its defaults filled in). */
int rf_resolve_tree(rf_resolver *r, rf_policy *p);
/* The value at a dotted path ("tools.exec.timeout") of nested objects, or
 * NULL. */
/* network.routes into n->routes (resolve_route.c). */
int rf_resolve_routes(rf_resolver *r, rf_net_policy *n);
const json_t *rf_json_path_get(const json_t *obj, const char *path);
/* Refuse a workspace layer that loosens `before` into `after`. */
int rf_policy_check_tighter(const rf_policy *before, const rf_policy *after, const char *origin,
                            rf_error **err);
/* The workspace the config names (resolved, checked), without resolving
 * the rest: the standard stack needs it to find the workspace file. */
int rf_policy_workspace_of(const rf_config *cfg, const rf_context *ctx, char **out, rf_error **err);
/* rf_policy_resolve that also hands back the merge and, for each expose,
 * its index in the merged list (for --explain). */
rf_policy *rf_policy_resolve_explained(const rf_config *cfg, const rf_context *ctx, rf_merged *m,
                                       size_t **expose_index, rf_error **err);
/* managed.c: refuse p when it grants more than the machine's managed
 * boundary (m names the layer, may be NULL), else give it the boundary's
 * limits where it sets none. 0 without a boundary. */
int rf_policy_enforce_managed(rf_policy *p, const rf_merged *m, rf_error **err);
/* rf_policy_resolve without the managed boundary: `ringfence policy check`
 * compares a file's policy with a boundary it names itself. */
rf_policy *rf_policy_resolve_unbounded(const rf_config *cfg, const rf_context *ctx, rf_error **err);
