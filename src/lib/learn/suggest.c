/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From what the observer saw to the smallest set of rules that would have
 * let the command run (ringfence learn, run --explain-denials): paths are
 * grouped into the directory a person would expose (~/.pyenv, not each of
 * its 3,000 files; ~/.config/git, not all of ~/.config), read-write only
 * where a write was tried. Secrets and places that persist across sessions
 * are flagged with why and never suggested: learning must not teach the
 * sandbox to hand out ~/.ssh because a command reached for it.
 *
 * The narrowest rule that works: a group is never the whole host, a
 * top-level directory (/home, /root, /etc, /usr, /tmp), your home, a
 * directory holding it, nor the workspace or a parent of it (what lies
 * beside it); such a group is named as flagged, with why, and the
 * directory the path is in (or the path) is suggested instead. Another
 * user's home, or a source that belongs to another user (the one lstat
 * here), is flagged. Otherwise pure; unit-tested with table cases. */
#include "learn/suggest.h"
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* Under the home: secrets and shell start-up files (persistence). */
static const struct {
    const char *rel, *why;
} home_flags[] = {
    { ".ssh", "ssh keys and the hosts they open" },
    { ".gnupg", "GnuPG private keys" },
    { ".aws", "AWS credentials" },
    { ".azure", "Azure credentials" },
    { ".config/gcloud", "Google Cloud credentials" },
    { ".kube", "Kubernetes credentials" },
    { ".docker", "Docker registry credentials" },
    { ".config/gh", "the GitHub CLI's token" },
    { ".netrc", "passwords for hosts" },
    { ".git-credentials", "git's stored passwords" },
    { ".npmrc", "may hold a registry token" },
    { ".pypirc", "PyPI upload credentials" },
    { ".cargo/credentials.toml", "crates.io token" },
    { ".cargo/credentials", "crates.io token" },
    { ".password-store", "pass's passwords" },
    { ".local/share/keyrings", "the desktop keyring" },
    { ".config/autostart", "runs at login (persistence)" },
    { ".config/systemd", "user services (persistence)" },
    { ".bashrc", "shell start-up file (persistence)" },
    { ".bash_profile", "shell start-up file (persistence)" },
    { ".bash_login", "shell start-up file (persistence)" },
    { ".profile", "shell start-up file (persistence)" },
    { ".zshrc", "shell start-up file (persistence)" },
    { ".zprofile", "shell start-up file (persistence)" },
    { ".zshenv", "shell start-up file (persistence)" },
    { ".config/fish", "shell start-up files (persistence)" },
    { ".bash_history", "your shell history" },
    { ".zsh_history", "your shell history" },
};

/* Anywhere: sockets that are root on the host, and system secrets. */
static const struct {
    const char *path, *why;
} abs_flags[] = {
    { "/var/run", "daemon sockets (docker, podman: root on the host)" },
    { "/run", "daemon sockets (docker, podman: root on the host)" },
    { "/etc/shadow", "password hashes" },
    { "/etc/gshadow", "password hashes" },
    { "/etc/sudoers", "sudo's rules" },
    { "/etc/ssh", "the host's ssh keys" },
    { "/root", "root's home" },
};

/* Tools whose home directory a variable names. */
static const struct {
    const char *rel, *var;
} tool_vars[] = {
    { ".pyenv", "PYENV_ROOT" }, { ".nvm", "NVM_DIR" },       { ".rustup", "RUSTUP_HOME" },
    { ".cargo", "CARGO_HOME" }, { ".sdkman", "SDKMAN_DIR" }, { ".volta", "VOLTA_HOME" },
    { ".local/share/uv", "UV_PYTHON_INSTALL_DIR" },
};

static bool beneath(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

/* Relative to home, or NULL. */
static const char *home_rel(const char *path, const char *home)
{
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home);
    return !strncmp(path, home, n) && path[n] == '/' ? path + n + 1 : NULL;
}

/* Another user's home: a child of /home (or Fedora Silverblue's
 * /var/home) other than the caller's own. A home elsewhere is found by
 * its owner (owner_flag). */
