/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where an instance's tree may not live (seed 002's runtime checks): the
 * caller's home itself or any parent of it, the places in it that hold
 * keys, tokens and configuration, the system directories, ringfence's own
 * configuration; and never through a symlink, whose target could change
 * under us. */
#include "instance/instance.h"
#include "util/cleanup.h"
#include "util/path.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rf_instance_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
            return false;
    return true;
}

static const char *const in_home[] = { ".ssh", ".gnupg", ".config", ".local/share", ".aws", ".kube",
                                       ".docker", ".netrc", ".password-store" };
static const char *const system_dirs[] = { "/", "/etc", "/usr", "/root", "/boot", "/var", "/bin", "/sbin",
                                           "/lib", "/proc", "/sys", "/dev", "/run" };

/* The deepest existing ancestor of dir, resolved, must be dir's own
 * lexical prefix: no symlink anywhere along the way. */
static bool path_has_link(const char *dir)
{
    _cleanup_free_ char *probe = strdup(dir);
    while (probe && *probe) {
        _cleanup_free_ char *real = realpath(probe, NULL);
        if (real)
            return strcmp(real, probe) != 0;
        char *slash = strrchr(probe, '/');
        if (!slash)
            return false;
        *(slash == probe ? slash + 1 : slash) = '\0';
        if (slash == probe && !probe[1])
            return false;
    }
    return false;
}

const char *rf_instance_target_refused(const char *dir, const char *home, const char *root)
{
    if (dir[0] != '/')
        return "not an absolute path";
    if (path_has_link(dir))
        return "a path through a symbolic link (its target could change); give the real path";
    for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
        if (!strcmp(dir, system_dirs[i]) || (strcmp(system_dirs[i], "/") && rf_path_is_beneath(dir, system_dirs[i]) &&
                                             strcmp(system_dirs[i], "/var") && strcmp(system_dirs[i], "/run")))
            return "a system directory";
    if (home && home[0] == '/') {
        _cleanup_free_ char *h = realpath(home, NULL);
        const char *hh = h ? h : home;
        if (!strcmp(dir, hh))
            return "your home directory itself";
        if (rf_path_is_beneath(hh, dir))
            return "a parent of your home directory";
        for (size_t i = 0; i < sizeof in_home / sizeof in_home[0]; i++) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", hh, in_home[i]);
            if (rf_path_is_beneath(dir, p))
                return "inside your home's keys, tokens or configuration (~/.ssh, ~/.gnupg, ~/.config, "
                       "~/.local/share, ~/.aws, ~/.kube, ...)";
        }
    }
    if (root && (!strcmp(dir, root) || rf_path_is_beneath(root, dir)))
        return "the instance root itself or a parent of it";
    if (root) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/instances", root);
        if (rf_path_is_beneath(dir, root) && !rf_path_is_beneath(dir, p))
            return "inside the instance root's own files (its configuration and state)";
    }
    return NULL;
}
