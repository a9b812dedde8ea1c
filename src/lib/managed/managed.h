/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The managed boundary (docs/managed.md): a root-owned file, in the
 * policy's own keys, each setting the most any layer may grant. Every
 * policy resolved on the machine is checked against it (policy/managed.c);
 * `ringfence policy check FILE --within BOUNDARY` checks one without
 * running anything. */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stdbool.h>

#define RF_MANAGED_PATH "/etc/ringfence/managed.yaml"
#define RF_MANAGED_PATH_JSON "/etc/ringfence/managed.json"
/* The largest boundary file read. */
#define RF_MANAGED_MAX_BYTES (1024 * 1024)

/* The boundary at path, or (path NULL) the machine's: managed.yaml, else
 * managed.json, in /etc/ringfence (test-hook builds: $RINGFENCE_TEST_MANAGED
 * instead). NULL without *err when there is none. Refused (NULL, *err)
 * when anyone but root may write the file or its directory (test-hook
 * builds with the override: the caller may own them too), or it is not
 * valid: a boundary nobody can trust bounds nothing. ret_path (may be
 * NULL) gets the file's path, malloc'd. */
json_t *rf_managed_load(const char *path, char **ret_path, rf_error **err);

/* The boundary's system_audit (docs/managed.md): false when it has none;
 * else the daemon's socket (borrowed; the default when unset) and whether
 * a run that cannot reach it is refused. */
bool rf_managed_system_audit(const json_t *boundary, const char **socket, bool *required);

/* What a policy grants beyond the boundary. */
typedef struct rf_managed_excess {
    char setting[128]; /* the policy's setting, "network.allow_domains[2]" */
    char what[512];    /* "evil.example (the boundary allows at most: *.example.com)" */
} rf_managed_excess;

/* Does the resolved policy (as rf_policy_to_json writes it) grant
 * anything the boundary does not? 0 within; 1 beyond, the first excess
 * in *out; -1 when the boundary itself is malformed (out->what says). A
 * limit the policy leaves unset is within: the run gets the boundary's
 * (rf_managed_limits). Pure. */
int rf_managed_check(const json_t *boundary, const json_t *policy, rf_managed_excess *out);

/* The boundary's limits, for a policy that sets none: 0 where it has none. */
typedef struct rf_managed_limits {
    uint64_t memory_bytes, pids;
    double cpu, timeout_s;
} rf_managed_limits;
void rf_managed_limits_of(const json_t *boundary, rf_managed_limits *out);