static bool foreign_home(const char *host, const char *home)
{
    static const char *const bases[] = { "/home", "/var/home" };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        size_t n = strlen(bases[i]);
        if (strncmp(host, bases[i], n) || host[n] != '/' || !host[n + 1])
            continue;
        size_t c = n + 1 + strcspn(host + n + 1, "/"); /* the end of /home/NAME */
        if (!home || strncmp(host, home, c) || (home[c] != '\0' && home[c] != '/'))
            return true;
    }
    return false;
}

const char *rf_suggest_flag(const char *host, const char *home)
{
    if (foreign_home(host, home))
        return "another user's home";
    const char *rel = home_rel(host, home);
    for (size_t i = 0; rel && i < sizeof home_flags / sizeof home_flags[0]; i++)
        if (beneath(rel, home_flags[i].rel))
            return home_flags[i].why;
    for (size_t i = 0; i < sizeof abs_flags / sizeof abs_flags[0]; i++)
        if (beneath(host, abs_flags[i].path))
            return abs_flags[i].why;
    return NULL;
}

/* The first n components of rel (or all it has) into out. */
static void first_components(const char *rel, size_t n, char *out, size_t len)
{
    const char *p = rel;
    for (size_t i = 0; i < n && *p; i++) {
        p += strcspn(p, "/");
        if (i + 1 < n && *p == '/')
            p++;
    }
    size_t k = (size_t)(p - rel);
    while (k > 0 && rel[k - 1] == '/')
        k--;
    snprintf(out, len, "%.*s", (int)k, rel);
}

/* Depth of the directory a person would expose for rel (under home). */
static size_t home_depth(const char *rel)
{
    if (beneath(rel, ".local/share") || beneath(rel, ".local/state") || beneath(rel, ".local/lib"))
        return 3;
    if (beneath(rel, ".config") || beneath(rel, ".cache") || beneath(rel, ".local") || beneath(rel, ".cargo"))
        return 2;
    return 1;
}

void rf_suggest_group(const char *host, const char *home, char *out, size_t len)
{
    const char *rel = home_rel(host, home);
    char part[4096];
    if (host[0] != '/') { /* not from the observer, which keeps absolute paths only */
        snprintf(out, len, "%s", host);
        return;
    }
    if (rel) {
        first_components(rel, home_depth(rel), part, sizeof part);
        snprintf(out, len, "%s/%s", home, part);
        return;
    }
    /* /etc: the file itself (the sandbox's /etc is a curated copy);
     * elsewhere two levels: /opt/node, /srv/data. */
    size_t depth = beneath(host, "/etc") ? 64 : 2;
    first_components(host + 1, depth, part, sizeof part);
    snprintf(out, len, "/%s", part);
}

const char *rf_suggest_too_broad(const char *dir, const char *home, const char *workspace)
{
    if (dir[0] != '/')
        return NULL;
    if (!strcmp(dir, "/"))
        return "the whole host";
    if (!strchr(dir + 1, '/'))
        return "a top-level directory as a whole";
    if (home && home[0] == '/' && !strcmp(dir, home))
        return "your home directory as a whole";
    if (home && home[0] == '/' && beneath(home, dir))
        return "it holds your home directory";
    if (workspace && workspace[0] == '/' && beneath(workspace, dir))
        return "it holds the workspace (and what lies beside it)";
    return NULL;
}

/* The directory path is in, into out. */
static void parent_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash && slash != path ? (size_t)(slash - path) : 1;
    snprintf(out, len, "%.*s", (int)n, path);
}

const char *rf_suggest_source(const char *host, const char *home, const char *workspace, char *out, size_t len,
                              char *wider, size_t wlen)
{
    char cand[4096];
    rf_suggest_group(host, home, cand, sizeof cand);
    const char *why = rf_suggest_too_broad(cand, home, workspace);
    snprintf(wider, wlen, "%s", why ? cand : "");
    if (!why) {
        snprintf(out, len, "%s", cand);
        return NULL;
    }
    parent_of(host, cand, sizeof cand);
    if (!rf_suggest_too_broad(cand, home, workspace)) {
        snprintf(out, len, "%s", cand);
        return why;
    }
    const char *self = rf_suggest_too_broad(host, home, workspace);
    snprintf(out, len, "%s", self ? "" : host);
    if (self && strcmp(wider, host)) /* the path itself is what is refused, said so */
        snprintf(wider, wlen, "%s", host);
    return self ? self : why;
}

