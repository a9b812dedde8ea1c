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
        { "doas", "sudo" }, { "pkexec", "sudo" }, { "run0", "sudo" }, { "podman", "docker" }, { "nerdctl", "docker" },
        { "microdnf", "dnf" }, { "dnf5", "dnf" },
        /* they run their input as shell code: `... | at now` is `... | sh` */
        { "at", "sh" }, { "batch", "sh" },
    };
    if (rf_guard_is_shell(name))
        return "sh";
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (name[0] == map[i][0][0] && !strcmp(name, map[i][0]))
            return map[i][1];
    return name;
}

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (s[0] == list[i][0] && !strcmp(s, list[i]))
            return true;
    return false;
}

int rf_guard_words_push(rf_gwords *w, const char *s)
{
    if (w->n + 2 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        char **v = reallocarray(w->v, cap, sizeof(*v));
        if (!v)
            return -1;
        w->v = v;
        w->cap = cap;
    }
    if (!(w->v[w->n] = strdup(s)))
        return -1;
    w->v[++w->n] = NULL;
    return 0;
}

void rf_guard_words_free(rf_gwords *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    free(w->v);
    *w = (rf_gwords){ 0 };
}

/* Each transform reads `in` once and writes the result to `out`. */
typedef int (*transform)(const rf_gwords *in, rf_gwords *out);

static bool is_kill_signal(const char *s)
{
    return !strcmp(s, "9") || !strcasecmp(s, "KILL") || !strcasecmp(s, "SIGKILL");
}

/* kill -s KILL, -n 9, --signal=KILL, -KILL, -SIGKILL → kill -9 */
static int kill_signals(const rf_gwords *in, rf_gwords *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const char *t = in->v[i];
        bool sep = i > 0 && (!strcmp(t, "-s") || !strcmp(t, "-n") || !strcmp(t, "--signal"));
        if (sep && i + 1 < in->n && is_kill_signal(in->v[i + 1]))
            t = "-9", i++;
        else if (i > 0 && ((!strncmp(t, "--signal=", 9) && is_kill_signal(t + 9)) ||
                           (!strncmp(t, "-s", 2) && t[2] && is_kill_signal(t + 2)) ||
                           (t[0] == '-' && is_kill_signal(t + 1))))
            t = "-9";
        if (rf_guard_words_push(out, t) < 0)
            return -1;
    }
    return 0;
}

/* Options before the subcommand (git -C dir push → git push). */
static int drop_global_options(const rf_gwords *in, rf_gwords *out, const char *const *with_value)
{
    size_t i = 1;
    while (i < in->n && in->v[i][0] == '-' && strcmp(in->v[i], "--"))
        i += in_list(in->v[i], with_value) ? 2 : 1;
    if (rf_guard_words_push(out, in->v[0]) < 0)
        return -1;
    for (; i < in->n; i++)
        if (rf_guard_words_push(out, in->v[i]) < 0)
            return -1;
    return 0;
}

