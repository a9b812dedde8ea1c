/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding, trusting and reading the managed boundary (managed.h). */
#include "managed/managed.h"
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Only root (or, with the test override, the caller) may write it. */
static int trusted(const char *path, const struct stat *st, bool override, rf_error **err)
{
    bool owner_ok = st->st_uid == 0 || (override && st->st_uid == getuid());
    if (owner_ok && !(st->st_mode & (S_IWGRP | S_IWOTH)))
        return 0;
    rf_error_set(err, 0, "managed boundary %s: %s may write it (owner uid %u, mode %04o): refused", path,
                 owner_ok ? "a group or everyone" : "someone other than root", (unsigned)st->st_uid,
                 (unsigned)(st->st_mode & 07777));
    return rf_error_hint_set(err, "a boundary anyone but root can change bounds nothing: chown root:root and "
                                  "chmod go-w the file and its directory");
}

static int check_place(const char *path, bool override, rf_error **err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return rf_error_set(err, errno, "managed boundary %s", path);
    if (!S_ISREG(st.st_mode))
        return rf_error_set(err, 0, "managed boundary %s: not a regular file (a link is not followed)", path);
    if (trusted(path, &st, override, err) < 0)
        return -1;
    _cleanup_free_ char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (!slash)
        return dir ? 0 : rf_error_set(err, ENOMEM, "managed boundary");
    *slash = '\0';
    if (stat(*dir ? dir : "/", &st) < 0)
        return rf_error_set(err, errno, "managed boundary: its directory %s", dir);
    /* A writable directory lets its writer replace the file. */
    return trusted(*dir ? dir : "/", &st, override, err);
}

/* system_audit: {socket: PATH, required: BOOL}, the boundary's own key
 * (no policy layer has it): each run's records also to the system log's
 * daemon. */
static int check_system_audit(const json_t *s, const char *path, rf_error **err)
{
    const char *k;
    json_t *v;
    if (!json_is_object(s))
        goto bad;
    json_object_foreach((json_t *)s, k, v) {
        if (!strcmp(k, "required") && json_is_boolean(v))
            continue;
        if (!strcmp(k, "socket") && json_is_string(v) && json_string_value(v)[0] == '/' &&
            strlen(json_string_value(v)) < 108)
            continue;
        goto bad;
    }
    return 0;
bad:
    rf_error_set(err, 0, "managed boundary %s: system_audit: expected {socket: /absolute/path (shorter than 108 "
                         "bytes), required: true|false}", path);
    return rf_error_hint_set(err, "for example: system_audit: {required: true} (the socket defaults to "
                                  "/run/ringfence/audit.sock)");
}

bool rf_managed_system_audit(const json_t *boundary, const char **socket, bool *required)
{
    const json_t *s = json_object_get(boundary, "system_audit");
    if (!json_is_object(s))
        return false;
    *socket = json_string_value(json_object_get(s, "socket")) ?: "/run/ringfence/audit.sock";
    *required = json_is_true(json_object_get(s, "required"));
    return true;
}

static const char *default_path(bool *override)
{
    *override = false;
#ifdef RF_TEST_HOOKS
    /* Test-hook builds only: tests never write /etc (tests/security/audit.sh). */
    const char *t = getenv("RINGFENCE_TEST_MANAGED");
    if (t && *t) {
        *override = true;
        return t;
    }
#endif
    if (access(RF_MANAGED_PATH, F_OK) == 0 || errno != ENOENT)
        return RF_MANAGED_PATH;
    return RF_MANAGED_PATH_JSON;
}

json_t *rf_managed_load(const char *path, char **ret_path, rf_error **err)
{
    bool override = false;
    bool given = path != NULL;
    if (!path)
        path = default_path(&override);
    if (!given && !override && access(path, F_OK) < 0 && errno == ENOENT)
        return NULL; /* no boundary on this machine */
    /* A file named for a check (policy check --within) bounds no run: any will do. */
    if (!given && check_place(path, override, err) < 0)
        return NULL;
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    if (rf_config_read_file(path, true, &text, &len, err) < 0)
        return NULL;
    if (len > RF_MANAGED_MAX_BYTES) {
        rf_error_set(err, EFBIG, "managed boundary %s", path);
        return NULL;
    }
    size_t n = strlen(path);
    bool json = n > 5 && !strcmp(path + n - 5, ".json");
    json_t *b = json ? json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL) : rf_yaml_parse(text, len, path, err);
    if (!b || !json_is_object(b)) {
        json_decref(b);
        rf_error_set(err, 0, "managed boundary %s: not a %s object", path, json ? "JSON" : "YAML");
        return NULL;
    }
    rf_config_normalise_network(b);
    /* The one key of a boundary that is not a policy's: checked apart. */
    json_t *sys = json_incref(json_object_get(b, "system_audit"));
    json_object_del(b, "system_audit");
    if ((sys && check_system_audit(sys, path, err) < 0) || rf_schema_check(b, path, err) < 0) {
        json_decref(sys);
        json_decref(b);
        return NULL;
    }
    if (sys)
        json_object_set_new(b, "system_audit", sys);
    if (ret_path && !(*ret_path = strdup(path))) {
        json_decref(b);
        rf_error_set(err, ENOMEM, "managed boundary");
        return NULL;
    }
    return b;
}
