/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Windows plan: the merged configuration read for what Windows can
 * enforce (workspace, user environment, limits, timeout), refusing what it
 * cannot (expose, a network it cannot confine) as seed 000 does: startup
 * fails instead of pretending. */
#include "backend/windows/winapi.h"
#include "config/config.h"
#include "model/protected.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the Windows backend can never do, listed in every plan. */
static const char *const win_cannot[] = {
    "no mount view: files outside the workspace that your account can read stay readable (low integrity "
    "stops writes, not reads); expose (source -> target) is refused",
    "no network isolation: the command has the host's network (network none and allowlist cannot be "
    "enforced)",
    "registry keys your account can read stay readable (low integrity stops writes outside "
    "HKCU\\Software\\AppDataLow)",
    "other processes stay visible (low integrity keeps the command from opening them for writing)",
    "memory is the job's committed memory, not resident memory as a cgroup counts it",
    "the workspace keeps its low-integrity label after the run (the label is what lets the low-integrity "
    "command write there)",
    "a protected path that does not exist yet (e.g. .git/hooks) is not held back: the command could create it",
};

/* An absolute path, or NULL (with *err) for anything else: a relative
 * instance root would land wherever the command happens to run. */
static char *full_path(const char *path, const char *what, rf_error **err)
{
    if (strchr(path, '$')) {
        rf_error_set(err, 0, "%s %s: variables are not substituted by the Windows build", what, path);
        rf_error_hint_set(err, "write the path out in full");
        return NULL;
    }
    wchar_t *w = rf_win_wide(path), full[MAX_PATH * 2];
    DWORD n = w ? GetFullPathNameW(w, MAX_PATH * 2, full, NULL) : 0;
    free(w);
    if (n == 0 || n >= MAX_PATH * 2) {
        rf_error_set(err, 0, "%s %s: not a usable path", what, path);
        return NULL;
    }
    return rf_win_utf8(full);
}

/* path is dir or below it, compared as Windows does: without case. */
static bool beneath(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 0 && dir[n - 1] == '\\')
        n--;
    return _strnicmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '\\');
}

/* Why ws would hand the command what it exists to keep out (as the Linux
 * policy's sensitive.c), or NULL: labelling it low would make all of it
 * writable to every low-integrity process, not only this command. */
static const char *sensitive(const char *ws)
{
    const char *profile = getenv("USERPROFILE");
    if (strlen(ws) <= 3 && ws[0] && ws[1] == ':')
        return "a drive's root: everything on it would be in reach";
    if (profile && *profile && beneath(ws, profile) && beneath(profile, ws))
        return "your user profile: every file in it (keys, tokens, other projects) would be in reach";
    if (profile && *profile && beneath(profile, ws))
        return "a parent of your user profile: your whole profile would be in reach";
    static const char *const system[] = { "SystemRoot", "ProgramFiles", "ProgramFiles(x86)", "ProgramData" };
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
        if (getenv(system[i]) && *getenv(system[i]) && beneath(ws, getenv(system[i])))
            return "a system directory: the host's own files would be the sandbox's workspace";
    return NULL;
}

static int check_workspace(const rf_win_plan *p, const json_t *tree, rf_error **err)
{
    const char *why = sensitive(p->workspace);
    if (!why || json_is_true(json_object_get(tree, "allow_sensitive_workspace")))
        return 0;
    rf_error_set(err, 0, "workspace: %s is %s", p->workspace, why);
    return rf_error_hint_set(err, "run it from a project directory or pass --workspace DIR; "
                                  "--allow-sensitive-workspace (allow_sensitive_workspace: true) accepts it anyway");
}

static char *join(const char *a, const char *b)
{
    char *s = NULL;
    return asprintf(&s, "%s\\%s", a, b) < 0 ? NULL : s;
}