static int git_globals(const rf_gwords *in, rf_gwords *out)
{
    static const char *const values[] = { "-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                          "--super-prefix", "--config-env", NULL };
    return drop_global_options(in, out, values);
}

/* docker [global options] [container] run|exec → docker run|exec */
static int docker_globals(const rf_gwords *in, rf_gwords *out)
{
    static const char *const values[] = { "-H", "--host", "-c", "--context", "--config", "-l",
                                          "--log-level", "--tlscacert", "--tlscert", "--tlskey", NULL };
    rf_gwords tmp = { 0 };
    int r = drop_global_options(in, &tmp, values);
    for (size_t i = 0; r == 0 && i < tmp.n; i++)
        if (!(i == 1 && !strcmp(tmp.v[i], "container")))
            r = rf_guard_words_push(out, tmp.v[i]);
    rf_guard_words_free(&tmp);
    return r;
}

static int npm_words(const rf_gwords *in, rf_gwords *out)
{
    static const char *const install[] = { "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta",
                                           "isntal", "isntall", "add", NULL };
    bool sub_seen = false;
    for (size_t i = 0; i < in->n; i++) {
        const char *t = in->v[i];
        if (i > 0 && (!strcmp(t, "--global") || !strcmp(t, "--location=global"))) {
            t = "-g";
        } else if (i > 0 && t[0] != '-' && !sub_seen) {
            sub_seen = true;
            t = in_list(t, install) ? "install" : t;
        }
        if (rf_guard_words_push(out, t) < 0)
            return -1;
    }
    return 0;
}

static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static bool is_bundle(const char *t)
{
    size_t n = strlen(t);
    return t[0] == '-' && n >= 3 && strspn(t + 1, letters) == n - 1;
}

/* Is there a bundle to split? Most commands have none: no copy then. */
static bool has_bundle(const rf_gwords *w)
{
    for (size_t i = 1; i < w->n && strcmp(w->v[i], "--"); i++)
        if (is_bundle(w->v[i]))
            return true;
    return false;
}

/* -rfv → -r -f -v (letters only, so -9 and -j4 stay whole). */
static int split_bundles(const rf_gwords *in, rf_gwords *out)
{
    bool end_opts = false;
    for (size_t i = 0; i < in->n; i++) {
        const char *t = in->v[i];
        size_t n = strlen(t);
        end_opts = end_opts || !strcmp(t, "--");
        if (i == 0 || end_opts || !is_bundle(t)) {
            if (rf_guard_words_push(out, t) < 0)
                return -1;
            continue;
        }
        for (size_t k = 1; k < n; k++)
            if (rf_guard_words_push(out, (char[]){ '-', t[k], '\0' }) < 0)
                return -1;
    }
    return 0;
}

static int rm_flags(const rf_gwords *in, rf_gwords *out)
{
    bool end_opts = false;
    for (size_t i = 0; i < in->n; i++) {
        const char *t = in->v[i];
        end_opts = end_opts || !strcmp(t, "--");
        if (i > 0 && !end_opts)
            t = !strcmp(t, "-R") || !strcmp(t, "--recursive") ? "-r" : !strcmp(t, "--force") ? "-f" : t;
        if (rf_guard_words_push(out, t) < 0)
            return -1;
    }
    return 0;
}

static int apply(rf_gwords *w, transform f)
{
    rf_gwords out = { 0 };
    if (f(w, &out) < 0) {
        rf_guard_words_free(&out);
        return -1;
    }
    rf_guard_words_free(w);
    *w = out;
    return 0;
}

int rf_guard_canonicalise(rf_gwords *w, const char *name)
{
    if (w->n == 0)
        return 0;
    char *c = strdup(name);
    if (!c)
        return -1;
    free(w->v[0]);
    w->v[0] = c;
    /* Whole-word spellings first (-KILL), then bundles, then single flags. */
    if ((!strcmp(name, "kill") && apply(w, kill_signals) < 0) ||
        (!strcmp(name, "git") && apply(w, git_globals) < 0) ||
        (!strcmp(name, "docker") && apply(w, docker_globals) < 0) ||
        (!strcmp(name, "npm") && apply(w, npm_words) < 0) || (has_bundle(w) && apply(w, split_bundles) < 0) ||
        (!strcmp(name, "rm") && apply(w, rm_flags) < 0))
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

static bool is_option(const char *w)
{
    return w[0] == '-' && w[1];
}

/* cmd NONOPTS; and per option o: cmd o NONOPTS, cmd NONOPT1 o NONOPTS... */
int rf_guard_variants(const rf_gwords *w, char ***out)
{
    char *const *cw = w->v;
    *out = NULL;
    size_t n = w->n, n_opts = 0, n_non = 0;
    const char **opts = NULL, **non = NULL, **parts = NULL;
    bool end_opts = false;
    for (size_t i = 1; i < n; i++) {
        if (!end_opts && !strcmp(cw[i], "--")) {
            end_opts = true;
            continue;
        }
        bool opt = !end_opts && is_option(cw[i]);
        if (opt && !opts) {
            /* The first option (most commands have none, and allocate
             * nothing). One block: opts[n], non[n + 2], parts[n + 2]; the
             * words before this one are all non-options. */
            opts = calloc(3 * n + 4, sizeof(*opts));
            if (!opts)
                return -1;
            non = opts + n;
            parts = non + n + 2;
            for (size_t j = 1; j < i; j++)
                non[n_non++] = cw[j];
        }
        if (opt)
            opts[n_opts++] = cw[i];
        else if (opts)
            non[n_non++] = cw[i];
    }
    if (!opts)
        return 0;
    int r = -1;
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
    if (r < 0) {
        rf_strv_free(*out);
        *out = NULL;
    }
    return r;
}
