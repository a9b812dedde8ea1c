/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The native backend and a root caller: how root is mapped, decided from
 * what this root may do (docs/containers.md).
 *
 * Host root (CAP_SYS_ADMIN in the initial user namespace) builds the
 * sandbox's namespaces in the host's user namespace and maps the command's
 * uid 0 to an unprivileged host id (map_root_to), the workspace writable
 * through an idmapped mount: root inside is never host root.
 *
 * Root in a container often cannot do that: without CAP_SYS_ADMIN (the
 * default of podman, docker and Kubernetes) it may neither create
 * namespaces outside a user namespace of its own nor make an idmapped
 * mount; and a filesystem such as the container's overlayfs root cannot be
 * idmapped at all. Such a root is "contained": the sandbox gets a user
 * namespace of its own as an ordinary caller's does, with root's own id
 * mapped (uid 0 inside is the caller's uid 0; no capability is needed to
 * map one's own id), every capability dropped as always. Where this root
 * is itself only a container's (a user namespace around it maps its uid 0
 * to an unprivileged host id) that is no weaker on the host, and it is
 * listed as a weakening and warned about; where it is host root, the
 * command's uid 0 would be host uid 0, and it is refused unless
 * accept_weaker. */
#include "backend/backend.h"
#include "plan/build.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/ident.h"
#include "util/strv.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

/* tmpfs allows idmapped mounts from Linux 6.3. */
static bool kernel_before(unsigned major, unsigned minor)
{
    struct utsname u;
    unsigned a = 0, b = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &a, &b) != 2)
        return false;
    return a < major || (a == major && b < minor);
}

/* The name of path's filesystem when it refuses idmapped mounts whatever
 * the caller may do, else NULL. */
static const char *unidmappable_fs(const char *path)
{
    struct statfs st;
    if (statfs(path, &st) < 0)
        return NULL; /* the mount step reports what is wrong with it */
    switch ((unsigned long)st.f_type) {
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case NFS_SUPER_MAGIC: return "NFS";
    case FUSE_SUPER_MAGIC: return "FUSE";
    case V9FS_MAGIC: return "9p";
    case RAMFS_MAGIC: return "ramfs";
    case TMPFS_MAGIC: return kernel_before(6, 3) ? "tmpfs before Linux 6.3" : NULL;
    default: return NULL;
    }
}

/* The instance's HOME tree on such a filesystem: handed to the mapped
 * host id instead (common.c, as the landlock backend does), never
 * idmapped. Only ringfence's own directory, below a 0700 instance root. */
static void hand_over_user_env(rf_plan *plan, const rf_policy *policy)
{
    for (size_t i = 0; i < plan->n_mounts; i++) {
        rf_mount *m = &plan->mounts[i];
        if (m->idmap && m->writable && !strcmp(m->why, "instance") && !policy->instance_dir &&
            unidmappable_fs(m->source)) {
            m->idmap = false;
            plan->user_env_handed = true;
        }
    }
}

/* The first writable mount that must be idmapped but cannot be, or NULL;
 * *fs: its filesystem's name. */
static const rf_mount *unidmappable(const rf_plan *plan, const char **fs)
{
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->idmap && m->writable && m->type == RF_MOUNT_BIND && (*fs = unidmappable_fs(m->source)))
            return m;
    }
    return NULL;
}

/* What lifts each cause, for the refusal's hint. */
static const char hint_caps[] = "give the container what the unprivileged mapping needs (podman/docker: --cap-add "
                                "SYS_ADMIN,NET_ADMIN,SETUID,SETGID; Kubernetes: securityContext.capabilities.add: "
                                "[SYS_ADMIN, NET_ADMIN, SETUID, SETGID])";
static const char hint_ids[] = "give the user namespace around ringfence more ids (podman --userns=auto, or "
                               "subordinate ids in /etc/subuid for rootless podman), or set map_root_to "
                               "(--map-root-to) to an id mapped there";
static const char hint_fs[] = "put it on ext4, xfs, btrfs or tmpfs (in a container, a volume: podman/docker -v "
                              "HOST_DIR:PATH)";

