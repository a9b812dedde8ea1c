/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* deny_paths: host paths that must never be visible (docs/config.md; Mitto's
 * deny_folders, srt's filesystem.denyRead). A path outside every bind is
 * hidden already; one that a bind shows (a workspace's .env, an exposed
 * home's .ssh) gets a mask at the place the bind shows it, as the instance
 * root does (plan.c): an empty read-only tmpfs over a directory, an empty
 * unopenable file over anything else (RF_MOUNT_MASK_FILE). Every backend
 * reads masks from the plan, so all of them hide the same paths. */
#include "plan/build.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The place the deny path names, symlinks resolved: a link (in the path or
 * at its end) cannot point the mask elsewhere than the file it reaches. An
 * absent path: its parent resolved, the last name kept, so a later
 * creation is still recognised. Malloc'd, NULL on ENOMEM. */
static char *resolve_denied(const char *path)
{
    char *real = realpath(path, NULL);
    if (real || errno != ENOENT)
        return real ? real : strdup(path);
    _cleanup_free_ char *parent = strdup(path);
    char *slash = parent ? strrchr(parent, '/') : NULL;
    if (!slash || slash == parent)
        return strdup(path);
    *slash = '\0';
    _cleanup_free_ char *rparent = realpath(parent, NULL);
    return rparent ? rf_path_join(rparent, slash + 1) : strdup(path);
}

/* What the bind is, and how to move it out of the denied path. */
static void bind_words(const rf_mount *m, const char **noun, const char **fix)
{
    static const struct { const char *why, *noun, *fix; } words[] = {
        { "workspace", "workspace", "choose a workspace outside it" },
        { "expose", "exposed path", "expose a path outside it" },
        { "instance", "instance directory", "move the instance root out of it (RINGFENCE_HOME or instance_root)" },
    };
    *noun = "system path";
    *fix = "deny a path that no system bind needs";
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(m->why, words[i].why)) {
            *noun = words[i].noun;
            *fix = words[i].fix;
        }
}

/* A deny path that contains a bind's source (or is it): masking it would
 * hide the bind itself, so the policy contradicts itself. Refused rather
 * than guessing which of the two settings wins. */
static int refuse_containing(const char *entry, const char *real, const rf_mount *m, rf_error **err)
{
    bool linked = strcmp(entry, real) != 0;
    const char *noun, *fix;
    bind_words(m, &noun, &fix);
    rf_error_set(err, 0, "deny_paths: %s%s%s%s %s the %s %s, which the sandbox must show", entry,
                 linked ? " (" : "", linked ? real : "", linked ? ")" : "",
                 strcmp(real, m->source) ? "contains" : "is", noun, m->source);
    return rf_error_hint_set(err, "remove %s from deny_paths and deny only what inside it must stay hidden, or %s",
                             entry, fix);
}

/* Absent deny paths: nothing to mask now. The command may create one inside
 * a writable bind (its own file, not a secret), and the host may create one
 * while the command runs, which the command could then read: said in the
 * plan's `cannot`, as for absent protected paths. */
static int note_absent(rf_plan *plan, const char *real)
{
    if (!rf_plan_path_visible(plan, real, NULL))
        return 0; /* hidden whatever appears there */
    return rf_strv_pushf(&plan->cannot, "deny path %s does not exist, so nothing hides it: if it is created "
                                        "while the command runs (by the command or on the host), the command "
                                        "can read it", real) < 0 ? -1 : 0;
}

/* One mask for `real` where bind m shows it, unless a deeper mount there
 * shows something else (then m does not show it at that place). */
static int mask_at(rf_plan *plan, size_t i, const char *real, bool dir, rf_error **err)
{
    const rf_mount *m = &plan->mounts[i];
    _cleanup_free_ char *target = rf_path_join(m->target, real + strlen(m->source) + (strcmp(m->source, "/") != 0));
    if (!target)
        return rf_error_set(err, ENOMEM, "plan");
    if (rf_plan_mount_covering(plan, target) != m)
        return 0;
    if (rf_plan_add_mount(plan, dir ? RF_MOUNT_TMPFS : RF_MOUNT_MASK_FILE, real, target, false, "denied", err) < 0)
        return -1;
    /* 0755, not 0700: the mask is empty either way, and tools that walk the
     * tree (git status, rg, find) see an empty directory instead of failing
     * on EACCES, which could make them stop or report errors. */
    plan->mounts[plan->n_mounts - 1].mode = 0755;
    return 0;
}

static int deny_one(rf_plan *plan, const char *entry, size_t first, rf_error **err)
{
    _cleanup_free_ char *real = resolve_denied(entry);
    if (!real)
        return rf_error_set(err, ENOMEM, "plan");
    size_t n = plan->n_mounts;
    for (size_t i = first; i < n; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type == RF_MOUNT_BIND && rf_path_is_beneath(m->source, real))
            return refuse_containing(entry, real, m, err);
    }
    struct stat st;
    if (lstat(real, &st) < 0) {
        if (errno != ENOENT)
            return rf_error_set(err, errno, "deny_paths: %s", real); /* fail closed: cannot tell what it is */
        return note_absent(plan, real) < 0 ? rf_error_set(err, ENOMEM, "plan") : 0;
    }
    /* A mask hides a name. A hard link is another name for the same file,
     * which stays visible wherever it lies; only the user can remove it. */
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
        rf_strv_pushf(&plan->warnings, "deny path %s has %ju other hard link(s): the same file stays readable "
                                       "under those names if a bind shows them", real,
                      (uintmax_t)st.st_nlink - 1) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    for (size_t i = first; i < n; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type == RF_MOUNT_BIND && rf_path_is_beneath(real, m->source) &&
            mask_at(plan, i, real, S_ISDIR(st.st_mode), err) < 0)
            return -1;
    }
    return 0;
}

int rf_plan_add_denied(rf_plan *plan, const rf_policy *policy, size_t first, rf_error **err)
{
    for (size_t i = 0; policy->deny_paths && policy->deny_paths[i]; i++)
        if (deny_one(plan, policy->deny_paths[i], first, err) < 0)
            return -1;
    return 0;
}

const char *rf_plan_denied_overlap(const rf_policy *policy, const char *path)
{
    for (size_t i = 0; policy->deny_paths && policy->deny_paths[i]; i++) {
        _cleanup_free_ char *real = resolve_denied(policy->deny_paths[i]);
        if (!real || rf_path_is_beneath(path, real) || rf_path_is_beneath(real, path))
            return policy->deny_paths[i];
    }
    return NULL;
}