/* The rule's target for a path looked for in the sandbox's own home:
 * the same place relative to that home. */
static void home_target(const char *inside, const char *host, const char *group, char *out, size_t len)
{
    size_t hl = strlen(host), gl = strlen(group);
    /* inside ends with the same tail as host; group is a prefix of host */
    if (hl < gl || strlen(inside) < hl - gl) {
        snprintf(out, len, "%s", inside);
        return;
    }
    size_t tail = hl - gl;
    snprintf(out, len, "%.*s", (int)(strlen(inside) - tail), inside);
}

static json_t *find_rule(json_t *rules, const char *source)
{
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r) if (!strcmp(json_string_value(json_object_get(r, "source")), source)) return r;
    return NULL;
}

/* A source the caller does not own, nor root: another user's files. */
static const char *owner_flag(const char *source)
{
    struct stat st;
    if (lstat(source, &st) < 0 || st.st_uid == geteuid() || st.st_uid == 0)
        return NULL;
    return "belongs to another user";
}

static void count_path(json_t *r, const char *host, bool write)
{
    if (write)
        json_object_set_new(r, "mode", json_string("rw"));
    json_t *paths = json_object_get(r, "paths");
    if (json_array_size(paths) < 5)
        json_array_append_new(paths, json_string(host));
    json_object_set_new(r, "count", json_integer(json_integer_value(json_object_get(r, "count")) + 1));
}

/* A source too broad to suggest: named, with why, never offered. */
static void add_too_broad(json_t *rules, const char *source, const char *why, const char *host)
{
    json_t *r = find_rule(rules, source);
    if (!r) {
        char text[256];
        snprintf(text, sizeof text, "too broad: %s; a narrower rule is suggested where one works", why);
        r = json_pack("{s:s, s:s, s:s, s:o, s:i, s:s, s:b}", "source", source, "mode", "ro", "why",
                      "a rule that would have covered what was looked for", "paths", json_array(), "count", 0,
                      "flagged", text, "never", 1);
        json_array_append_new(rules, r);
    }
    count_path(r, host, false);
}

static json_t *new_rule(const char *group, const char *host, const char *seen, const char *home,
                        const char *target)
{
    bool protect = !strcmp(seen, "protected"), in_home = !strcmp(seen, "home");
    bool readonly = protect || !strcmp(seen, "read-only");
    const char *flag = rf_suggest_flag(host, home);
    if (!flag)
        flag = rf_suggest_flag(group, home);
    if (!flag && !protect)
        flag = owner_flag(group);
    json_t *r = json_pack("{s:s, s:s, s:s, s:o, s:i}", "source", group, "mode", "ro", "why",
                          readonly ? "written to, but read-only inside"
                          : in_home ? "looked for in the sandbox's own home; yours has it"
                                    : "looked for, hidden inside",
                          "paths", json_array(), "count", 0);
    if (in_home)
        json_object_set_new(r, "target", json_string(target));
    /* "never": no flag is offered at all, not even with a warning. */
    if (protect)
        json_object_set_new(r, "flagged", json_string("a protected path of the workspace (hooks and "
                                                      "start-up files run outside the sandbox)"));
    else if (flag)
        json_object_set_new(r, "flagged", json_string(flag));
    else if (readonly && (beneath(group, "/usr") || beneath(group, "/etc") || beneath(group, "/bin") ||
                          beneath(group, "/lib")))
        json_object_set_new(r, "flagged", json_string("a system directory: never made writable"));
    if (protect || (json_object_get(r, "flagged") && !flag))
        json_object_set_new(r, "never", json_true());
    return r;
}