static int read_paths(rf_win_plan *p, const json_t *tree, const rf_win_context *ctx, rf_error **err)
{
    const char *ws = json_string_value(json_object_get(tree, "workspace"));
    char cwd[MAX_PATH * 2];
    if (!ws && !ctx->cwd && !GetCurrentDirectoryA(sizeof cwd, cwd))
        return rf_win_error(err, GetLastError(), "workspace: the current directory");
    p->workspace = full_path(ws ? ws : ctx->cwd ? ctx->cwd : cwd, "workspace", err);
    if (!p->workspace)
        return -1;
    const char *root = json_string_value(json_object_get(tree, "instance_root"));
    root = root ? root : ctx->rf_home ? ctx->rf_home : getenv("RINGFENCE_HOME");
    const char *profile = getenv("USERPROFILE");
    char *made = NULL;
    if (!root && profile && *profile)
        root = made = join(profile, ".ringfence");
    if (!root) {
        rf_error_set(err, 0, "instance_root: USERPROFILE is not set and RINGFENCE_HOME is not set");
        return rf_error_hint_set(err, "set RINGFENCE_HOME to an absolute path");
    }
    p->instance_root = full_path(root, "instance_root", err);
    free(made);
    if (!p->instance_root)
        return -1;
    p->user_env = join(p->instance_root, "runtime-user-env");
    if (!p->user_env)
        return rf_error_set(err, ENOMEM, "plan");
    /* chdir: where the command starts, inside the workspace only. */
    const char *chdir = json_string_value(json_object_get(tree, "chdir"));
    p->cwd = chdir ? full_path(chdir, "chdir", err) : strdup(p->workspace);
    if (p->cwd && chdir && !beneath(p->cwd, p->workspace)) {
        rf_error_set(err, 0, "chdir %s is outside the workspace %s", p->cwd, p->workspace);
        return -1;
    }
    return p->cwd ? 0 : -1;
}

/* Made in this order (parents first); seed 000's AppData\Roaming and
 * AppData\Local, and the Temp that TEMP and TMP name. */
static int plan_dirs(rf_win_plan *p)
{
    const char *const sub[] = { "AppData", "AppData\\Roaming", "AppData\\Local", "AppData\\Local\\Temp" };
    if (rf_strv_push(&p->dirs, p->instance_root) < 0 || rf_strv_push(&p->dirs, p->user_env) < 0)
        return -1;
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++)
        if (rf_strv_pushf(&p->dirs, "%s\\%s", p->user_env, sub[i]) < 0)
            return -1;
    return 0;
}

/* Seed 000's redirected variables, then the few the system needs to start
 * a program at all (a cleared environment without SystemRoot breaks
 * Winsock and most runtimes), then env.keep and env.set from the policy. */
static int plan_env(rf_win_plan *p, const json_t *tree)
{
    static const char *const keep[] = { "SystemRoot", "windir", "SystemDrive", "ComSpec", "PATH", "PATHEXT",
                                        "OS", "PROCESSOR_ARCHITECTURE", "NUMBER_OF_PROCESSORS", "USERNAME",
                                        "LANG", "TERM" };
    const char *u = p->user_env;
    int r = rf_strv_pushf(&p->env, "USERPROFILE=%s", u) | rf_strv_pushf(&p->env, "HOME=%s", u) |
            rf_strv_pushf(&p->env, "TEMP=%s\\AppData\\Local\\Temp", u) |
            rf_strv_pushf(&p->env, "TMP=%s\\AppData\\Local\\Temp", u) |
            rf_strv_pushf(&p->env, "APPDATA=%s\\AppData\\Roaming", u) |
            rf_strv_pushf(&p->env, "LOCALAPPDATA=%s\\AppData\\Local", u);
    for (size_t i = 0; r == 0 && i < sizeof keep / sizeof keep[0]; i++)
        if (getenv(keep[i]))
            r = rf_strv_env_set(&p->env, keep[i], getenv(keep[i]));
    /* env.keep: the caller's variables the policy names (absent: not set). */
    const json_t *keep_more = json_object_get(json_object_get(tree, "env"), "keep");
    for (size_t i = 0; r == 0 && i < json_array_size(keep_more); i++) {
        const char *name = json_string_value(json_array_get(keep_more, i));
        if (name && getenv(name))
            r = rf_strv_env_set(&p->env, name, getenv(name));
    }
    const json_t *set = json_object_get(json_object_get(tree, "env"), "set");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)set, k, v)
        if (r == 0 && json_is_string(v))
            r = rf_strv_env_set(&p->env, k, json_string_value(v));
    return r < 0 ? -1 : 0;
}

