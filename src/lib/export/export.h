/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Export: the plan written for other runtimes, as pure translations.
 *
 * oci.c      plan → OCI runtime-spec config.json (crun, runc, Kubernetes'
 *            runtimes), and the bundle around it (bundle.c)
 * k8s.c      plan → a Pod, a NetworkPolicy and a RuntimeClass
 * sbpl.c     plan → a macOS Seatbelt (sandbox-exec) profile, as text
 *
 * What a target cannot express (Landlock in OCI, a pids limit in a Pod
 * spec, ...) is written into the output as annotations or comments, never
 * dropped in silence; what it cannot express at all and the policy
 * requires (landlock: required) is refused unless accept_weaker. */
#pragma once
#include "model/plan.h"

#include <jansson.h>

/* The plan as an OCI config.json object; rootfs is the bundle-relative root
 * path ("rootfs"). NULL with *err on a plan OCI cannot carry. */
json_t *rf_export_oci_config(const rf_plan *plan, const char *rootfs, bool accept_weaker, rf_error **err);

/* May this plan be exported at all (native shape, namespaces, no network
 * mode only ringfence's supervisor can give)? */
int rf_export_check_plan(const rf_plan *plan, const char *target, rf_error **err);

/* The annotations both OCI and Kubernetes carry: what the target cannot
 * enforce and what ringfence would have done. */
json_t *rf_export_annotations(const rf_plan *plan);

/* The plan's seccomp profile in OCI's linux.seccomp shape (JSON null when
 * there is no filter). */
json_t *rf_export_seccomp(const rf_plan *plan);

/* Write text to dir/name atomically (temp file, fsync, rename), mode. */
int rf_export_write_file(int dirfd, const char *dir, const char *name, const char *text, mode_t mode,
                         rf_error **err);