static void add_path(json_t *rules, const json_t *rec, const char *home, const char *workspace)
{
    const char *inside = json_string_value(json_object_get(rec, "path"));
    const char *host = json_string_value(json_object_get(rec, "host"));
    const char *seen = json_string_value(json_object_get(rec, "seen"));
    if (!inside || !host || !seen || host[0] != '/')
        return;
    char group[4096], wider[4096], target[4096];
    if (!strcmp(seen, "protected")) { /* itself: never a group around it */
        snprintf(group, sizeof group, "%s", host);
    } else {
        const char *why = rf_suggest_source(host, home, workspace, group, sizeof group, wider, sizeof wider);
        if (why)
            add_too_broad(rules, wider, why, host);
        if (!group[0])
            return;
    }
    bool in_home = !strcmp(seen, "home");
    if (in_home)
        home_target(inside, host, group, target, sizeof target);
    json_t *r = find_rule(rules, group);
    if (!r) {
        r = new_rule(group, host, seen, home, target);
        json_array_append_new(rules, r);
    }
    count_path(r, host, json_is_true(json_object_get(rec, "write")));
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* keep_env: PATH when it names a directory a rule exposes; a tool's own
 * variable when its directory is exposed and the caller has it set. */
static void add_env(json_t *env, const json_t *rules, const char *home, char *const *envp)
{
    const char *path = env_get(envp, "PATH");
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r) {
        if (json_object_get(r, "flagged"))
            continue;
        const char *src = json_string_value(json_object_get(r, "source"));
        char *copy = path ? strdup(path) : NULL, *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
            if (beneath(d, src) && !json_object_get(env, "PATH")) {
                char why[512];
                snprintf(why, sizeof why, "your PATH names %s, which the rule for %s exposes", d, src);
                json_object_set_new(env, "PATH", json_string(why));
            }
        free(copy);
        const char *rel = home_rel(src, home);
        for (size_t t = 0; rel && t < sizeof tool_vars / sizeof tool_vars[0]; t++)
            if (beneath(rel, tool_vars[t].rel) && env_get(envp, tool_vars[t].var) &&
                beneath(env_get(envp, tool_vars[t].var), src)) { /* it names this very directory */
                char why[512];
                snprintf(why, sizeof why, "set in your environment; the tool under %s reads it", src);
                json_object_set_new(env, tool_vars[t].var, json_string(why));
            }
    }
}

static json_t *refused_names(const char *network_json)
{
    json_t *out = json_array();
    json_t *net = network_json ? json_loads(network_json, 0, NULL) : NULL;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(net, "blocked_destinations"), i, d) {
        const char *host = json_string_value(json_object_get(d, "host"));
        const char *reason = json_string_value(json_object_get(d, "reason"));
        if (host)
            json_array_append_new(out, json_pack("{s:s, s:i, s:s}", "name", host, "port",
                                                 (int)json_integer_value(json_object_get(d, "port")), "why",
                                                 reason ? reason : "refused by the proxy"));
    }
    json_decref(net);
    return out;
}

RF_EXPORT char *rf_observe_suggest(const char *observations, const char *network_json, const char *home,
                                   char *const *envp, rf_error **err)
{
    return rf_observe_suggest_in(observations, network_json, home, NULL, envp, err);
}

RF_EXPORT char *rf_observe_suggest_in(const char *observations, const char *network_json, const char *home,
                                      const char *workspace, char *const *envp, rf_error **err)
{
    json_error_t jerr;
    json_t *obs = json_loads(observations ? observations : "{}", 0, &jerr);
    if (!json_is_object(obs)) {
        json_decref(obs);
        rf_error_set(err, EINVAL, "observations: not a JSON object");
        return NULL;
    }
    json_t *rules = json_array(), *env = json_object();
    size_t i;
    json_t *rec;
    json_array_foreach(json_object_get(obs, "paths"), i, rec) add_path(rules, rec, home, workspace);
    add_env(env, rules, home, envp);
    json_t *out = json_pack("{s:o, s:o, s:o, s:I, s:I, s:I}", "expose", rules, "keep_env", env, "allow_domain",
                            refused_names(network_json), "dropped",
                            json_integer_value(json_object_get(obs, "dropped")), "unreadable",
                            json_integer_value(json_object_get(obs, "unreadable")), "notifications",
                            json_integer_value(json_object_get(obs, "notifications")));
    json_decref(obs);
    char *s = out ? json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(out);
    if (!s)
        rf_error_set(err, ENOMEM, "suggest");
    return s;
}
