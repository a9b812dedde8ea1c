/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Canonical words of one command, for the seed's patterns that name a
 * command and a flag or subcommand (rm -rf, kill -9, git push, npm install
 * -g, apt install, docker run): the same request spelled another way is
 * brought back to the spelling the pattern knows. Only the spellings those
 * programs themselves accept are mapped; the table is short on purpose. */
#include "guard/guard.h"
#include "util/strv.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *rf_guard_alias(const char *name)
{
    static const char *const map[][2] = {
        { "apt-get", "apt" }, { "aptitude", "apt" }, { "pip3", "pip" }, { "pip2", "pip" },
        { "doas", "sudo" }, { "pkexec", "sudo" }, { "podman", "docker" }, { "nerdctl", "docker" },
        { "microdnf", "dnf" }, { "dnf5", "dnf" },
    };
    if (rf_guard_is_shell(name))
        return "sh";
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(name, map[i][0]))
            return map[i][1];
    return name;
}

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

static int set_word(char **cw, size_t i, const char *s)
{
    char *c = strdup(s);
    if (!c)
        return -1;
    free(cw[i]);
    cw[i] = c;
    return 0;
}

static void remove_word(char **cw, size_t i)
{
    free(cw[i]);
    memmove(&cw[i], &cw[i + 1], (rf_strv_len(cw) - i) * sizeof(*cw)); /* moves the NULL too */
}

static bool is_kill_signal(const char *s)
{
    return !strcmp(s, "9") || !strcasecmp(s, "KILL") || !strcasecmp(s, "SIGKILL");
}

/* kill -s KILL, -n 9, --signal=KILL, -KILL, -SIGKILL → kill -9 */
static int kill_signals(char **cw)
{
    for (size_t i = 1; cw[i]; i++) {
        const char *t = cw[i];
        bool sep = !strcmp(t, "-s") || !strcmp(t, "-n") || !strcmp(t, "--signal");
        if (sep && cw[i + 1] && is_kill_signal(cw[i + 1])) {
            remove_word(cw, i + 1);
        } else if (!((!strncmp(t, "--signal=", 9) && is_kill_signal(t + 9)) ||
                     (!strncmp(t, "-s", 2) && t[2] && is_kill_signal(t + 2)) ||
                     (t[0] == '-' && is_kill_signal(t + 1)))) {
            continue;
        }
        if (set_word(cw, i, "-9") < 0)
            return -1;
    }
    return 0;
}

/* Options before the subcommand (git -C dir push → git push). */
static void drop_global_options(char **cw, const char *const *with_value)
{
    while (cw[1] && cw[1][0] == '-' && strcmp(cw[1], "--")) {
        bool value = in_list(cw[1], with_value);
        remove_word(cw, 1);
        if (value && cw[1])
            remove_word(cw, 1);
    }
}

static int npm_words(char **cw)
{
    static const char *const install[] = { "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta",
                                           "isntal", "isntall", "add", NULL };
    bool sub_seen = false;
    for (size_t i = 1; cw[i]; i++) {
        if (!strcmp(cw[i], "--global") || !strcmp(cw[i], "--location=global")) {
            if (set_word(cw, i, "-g") < 0)
                return -1;
        } else if (cw[i][0] != '-' && !sub_seen) {
            sub_seen = true;
            if (in_list(cw[i], install) && set_word(cw, i, "install") < 0)
                return -1;
        }
    }
    return 0;
}

