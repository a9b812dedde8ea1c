/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Find the executable the way the sandbox will, before anything starts, so
 * "not found" and "not executable" are reported as 127 and 126 with the
 * name, and an executable that lives outside the system directories gets
 * its directory exposed read-only (seed 000). Absolute paths in the other
 * arguments are never exposed automatically: the user exposes them. */
#include "plan/build.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Search a PATH-style list on the host; returns a malloc'd absolute path. */
static char *search_path(const char *name, const char *path_list)
{
    if (!path_list)
        return NULL;
    _cleanup_free_ char *copy = strdup(path_list);
    if (!copy)
        return NULL;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        if (dir[0] != '/')
            continue; /* a relative PATH entry would depend on the cwd */
        char *cand = rf_path_join(dir, name);
        if (cand && is_executable_file(cand))
            return cand;
        free(cand);
    }
    return NULL;
}

static bool all_absolute(const char *path_list)
{
    for (const char *d = path_list;; d++) {
        if (*d != '/')
            return false;
        d = strchr(d, ':');
        if (!d)
            return true;
    }
}

static int check_candidate(const char *path, const char *name, rf_error **err)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return rf_error_set_code(err, RF_EXIT_NOT_FOUND, 0, "command not found: %s", name);
    if (S_ISDIR(st.st_mode))
        return rf_error_set_code(err, RF_EXIT_CANNOT_EXEC, 0, "%s is a directory, not a command", path);
    if (access(path, X_OK) < 0)
        return rf_error_set_code(err, RF_EXIT_CANNOT_EXEC, 0, "%s is not executable", path),
               rf_error_hint_set(err, "chmod +x %s, or run it through its interpreter", path);
    return 0;
}

/* Starts as a program the kernel runs itself: ELF, or a #! line. (A file
 * without one is run by the shell as a script: that is the shell's part.) */
static bool kernel_runs(const char *path)
{
    unsigned char magic[4] = { 0 };
    struct stat st;
    /* Only a regular file is opened: opening a device can have effects. */
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    return (n >= 2 && magic[0] == '#' && magic[1] == '!') || (n == 4 && !memcmp(magic, "\177ELF", 4));
}

int rf_plan_resolve_exec(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    const char *name = plan->argv[0];
    char *found = NULL;
    if (strchr(name, '/')) {
        found = rf_path_join(plan->cwd, name);
    } else {
        const char *sandbox_path = rf_strv_env_get(plan->env, "PATH");
        const char *list = sandbox_path ? sandbox_path + 5 : RF_SAFE_PATH;
        /* The shell would also search relative entries (and "" is "."). */
        if (policy->exec_as_shell && !all_absolute(list))
            return rf_error_set(err, 0, "PATH has relative entries: the shell's search is not ours");
        found = search_path(name, list);
        if (!found && !policy->exec_as_shell)
            found = search_path(name, policy->caller_path);
        if (!found)
            return rf_error_set_code(err, RF_EXIT_NOT_FOUND, 0, "command not found: %s", name),
                   rf_error_hint_set(err, "give its absolute path, or --expose the directory that holds it");
    }
    if (!found)
        return rf_error_set(err, ENOMEM, "plan");
    if (check_candidate(found, name, err) < 0) {
        free(found);
        return -1;
    }
    /* Judge visibility on the real path: /bin/true is /usr/bin/true behind
     * the /bin symlink, already visible through the /usr bind. */
    char real[PATH_MAX];
    bool resolved = realpath(found, real) != NULL;
    if (!resolved)
        snprintf(real, sizeof real, "%s", found);
    bool visible = rf_plan_path_visible(plan, real, NULL);
    /* exec_as_shell: only what /bin/sh in the sandbox finds and runs as it
     * is; anything else is an error (the caller then uses the shell). */
    if (policy->exec_as_shell && (!resolved || !visible || !kernel_runs(real))) {
        rf_error_set(err, 0, "%s: not a program the sandbox runs as the shell would", found);
        free(found);
        return -1;
    }
    plan->exec_path = found;
    if (!visible) {
        _cleanup_free_ char *dir = strdup(real);
        if (!dir)
            return rf_error_set(err, ENOMEM, "plan");
        const char *parent = dirname(dir);
        const char *denied = rf_plan_denied_overlap(policy, parent);
        if (denied)
            return rf_error_set(err, 0, "%s: running it would show %s, which deny_paths hides (%s)", found,
                                parent, denied),
                   rf_error_hint_set(err, "move the program out of the denied path, or remove %s from deny_paths",
                                     denied);
        if (rf_plan_add_mount(plan, RF_MOUNT_BIND, parent, parent, false, "executable", err) < 0)
            return -1;
        plan->mounts[plan->n_mounts - 1].idmap = plan->caller_is_root;
    }
    return 0;
}