static int refuse_host_root(const char *why, const char *fix, rf_error **err)
{
    rf_error_set(err, 0, "a root caller: %s, so the sandbox's uid 0 would be host uid 0 (without capabilities)", why);
    return rf_error_hint_set(err, "%s, run ringfence as an ordinary user (--user, or USER in the image), or accept "
                                  "the weaker sandbox by name with --accept-weaker (docs/containers.md)", fix);
}

/* Switch the plan to a contained root: an ordinary caller's namespaces,
 * root's own id mapped, nothing idmapped. */
static int contain(rf_plan *plan, const rf_policy *policy, const char *why, const char *fix, rf_error **err)
{
    uid_t outer = rf_ident_initial_userns() ? 0 : rf_ident_outer_uid(0);
    if (outer == 0 && !policy->accept_weaker)
        return refuse_host_root(why, fix, err);
    /* Linux 5.12+ (verify_root_map): a map whose outer id is 0 needs
     * CAP_SETFCAP over the parent namespace, else a file capability
     * written inside would be valid outside. */
    if (!rf_ident_has_cap(CAP_SETFCAP)) {
        rf_error_set(err, EPERM, "a root caller: %s, and without CAP_SETFCAP it cannot map its uid 0 into a user "
                                 "namespace of the sandbox's own either", why);
        return rf_error_hint_set(err, "give the container CAP_SETFCAP (podman/docker: --cap-add SETFCAP, a "
                                      "default that --cap-drop=all removes; Kubernetes: "
                                      "securityContext.capabilities.add: [SETFCAP]), or run ringfence as an "
                                      "ordinary user (--user, or USER in the image) (docs/containers.md)");
    }
    char text[400];
    if (outer == 0)
        snprintf(text, sizeof text, "root: the command's uid 0 is host uid 0, without capabilities (%s; "
                                    "accept_weaker)", why);
    else
        snprintf(text, sizeof text, "root: the command's uid 0 is this container's uid 0 (host uid %ld), "
                                    "without capabilities, not an unprivileged id of its own (%s)",
                 (long)outer, why);
    if (rf_strv_push(&plan->weakenings, text) < 0 || rf_strv_pushf(&plan->warnings, "%s", text) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    plan->caller_is_root = false;
    plan->root_contained = true;
    plan->uid_host = plan->uid_inside = 0;
    plan->gid_host = plan->gid_inside = 0;
    plan->overlay_userxattr = true; /* mounted in the sandbox's own user namespace */
    plan->user_env_handed = false;
    for (size_t i = 0; i < plan->n_mounts; i++)
        plan->mounts[i].idmap = false;
    return 0;
}

int rf_plan_root_identity(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (plan->backend != RF_BACKEND_NATIVE || !plan->caller_is_root)
        return 0;
    const char *cap = rf_backend_root_lacks(plan->clone_flags & CLONE_NEWNET);
    char why[300];
    if (cap) {
        snprintf(why, sizeof why, "this root lacks %s (a container's default), which the unprivileged "
                                  "mapping needs", cap);
        return contain(plan, policy, why, hint_caps, err);
    }
    /* A user namespace around us that maps root alone (rootless podman
     * with one id, bwrap): map_root_to has no id here to be. */
    if (rf_ident_outer_uid(plan->uid_host) == (uid_t)-1) {
        snprintf(why, sizeof why, "uid %u (map_root_to) is not mapped in the user namespace this root runs "
                                  "in", (unsigned)plan->uid_host);
        return contain(plan, policy, why, hint_ids, err);
    }
    hand_over_user_env(plan, policy);
    const char *fs = NULL;
    const rf_mount *m = unidmappable(plan, &fs);
    if (!m)
        return 0;
    snprintf(why, sizeof why, "the writable %s %s is on %s, which cannot be idmapped, and without an idmapped "
                              "mount the sandbox's uid 0 can write it only as root's own", m->why, m->source, fs);
    return contain(plan, policy, why, hint_fs, err);
}