static int plan_limits(rf_win_plan *p, const json_t *tree, rf_error **err)
{
    const json_t *l = json_object_get(tree, "limits");
    const json_t *mem = json_object_get(l, "memory");
    if (mem && rf_parse_size(mem, &p->memory) < 0)
        return rf_error_set(err, 0, "limits.memory: not a size");
    json_int_t pids = json_integer_value(json_object_get(l, "pids"));
    p->pids = pids > 0 ? (uint64_t)pids : 0;
    p->cpu = json_number_value(json_object_get(l, "cpu"));
    p->timeout = json_number_value(json_object_get(l, "timeout"));
    return 0;
}

/* expose needs a source -> target view of the file system, which Windows
 * does not have: seed 000 fails the start rather than pretend. */
static int refuse_expose(const json_t *tree, rf_error **err)
{
    if (json_array_size(json_object_get(tree, "expose")) == 0)
        return 0;
    rf_error_set(err, 0, "expose (isolation.expose_paths) is not supported on Windows: there is no "
                         "source -> target view of the file system, and the paths will not be pretended "
                         "exposed");
    return rf_error_hint_set(err, "remove expose / isolation.expose_paths, or put what the command needs in "
                                  "the workspace");
}

static int refuse_backend(const json_t *tree, rf_error **err)
{
    const char *b = json_string_value(json_object_get(tree, "backend"));
    if (!b || !strcmp(b, "auto"))
        return 0;
    rf_error_set(err, 0, "backend %s: not available on Windows, whose one backend is windows", b);
    return rf_error_hint_set(err, "remove the backend setting (or set it to auto)");
}

/* deny_paths hides paths on Linux; Windows has no view to hide them from
 * (the low label stops writes, not reads): refused unless accepted weaker. */
static int plan_deny_paths(rf_win_plan *p, const json_t *tree, rf_error **err)
{
    if (json_array_size(json_object_get(tree, "deny_paths")) == 0)
        return 0;
    if (!p->accept_weaker) {
        rf_error_set(err, 0, "deny_paths: the windows backend cannot hide paths from the command (no mount view)");
        return rf_error_hint_set(err, "remove deny_paths, or accept the weaker sandbox by name with "
                                      "--accept-weaker (accept_weaker: true)");
    }
    return rf_strv_pushf(&p->warnings, "deny_paths: not enforced by the windows backend (accept_weaker): the "
                                       "command can read them where your account may");
}

/* A network setting the user wrote (not the built-in default) that
 * Windows cannot enforce is refused unless accepted as weaker; the default
 * (none) is listed in `cannot` and warned about. */
static int plan_network(rf_win_plan *p, const rf_merged *m, rf_error **err)
{
    const char *mode = json_string_value(json_object_get(json_object_get(m->tree, "network"), "mode"));
    bool asked = rf_merged_origin(m, "network.mode") != NULL;
    p->network = !mode || !strcmp(mode, "none") ? RF_WIN_NET_NONE
                 : !strcmp(mode, "host")        ? RF_WIN_NET_HOST
                                                : RF_WIN_NET_ALLOWLIST;
    if (p->network == RF_WIN_NET_HOST)
        return 0;
    const char *what = p->network == RF_WIN_NET_NONE ? "none" : "allowlist";
    if (asked && !p->accept_weaker) {
        rf_error_set(err, 0, "network: %s: the windows backend has no network isolation, so it cannot %s",
                     what, p->network == RF_WIN_NET_NONE ? "cut the network" : "confine the command to the proxy");
        return rf_error_hint_set(err, "set network to host, or accept the weaker sandbox by name with "
                                      "--accept-weaker (accept_weaker: true)");
    }
    return rf_strv_pushf(&p->warnings, "network: %s is not enforced by the windows backend%s: the command has "
                                       "the host's network", what, asked ? " (accept_weaker)" : "");
}

/* The default protected paths and the policy's protected_paths, under the
 * workspace with Windows separators. */
static int plan_protected(rf_win_plan *p, const json_t *tree)
{
    const json_t *extra = json_object_get(tree, "protected_paths");
    size_t n_default = 0;
    for (const char *const *d = rf_policy_default_protected(); *d; d++)
        n_default++;
    for (size_t i = 0; i < n_default + json_array_size(extra); i++) {
        const char *rel = i < n_default ? rf_policy_default_protected()[i]
                                        : json_string_value(json_array_get(extra, i - n_default));
        char *path = rel ? join(p->workspace, rel) : NULL;
        for (char *c = path; c && *c; c++)
            if (*c == '/')
                *c = '\\';
        if (!path || rf_strv_push_take(&p->protected, path) < 0)
            return -1;
    }
    return 0;
}

