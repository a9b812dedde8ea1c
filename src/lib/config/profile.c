/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profiles: named policy layers shipped as data files (docs/profiles.md).
 * A profile is an ordinary ringfence YAML or JSON file, read by the same
 * loader as --config (so an error names the file, line and setting); this
 * module only finds it by name. Directories searched, first match wins:
 *   $RINGFENCE_PROFILE_PATH (colon-separated; tests, packagers)
 *   $XDG_CONFIG_HOME/ringfence/profiles, else ~/.config/ringfence/profiles
 *   DATADIR/ringfence/profiles (installed)
 *   the source tree's share/ringfence/profiles (a build run in place, where
 *   nothing is installed)
 * so a user's own file of the same name replaces the shipped one. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RF_PROFILE_DATADIR
#define RF_PROFILE_DATADIR "/usr/share/ringfence/profiles"
#endif
#ifndef RF_PROFILE_SRCDIR
#define RF_PROFILE_SRCDIR ""
#endif

#define RF_PROFILE_MAX_NAME 64

static inline void strv_freep(char ***v) { rf_strv_free(*v); }
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))
#define RF_PROFILE_MAX_DIRS 16
#define RF_PROFILE_MAX_LIST 512

static const char *const exts[] = { "yaml", "yml", "json" };

bool rf_profile_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > RF_PROFILE_MAX_NAME || name[0] == '.' || name[0] == '-')
        return false;
    return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == n;
}

static char *user_profile_dir(void)
{
    char *d = NULL;
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/')
        return asprintf(&d, "%s/ringfence/profiles", xdg) < 0 ? NULL : d;
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    return home && home[0] == '/' && asprintf(&d, "%s/.config/ringfence/profiles", home) >= 0 ? d : NULL;
}

/* The source tree's profiles, compiled in for a build run in place: only
 * where nothing is installed, and only from a directory that root or we
 * own and nobody else may write. An installed binary built in /tmp/build
 * must not read profiles someone later puts there. */
static bool srcdir_usable(void)
{
    struct stat st;
    if (stat(RF_PROFILE_DATADIR, &st) == 0)
        return false;
    return stat(RF_PROFILE_SRCDIR, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & 022) &&
           (st.st_uid == 0 || st.st_uid == geteuid());
}

/* The search path, in order; a malloc'd strv. */
static char **search_dirs(void)
{
    char **dirs = NULL;
    const char *env = getenv("RINGFENCE_PROFILE_PATH");
    if (env && *env) {
        _cleanup_free_ char *copy = strdup(env);
        char *save = NULL;
        for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t && rf_strv_len(dirs) < RF_PROFILE_MAX_DIRS;
             t = strtok_r(NULL, ":", &save))
            if (t[0] == '/')
                rf_strv_push(&dirs, t);
    }
    char *user = user_profile_dir();
    if (user)
        rf_strv_push_take(&dirs, user);
    rf_strv_push(&dirs, RF_PROFILE_DATADIR);
    if (RF_PROFILE_SRCDIR[0] && srcdir_usable())
        rf_strv_push(&dirs, RF_PROFILE_SRCDIR);
    return dirs;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* name of dir/NAME.EXT if EXT is one of ours, else NULL. */
static char *profile_name_of(const char *file)
{
    const char *dot = strrchr(file, '.');
    if (!dot)
        return NULL;
    for (size_t i = 0; i < RF_ARRAY_SIZE(exts); i++)
        if (!strcmp(dot + 1, exts[i])) {
            char *name = strndup(file, (size_t)(dot - file));
            if (name && rf_profile_name_ok(name))
                return name;
            free(name);
        }
    return NULL;
}

RF_EXPORT char **rf_profile_list(rf_error **err)
{
    _cleanup_strv_ char **dirs = search_dirs();
    char **names = NULL;
    for (size_t i = 0; dirs && dirs[i]; i++) {
        _cleanup_closedir_ DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) && rf_strv_len(names) < RF_PROFILE_MAX_LIST) {
            char *name = profile_name_of(e->d_name);
            if (name && rf_strv_push_unique(&names, name) < 0) {
                free(name);
                rf_strv_free(names);
                rf_error_set(err, ENOMEM, "profiles");
                return NULL;
            }
            free(name);
        }
    }
    if (!names && !(names = calloc(1, sizeof(char *))))
        rf_error_set(err, ENOMEM, "profiles");
    else
        qsort(names, rf_strv_len(names), sizeof(char *), cmp_str);
    return names;
}

/* The error for an unknown name: the closest known one, if close. */
static void unknown_profile(const char *name, rf_error **err)
{
    rf_error_set(err, ENOENT, "unknown profile '%s'", name);
    _cleanup_strv_ char **names = rf_profile_list(NULL);
    const char *best = names ? rf_schema_suggest(name, (const char *const *)names) : NULL;
    if (best)
        rf_error_hint_set(err, "did you mean '%s'? 'ringfence profile list' shows them all", best);
    else
        rf_error_hint_set(err, "'ringfence profile list' shows the profiles there are");
}

RF_EXPORT char *rf_profile_find(const char *name, rf_error **err)
{
    if (!rf_profile_name_ok(name)) {
        rf_error_set(err, EINVAL, "profile name '%s': use lower-case letters, digits, '-', '_' and '.'",
                     name ? name : "");
        return NULL;
    }
    _cleanup_strv_ char **dirs = search_dirs();
    for (size_t i = 0; dirs && dirs[i]; i++)
        for (size_t j = 0; j < RF_ARRAY_SIZE(exts); j++) {
            char *p = NULL;
            if (asprintf(&p, "%s/%s.%s", dirs[i], name, exts[j]) < 0) {
                rf_error_set(err, ENOMEM, "profile");
                return NULL;
            }
            if (access(p, F_OK) == 0)
                return p;
            free(p);
        }
    unknown_profile(name, err);
    return NULL;
}

int rf_config_load_profiles(rf_config *cfg, const char *const *names, unsigned flags, rf_error **err)
{
    for (size_t i = 0; names && names[i]; i++) {
        _cleanup_free_ char *path = rf_profile_find(names[i], err);
        if (!path)
            return -1;
        if (rf_config_load_file_flags(cfg, path, RF_CONFIG_FORMAT_RINGFENCE, flags, err) < 0)
            return -1;
    }
    return 0;
}
