/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Anthropic sandbox-runtime's settings file (~/.srt-settings.json), so its
 * users can bring their lists. Read:
 *
 *   network.allowedDomains  → network.allow_domains (and mode allowlist)
 *   network.deniedDomains   → network.deny_domains
 *   filesystem.denyRead     → deny_paths (hidden)
 *   filesystem.denyWrite    → protected_paths (workspace-relative entries)
 *
 * The rest has no exact counterpart and is reported, not guessed at:
 * ringfence's model is already "workspace writable, nothing else", so
 * allowWrite is not needed for the workspace and is not widened beyond it
 * (use expose); allowUnixSockets, allowLocalBinding (loopback is always
 * usable inside), the proxy ports and ignoreViolations do not apply. An
 * allowedDomains list that is present but empty means "no network" there
 * as here: the allowlist with no name. */
#include "config/config.h"
#include "util/error.h"

#include <stdio.h>
#include <string.h>

static int copy_strings(const json_t *list, json_t *dst)
{
    if (!list)
        return 0;
    if (!json_is_array(list))
        return -1;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        if (!json_is_string(v))
            return -1;
        json_array_append(dst, v);
    }
    return 0;
}

static void warn_unmapped(rf_config *cfg, const char *origin, const json_t *obj, const char *section,
                          const char *const *mapped)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool known = false;
        for (size_t i = 0; mapped[i] && !known; i++)
            known = !strcmp(key, mapped[i]);
        if (!known)
            rf_config_add_warning(cfg, "%s: sandbox-runtime setting %s%s%s is not used by ringfence "
                                       "(see docs/network.md and docs/config.md)",
                                  origin, section, *section ? "." : "", key);
    }
}

static int bad(const char *origin, const char *key, rf_error **err)
{
    rf_error_set(err, 0, "%s: %s: expected a list of strings", origin, key);
    return rf_error_hint_set(err, "sandbox-runtime lists are JSON arrays of strings");
}

int rf_compat_srt(rf_config *cfg, const char *origin, const json_t *root, unsigned flags, rf_error **err)
{
    const json_t *net = json_object_get(root, "network");
    const json_t *fs = json_object_get(root, "filesystem");
    json_t *out = json_object(), *n = json_object(), *allow = json_array(), *deny = json_array();
    json_t *hidden = json_array(), *protect = json_array();
    json_object_set_new(out, "network", n);
    int rc = 0;
    if (copy_strings(json_object_get(net, "allowedDomains"), allow) < 0)
        rc = bad(origin, "network.allowedDomains", err);
    else if (copy_strings(json_object_get(net, "deniedDomains"), deny) < 0)
        rc = bad(origin, "network.deniedDomains", err);
    else if (copy_strings(json_object_get(fs, "denyRead"), hidden) < 0)
        rc = bad(origin, "filesystem.denyRead", err);
    const json_t *dw = json_object_get(fs, "denyWrite");
    size_t i;
    json_t *v;
    json_array_foreach(dw, i, v) {
        const char *p = json_string_value(v);
        if (!p)
            rc = rc ? rc : bad(origin, "filesystem.denyWrite", err);
        else if (p[0] != '/' && p[0] != '~') /* relative: inside the workspace */
            json_array_append(protect, v);
        else
            rf_config_add_warning(cfg, "%s: filesystem.denyWrite %s: only workspace-relative entries are "
                                       "used (everything outside the workspace is read-only already)",
                                  origin, p);
    }
    if (rc < 0) {
        json_decref(out);
        json_decref(allow);
        json_decref(deny);
        json_decref(hidden);
        json_decref(protect);
        return -1;
    }
    if (json_object_get(net, "allowedDomains"))
        json_object_set_new(n, "mode", json_string("allowlist"));
    json_object_set_new(n, "allow_domains", allow);
    json_object_set_new(n, "deny_domains", deny);
    json_object_set_new(out, "deny_paths", hidden);
    json_object_set_new(out, "protected_paths", protect);
    warn_unmapped(cfg, origin, net, "network", (const char *const[]){ "allowedDomains", "deniedDomains", NULL });
    warn_unmapped(cfg, origin, fs, "filesystem", (const char *const[]){ "denyRead", "denyWrite", NULL });
    warn_unmapped(cfg, origin, root, "", (const char *const[]){ "network", "filesystem", NULL });
    char name[4200];
    snprintf(name, sizeof name, "%s (sandbox-runtime)", origin);
    return rf_config_add_layer(cfg, name, out, flags, err);
}