static int add_rule(rf_win_plan *p, const char *path, const char *access, const char *why)
{
    rf_win_rule *r = realloc(p->rules, (p->n_rules + 1) * sizeof(*r));
    if (!r)
        return -1;
    p->rules = r;
    r[p->n_rules] = (rf_win_rule){ strdup(path), access, why };
    return r[p->n_rules++].path ? 0 : -1;
}

static int plan_rules(rf_win_plan *p)
{
    if (add_rule(p, p->workspace, "read, write (low-integrity label)", "workspace") < 0 ||
        add_rule(p, p->user_env, "read, write (low-integrity label)",
                 "runtime-user-env: USERPROFILE, HOME, APPDATA, LOCALAPPDATA, TEMP, TMP") < 0)
        return -1;
    for (size_t i = 0; p->protected && p->protected[i]; i++)
        if (add_rule(p, p->protected[i], "read only (medium-integrity label), when it exists", "protected") < 0)
            return -1;
    if (add_rule(p, "*", "read where your account may, no write (medium integrity)", "everything else") < 0)
        return -1;
    for (size_t i = 0; i < sizeof win_cannot / sizeof win_cannot[0]; i++)
        if (rf_strv_push(&p->cannot, win_cannot[i]) < 0)
            return -1;
    return 0;
}

static int check_argv(char *const argv[], rf_error **err)
{
    if (!argv || !argv[0]) {
        rf_error_set(err, 0, "no command to run");
        return rf_error_hint_set(err, "put the command after --, e.g. ringfence run -- cmd");
    }
    for (size_t n = 0; argv[n]; n++)
        if (n >= RF_WIN_MAX_ARGS)
            return rf_error_set(err, E2BIG, "too many arguments (more than %d)", RF_WIN_MAX_ARGS);
    return 0;
}

static int fill(rf_win_plan *p, const rf_merged *m, const rf_win_context *ctx, char *const argv[],
                rf_error **err)
{
    p->accept_weaker = json_is_true(json_object_get(m->tree, "accept_weaker"));
    if (check_argv(argv, err) < 0 || refuse_backend(m->tree, err) < 0 || refuse_expose(m->tree, err) < 0 ||
        read_paths(p, m->tree, ctx, err) < 0 || check_workspace(p, m->tree, err) < 0 ||
        plan_limits(p, m->tree, err) < 0 || plan_network(p, m, err) < 0 || plan_deny_paths(p, m->tree, err) < 0)
        return -1;
    p->argv = rf_strv_copy(argv);
    if (!p->argv || plan_dirs(p) < 0 || plan_env(p, m->tree) < 0 || plan_protected(p, m->tree) < 0 ||
        plan_rules(p) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

RF_EXPORT rf_win_plan *rf_win_plan_build(const rf_config *cfg, const rf_win_context *ctx, char *const argv[],
                               rf_error **err)
{
    rf_merged m = { 0 };
    if (rf_config_merge(cfg, &m, true, err) < 0)
        return NULL;
    rf_win_plan *p = calloc(1, sizeof(*p));
    if (!p)
        rf_error_set(err, ENOMEM, "plan");
    else if (fill(p, &m, ctx, argv, err) < 0) {
        rf_win_plan_free(p);
        p = NULL;
    }
    rf_merged_clear(&m);
    return p;
}

RF_EXPORT char *const *rf_win_plan_warnings(const rf_win_plan *plan)
{
    return plan->warnings;
}

RF_EXPORT void rf_win_plan_free(rf_win_plan *p)
{
    if (!p)
        return;
    free(p->workspace);
    free(p->cwd);
    free(p->instance_root);
    free(p->user_env);
    rf_strv_free(p->dirs);
    rf_strv_free(p->protected);
    rf_strv_free(p->argv);
    rf_strv_free(p->env);
    for (size_t i = 0; i < p->n_rules; i++)
        free(p->rules[i].path);
    free(p->rules);
    rf_strv_free(p->cannot);
    rf_strv_free(p->warnings);
    free(p);
}
