/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the sandbox shows at a path, worked out from the plan's mounts (the
 * same list the setup child built the root from): the mount that covers a
 * path is the last one in the list whose target is the path or one of its
 * parents, since each mount is made over the ones before it. */
#include "observe/observe.h"
#include "util/strv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct view_mount {
    rf_mount_type type;
    char *source, *target;
    size_t tlen;
    bool writable;
    bool protect;    /* a remount-ro of a protected path (.git/hooks, .envrc) */
    bool denied;     /* a mask the policy asked for (deny_paths, the instance
                        root): hidden on purpose, never suggested nor offered */
} view_mount;

struct rf_view {
    view_mount *m;
    size_t n;
    char *home_inside;  /* HOME of the command */
    char *home_caller;  /* HOME of the caller, or NULL */
};

rf_view *rf_view_new(const rf_plan *plan, const char *caller_home)
{
    rf_view *v = calloc(1, sizeof *v);
    if (!v || !(v->m = calloc(plan->n_mounts + 1, sizeof *v->m))) {
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *pm = &plan->mounts[i];
        view_mount *m = &v->m[v->n++];
        m->type = pm->type;
        m->source = pm->source ? strdup(pm->source) : NULL;
        m->target = strdup(pm->target);
        m->tlen = m->target ? strlen(m->target) : 0;
        m->writable = pm->writable;
        m->protect = pm->why && !strcmp(pm->why, "protected");
        m->denied = rf_mount_is_mask(pm) && pm->why && (!strcmp(pm->why, "denied") || !strcmp(pm->why, "instance-root"));
    }
    const char *home = rf_strv_env_get(plan->env, "HOME"); /* "HOME=..." */
    v->home_inside = home && strchr(home, '=') ? strdup(strchr(home, '=') + 1) : NULL;
    v->home_caller = caller_home && caller_home[0] == '/' ? strdup(caller_home) : NULL;
    if (v->home_caller)
        rf_view_normalise(v->home_caller);
    return v;
}

void rf_view_free(rf_view *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        free(v->m[i].source);
        free(v->m[i].target);
    }
    free(v->m);
    free(v->home_inside);
    free(v->home_caller);
    free(v);
}

bool rf_view_normalise(char *path)
{
    if (path[0] != '/')
        return false;
    char *out = path;
    const char *in = path;
    while (*in) {
        while (*in == '/')
            in++;
        size_t n = strcspn(in, "/");
        if (n == 0)
            break;
        if (n == 1 && in[0] == '.') {
            in += n;
            continue;
        }
        if (n == 2 && in[0] == '.' && in[1] == '.') {
            while (out > path && *--out != '/')
                ;
            in += n;
            continue;
        }
        *out++ = '/';
        memmove(out, in, n);
        out += n;
        in += n;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
    return true;
}

/* prefix is path or one of its parent directories. */
static bool beneath(const char *path, const char *prefix, size_t plen)
{
    if (plen == 1 && prefix[0] == '/')
        return true;
    return !strncmp(path, prefix, plen) && (path[plen] == '\0' || path[plen] == '/');
}

static bool exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* The directory path would be made in exists (path has a parent). */
static bool parent_exists(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return slash == path;
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    struct stat st;
    return stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
}

/* path is a parent of a mount's target: a directory inside too (made
 * for the mount), whatever covers it. */
static bool mount_parent(const rf_view *v, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < v->n; i++)
        if (v->m[i].target && v->m[i].tlen > n && beneath(v->m[i].target, path, n))
            return true;
    return false;
}

/* The covering mount, and whether a remount-ro over it applies. */
static const view_mount *covering(const rf_view *v, const char *path, bool *ro_over, bool *protect)
{
    *ro_over = *protect = false;
    for (size_t i = v->n; i-- > 0;) {
        const view_mount *m = &v->m[i];
        if (!m->target || !beneath(path, m->target, m->tlen))
            continue;
        if (m->type == RF_MOUNT_RO_SELF) {
            *ro_over = true;
            *protect |= m->protect;
            continue;
        }
        return m;
    }
    return NULL;
}

/* A path in the command's home that the caller's home has: the command
 * looked for your ~/X where ringfence put its own home. */
static rf_seen in_home(const rf_view *v, const char *path, char *host, size_t hostlen)
{
    if (!v->home_inside || !v->home_caller)
        return RF_SEEN_IGNORED;
    size_t hl = strlen(v->home_inside);
    if (!beneath(path, v->home_inside, hl) || !path[hl])
        return RF_SEEN_IGNORED;
    if (snprintf(host, hostlen, "%s%s", v->home_caller, path + hl) >= (int)hostlen || !exists(host))
        return RF_SEEN_IGNORED;
    return RF_SEEN_HOME;
}

rf_seen rf_view_classify(const rf_view *v, const char *path, bool write, char *host, size_t hostlen)
{
    static const char *const kernel[] = { "/proc", "/dev", "/sys" };
    for (size_t i = 0; i < 3; i++)
        if (beneath(path, kernel[i], strlen(kernel[i])))
            return RF_SEEN_IGNORED;
    if (mount_parent(v, path))
        return RF_SEEN_IGNORED;
    bool ro_over, protect;
    const view_mount *m = covering(v, path, &ro_over, &protect);
    snprintf(host, hostlen, "%s", path);
    if (m && m->type == RF_MOUNT_SYMLINK)
        return RF_SEEN_IGNORED; /* /bin/x: the host resolves it the same way */
    if (m && m->denied)
        return RF_SEEN_IGNORED; /* deny_paths: the user's own word, not a gap */
    if (m && m->type == RF_MOUNT_BIND && m->source) {
        const char *rest = path + (m->tlen == 1 ? 0 : m->tlen);
        if (snprintf(host, hostlen, "%s%s", m->source, rest) >= (int)hostlen)
            return RF_SEEN_IGNORED;
        bool same = !strcmp(m->source, m->target);
        if (!exists(host) && write && parent_exists(host)) /* a new file in a directory shown */
            return protect                          ? RF_SEEN_PROTECTED
                   : !m->writable || ro_over ? RF_SEEN_READONLY
                                             : RF_SEEN_IGNORED;
        if (!exists(host)) { /* not there inside either; maybe in your home */
            rf_seen h = in_home(v, path, host, hostlen);
            if (h == RF_SEEN_HOME || !same)
                return h;
            return RF_SEEN_IGNORED;
        }
        if (write && protect)
            return RF_SEEN_PROTECTED; /* read-only on purpose: never suggested */
        if (write && (!m->writable || ro_over))
            return RF_SEEN_READONLY;
        return RF_SEEN_VISIBLE;
    }
    if (m && m->type == RF_MOUNT_COPY)
        return write && !strcmp(path, m->target) ? RF_SEEN_READONLY : RF_SEEN_VISIBLE;
    /* The root's tmpfs, a mask, the private /tmp: the host's path, if any,
     * is hidden. */
    return exists(path) ? RF_SEEN_HIDDEN : RF_SEEN_IGNORED;
}
