/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence export k8s`: the plan as Kubernetes objects, a worked example
 * of the same policy on a cluster (docs/scale.md):
 *
 *   RuntimeClass   "ringfence-crun", handler crun (the OCI runtime that runs
 *                  `export oci` bundles; the node's containerd/CRI-O config
 *                  names the handler)
 *   NetworkPolicy  network none: no ingress, no egress for the pod
 *   Pod            the command, with the plan's identity, no capabilities,
 *                  no privilege escalation, a read-only root, user
 *                  namespaces (hostUsers: false), the seccomp profile as a
 *                  Localhost profile, the limits, the timeout as
 *                  activeDeadlineSeconds, and the plan's own mounts as
 *                  volumes. The system (/usr, /etc) is the image's.
 *
 * What a Pod cannot say is in its annotations: Landlock, and the pids
 * limit (a kubelet setting, podPidsLimit, not a field of the Pod). */
#include "export/export.h"
#include "ringfence.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_IMAGE "debian:bookworm-slim"
#define RUNTIME_CLASS "ringfence-crun"
#define NAME_MAX_K8S 63

/* A DNS-1123 label from the command's name: "ringfence-" + [a-z0-9-]. */
/* ceil() without libm, for small positive amounts. */
static long long round_up(double v)
{
    long long n = (long long)v;
    return (double)n < v ? n + 1 : n;
}

static void rf_export_k8s_name(const rf_plan *plan, char *out, size_t size)
{
    const char *base = plan->argv && plan->argv[0] ? strrchr(plan->argv[0], '/') : NULL;
    base = base ? base + 1 : plan->argv && plan->argv[0] ? plan->argv[0] : "command";
    size_t n = (size_t)snprintf(out, size, "ringfence-");
    for (const char *p = base; *p && n + 1 < size && n < NAME_MAX_K8S; p++) {
        char c = (char)tolower((unsigned char)*p);
        out[n++] = isalnum((unsigned char)c) ? c : '-';
    }
    while (n > 0 && out[n - 1] == '-')
        n--;
    out[n] = '\0';
}

/* Volumes for the plan's own binds (workspace, exposed paths, the instance
 * directory) and its writable tmpfs (/tmp); the system binds are the image. */
static void add_volumes(const rf_plan *plan, json_t *volumes, json_t *mounts)
{
    int k = 0;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        char name[32];
        json_t *source = NULL;
        if (m->type == RF_MOUNT_BIND && !strcmp(m->why, "instance")) {
            snprintf(name, sizeof name, "instance");
            source = json_pack("{s:{}}", "emptyDir"); /* scratch: HOME, XDG_*, TMPDIR */
        } else if (m->type == RF_MOUNT_BIND && (!strcmp(m->why, "workspace") || !strcmp(m->why, "expose"))) {
            snprintf(name, sizeof name, "%s-%d", m->why, k++);
            source = json_pack("{s:{s:s, s:s}}", "hostPath", "path", m->source, "type",
                               m->source_dir ? "Directory" : "File");
        } else if (m->type == RF_MOUNT_TMPFS && !strcmp(m->why, "denied")) {
            /* A denied directory: an empty read-only volume over it. */
            snprintf(name, sizeof name, "denied-%d", k++);
            source = json_pack("{s:{s:s}}", "emptyDir", "medium", "Memory");
        } else if (m->type == RF_MOUNT_TMPFS && m->writable && strncmp(m->target, "/dev", 4) != 0) {
            snprintf(name, sizeof name, "tmpfs-%d", k++);
            source = json_pack("{s:{s:s}}", "emptyDir", "medium", "Memory");
        } else {
            continue;
        }
        json_object_set_new(source, "name", json_string(name));
        json_array_append_new(volumes, source);
        json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name", name, "mountPath", m->target,
                                                "readOnly", !m->writable));
    }
}

static json_t *env_json(const rf_plan *plan)
{
    json_t *a = json_array();
    for (size_t i = 0; plan->env && plan->env[i]; i++) {
        const char *eq = strchr(plan->env[i], '=');
        if (!eq)
            continue;
        json_t *name = json_stringn(plan->env[i], (size_t)(eq - plan->env[i]));
        json_array_append_new(a, json_pack("{s:o, s:s}", "name", name, "value", eq + 1));
    }
    return a;
}

static json_t *resources_json(const rf_plan *plan)
{
    json_t *limits = json_object();
    char v[32];
    if (plan->limits.memory_bytes) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)plan->limits.memory_bytes);
        json_object_set_new(limits, "memory", json_string(v));
    }
    if (plan->limits.cpu > 0) {
        snprintf(v, sizeof v, "%lldm", round_up(plan->limits.cpu * 1000));
        json_object_set_new(limits, "cpu", json_string(v));
    }
    /* requests = limits: the Guaranteed class, nothing borrowed. */
    return json_pack("{s:O, s:o}", "requests", limits, "limits", limits);
}

static json_t *container_json(const rf_plan *plan, json_t *mounts)
{
    json_t *cmd = json_array();
    for (size_t i = 0; plan->argv && plan->argv[i]; i++)
        json_array_append_new(cmd, json_string(plan->argv[i]));
    json_t *sc = json_pack("{s:b, s:b, s:b, s:{s:[s]}}", "allowPrivilegeEscalation", 0, "privileged", 0,
                           "readOnlyRootFilesystem", 1, "capabilities", "drop", "ALL");
    return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o}", "name", "sandbox", "image",
                     plan->container_image ? plan->container_image : DEFAULT_IMAGE, "command", cmd, "workingDir",
                     plan->cwd, "env", env_json(plan), "securityContext", sc, "resources", resources_json(plan),
                     "volumeMounts", mounts);
}

static json_t *pod_json(const rf_plan *plan, const char *name)
{
    char profile[NAME_MAX_K8S + 32];
    snprintf(profile, sizeof profile, "ringfence/%s.json", name);
    json_t *volumes = json_array(), *mounts = json_array();
    add_volumes(plan, volumes, mounts);
    json_t *psc = json_pack("{s:I, s:I, s:b, s:{s:s, s:s}}", "runAsUser", (json_int_t)plan->uid_inside,
                            "runAsGroup", (json_int_t)plan->gid_inside, "runAsNonRoot", plan->uid_inside != 0,
                            "seccompProfile", "type", "Localhost", "localhostProfile", profile);
    json_t *spec = json_pack("{s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:o, s:[o], s:o}", "runtimeClassName",
                             RUNTIME_CLASS, "restartPolicy", "Never", "automountServiceAccountToken", 0,
                             "enableServiceLinks", 0, "hostNetwork", 0, "hostPID", 0, "hostIPC", 0, "hostUsers",
                             !(plan->clone_flags & CLONE_NEWUSER), "securityContext", psc, "containers",
                             container_json(plan, mounts), "volumes", volumes);
    if (plan->limits.timeout_s > 0)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer((json_int_t)round_up(plan->limits.timeout_s)));
    json_t *ann = rf_export_annotations(plan);
    if (plan->limits.pids) {
        char v[32];
        snprintf(v, sizeof v, "%llu", (unsigned long long)plan->limits.pids);
        json_object_set_new(ann, "org.ringfence.pids-limit", json_string(v));
        json_object_set_new(ann, "org.ringfence.pids",
                            json_string("not a Pod field: set the kubelet's podPidsLimit on the node pool"));
    }
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}, s:o}, s:o}", "apiVersion", "v1", "kind", "Pod",
                     "metadata", "name", name, "labels", "app.kubernetes.io/managed-by", "ringfence",
                     "ringfence.dev/sandbox", name, "annotations", ann, "spec", spec);
}

static json_t *network_policy_json(const char *name)
{
    /* Both policy types and no rules: nothing in, nothing out. */
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:{s:s}}, s:[s, s]}}", "apiVersion", "networking.k8s.io/v1",
                     "kind", "NetworkPolicy", "metadata", "name", name, "spec", "podSelector", "matchLabels",
                     "ringfence.dev/sandbox", name, "policyTypes", "Ingress", "Egress");
}

static json_t *rf_export_k8s_manifest(const rf_plan *plan, bool accept_weaker, rf_error **err)
{
    if (rf_export_check_plan(plan, "k8s", err) < 0)
        return NULL;
    if (plan->landlock == RF_LANDLOCK_REQUIRED && !accept_weaker) {
        rf_error_set(err, 0, "export k8s: landlock: required, but a Pod has no Landlock field");
        rf_error_hint_set(err, "pass --accept-weaker (the Pod's annotations say so), or --landlock best-effort");
        return NULL;
    }
    /* A Pod volume hides a directory, not one file of a hostPath: refused
     * rather than exported with the file readable. The /proc masks
     * (/proc/keys) are the runtime's own: a Pod's default procMount masks
     * them already. */
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (plan->mounts[i].type == RF_MOUNT_MASK_FILE && strcmp(plan->mounts[i].why, "proc") != 0) {
            rf_error_set(err, 0, "export k8s: deny_paths: %s is a file, and a Pod cannot hide one file of the "
                                 "volume that holds it", plan->mounts[i].source);
            rf_error_hint_set(err, "deny its directory instead, or use 'ringfence export oci' (maskedPaths)");
            return NULL;
        }
    char name[NAME_MAX_K8S + 1];
    rf_export_k8s_name(plan, name, sizeof name);
    json_t *items = json_array();
    json_array_append_new(items, json_pack("{s:s, s:s, s:{s:s}, s:s}", "apiVersion", "node.k8s.io/v1", "kind",
                                           "RuntimeClass", "metadata", "name", RUNTIME_CLASS, "handler", "crun"));
    if (plan->network == RF_NET_NONE)
        json_array_append_new(items, network_policy_json(name));
    json_array_append_new(items, pod_json(plan, name));
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
}

static int mkdir_in(int dfd, const char *dir, const char *name, int *out, rf_error **err)
{
    if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "export k8s: %s/%s", dir, name);
    *out = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return *out < 0 ? rf_error_set(err, errno, "export k8s: %s/%s", dir, name) : 0;
}

static int write_json(int dfd, const char *dir, const char *name, json_t *j, rf_error **err)
{
    _cleanup_free_ char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!text)
        return rf_error_set(err, ENOMEM, "export k8s");
    size_t n = strlen(text);
    _cleanup_free_ char *line = malloc(n + 2);
    if (!line)
        return rf_error_set(err, ENOMEM, "export k8s");
    memcpy(line, text, n);
    memcpy(line + n, "\n", 2);
    return rf_export_write_file(dfd, dir, name, line, 0644, err);
}

RF_EXPORT int rf_export_k8s(const rf_plan *plan, const char *dir, bool accept_weaker, rf_error **err)
{
    json_t *manifest = rf_export_k8s_manifest(plan, accept_weaker, err);
    if (!manifest)
        return -1;
    char name[NAME_MAX_K8S + 1], file[NAME_MAX_K8S + 8];
    rf_export_k8s_name(plan, name, sizeof name);
    snprintf(file, sizeof file, "%s.json", name);
    json_t *profile = rf_export_seccomp(plan);
    if (!json_is_object(profile)) { /* seccomp off: an allow-all profile keeps the Pod valid */
        json_decref(profile);
        profile = json_pack("{s:s}", "defaultAction", "SCMP_ACT_ALLOW");
    }
    _cleanup_close_ int dfd = -1, sfd = -1, rfd = -1;
    if (mkdir_in(AT_FDCWD, dir, dir, &dfd, err) < 0 || mkdir_in(dfd, dir, "seccomp", &sfd, err) < 0 ||
        mkdir_in(sfd, dir, "ringfence", &rfd, err) < 0) {
        json_decref(manifest);
        json_decref(profile);
        return -1;
    }
    if (write_json(rfd, dir, file, profile, err) < 0) {
        json_decref(manifest);
        return -1;
    }
    return write_json(dfd, dir, "ringfence.k8s.json", manifest, err);
}