/* -rfv → -r -f -v (letters only, so -9 and -j4 stay whole). */
static int split_bundles(char ***cw)
{
    for (size_t i = 1; (*cw)[i] && strcmp((*cw)[i], "--"); i++) {
        const char *t = (*cw)[i];
        size_t n = strlen(t);
        if (t[0] != '-' || n < 3 || strspn(t + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != n - 1)
            continue;
        char **out = NULL;
        for (size_t k = 0; k < i; k++)
            if (rf_strv_push(&out, (*cw)[k]) < 0)
                goto oom;
        for (size_t k = 1; k < n; k++)
            if (rf_strv_push(&out, (char[]){ '-', t[k], '\0' }) < 0)
                goto oom;
        for (size_t k = i + 1; (*cw)[k]; k++)
            if (rf_strv_push(&out, (*cw)[k]) < 0)
                goto oom;
        rf_strv_free(*cw);
        *cw = out;
        i += n - 2;
        continue;
    oom:
        rf_strv_free(out);
        return -1;
    }
    return 0;
}

static int rm_flags(char **cw)
{
    for (size_t i = 1; cw[i] && strcmp(cw[i], "--"); i++) {
        const char *t = cw[i];
        const char *to = !strcmp(t, "-R") || !strcmp(t, "--recursive") ? "-r" : !strcmp(t, "--force") ? "-f" : NULL;
        if (to && set_word(cw, i, to) < 0)
            return -1;
    }
    return 0;
}

int rf_guard_canonicalise(char ***cw, const char *name)
{
    static const char *const git_values[] = { "-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                              "--super-prefix", "--config-env", NULL };
    static const char *const docker_values[] = { "-H", "--host", "-c", "--context", "--config", "-l",
                                                 "--log-level", "--tlscacert", "--tlscert", "--tlskey", NULL };
    if (set_word(*cw, 0, name) < 0)
        return -1;
    if (!strcmp(name, "kill") && kill_signals(*cw) < 0)
        return -1;
    if (!strcmp(name, "git"))
        drop_global_options(*cw, git_values);
    if (!strcmp(name, "docker")) {
        drop_global_options(*cw, docker_values);
        if ((*cw)[1] && !strcmp((*cw)[1], "container"))
            remove_word(*cw, 1);
    }
    if (!strcmp(name, "npm") && npm_words(*cw) < 0)
        return -1;
    if (split_bundles(cw) < 0)
        return -1;
    if (!strcmp(name, "rm") && rm_flags(*cw) < 0)
        return -1;
    return 0;
}

static int push_joined(char ***out, const char *const *parts, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(parts[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(parts[i]);
        if (i)
            *p++ = ' ';
        memcpy(p, parts[i], k);
        p += k;
    }
    *p = '\0';
    if (rf_strv_contains(*out, s)) {
        free(s);
        return 0;
    }
    return rf_strv_push_take(out, s);
}

/* cmd NONOPTS; and per option o: cmd o NONOPTS, cmd NONOPT1 o NONOPTS... */
int rf_guard_variants(char *const *cw, char ***out)
{
    *out = NULL;
    size_t n = rf_strv_len(cw), n_opts = 0, n_non = 0;
    if (n < 2)
        return 0;
    const char **opts = calloc(n, sizeof(*opts)), **non = calloc(n + 2, sizeof(*non));
    const char **parts = calloc(n + 2, sizeof(*parts));
    int r = -1;
    if (!opts || !non || !parts)
        goto done;
    bool end_opts = false;
    for (size_t i = 1; i < n; i++) {
        if (!end_opts && !strcmp(cw[i], "--"))
            end_opts = true;
        else if (!end_opts && cw[i][0] == '-' && cw[i][1])
            opts[n_opts++] = cw[i];
        else
            non[n_non++] = cw[i];
    }
    if (n_opts == 0) {
        r = 0;
        goto done;
    }
    parts[0] = cw[0];
    memcpy(parts + 1, non, n_non * sizeof(*non));
    if (push_joined(out, parts, n_non + 1) < 0)
        goto done;
    for (size_t o = 0; o < n_opts && o < RF_GUARD_MAX_OPT_VARIANTS; o++) {
        parts[1] = opts[o];
        memcpy(parts + 2, non, n_non * sizeof(*non));
        if (push_joined(out, parts, n_non + 2) < 0)
            goto done;
        if (n_non == 0)
            continue;
        parts[1] = non[0];
        parts[2] = opts[o];
        memcpy(parts + 3, non + 1, (n_non - 1) * sizeof(*non));
        if (push_joined(out, parts, n_non + 2) < 0)
            goto done;
    }
    r = 0;
done:
    free(opts);
    free(non);
    free(parts);
    if (r < 0) {
        rf_strv_free(*out);
        *out = NULL;
    }
    return r;
}
