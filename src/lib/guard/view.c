/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strings one simple command is matched as. The seed's patterns are
 * written for the plain text of a command; these views give them the same
 * command in the forms an obfuscation turns it into:
 *
 *   raw      the source text                    r''m  -rf  x
 *   full     words normalised, single-spaced    rm -rf x
 *   programs full with each program in the wrapper chain by its canonical
 *            name                               doas ls → sudo ls
 *   core     assignments, keywords and wrappers (env, nice, timeout, xargs,
 *            command, ...) dropped, the command's basename:
 *                                               env /bin/rm -rf x → rm -rf x
 *   canon    core with aliases (bash→sh, apt-get→apt, doas→sudo, rm -R →
 *            rm -r, kill -KILL → kill -9, git/docker global options
 *            dropped) and short flag bundles split: rm -v -r -f x
 *   variants canon with the options regrouped, so a pattern written as
 *            "cmd -flag" or "cmd sub -flag" meets its flag wherever it was
 *            put: rm -r x, npm install -g x, apt install x ...
 */
#include "guard/guard.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *rf_guard_basename(const char *word)
{
    const char *slash = strrchr(word, '/');
    return slash && slash[1] ? slash + 1 : word;
}

bool rf_guard_is_assignment(const char *w)
{
    if (!rf_guard_is_name_start(w[0]))
        return false;
    size_t n = 1;
    while (rf_guard_is_name_char(w[n]))
        n++;
    return w[n] == '=' || (w[n] == '+' && w[n + 1] == '=');
}

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (s[0] == list[i][0] && !strcmp(s, list[i])) /* the first byte rules most out */
            return true;
    return false;
}

bool rf_guard_is_shell(const char *name)
{
    static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
                                          "yash", "posh", "rbash", "fish", NULL };
    return in_list(name, shells);
}

static bool is_keyword(const char *w)
{
    static const char *const kw[] = { "!", "{", "}", "then", "do", "else", "elif", "if", "while",
                                      "until", "fi", "done", "esac", "function", "coproc", NULL };
    return in_list(w, kw);
}

/* Programs that run the program named after their own options. */
static const struct wrapper {
    const char *name;
    const char *short_args;          /* short options that take a value */
    const char *const *long_args;    /* long options that take a value */
    int positional;                  /* operands before the program */
    bool assignments;                /* NAME=VALUE operands are skipped */
} wrappers[] = {
    { "env", "uCS", (const char *const[]){ "--unset", "--chdir", "--split-string", NULL }, 0, true },
    { "command", "", NULL, 0, false },
    { "builtin", "", NULL, 0, false },
    { "exec", "a", NULL, 0, false },
    { "nohup", "", NULL, 0, false },
    { "time", "fo", (const char *const[]){ "--format", "--output", NULL }, 0, false },
    { "nice", "n", (const char *const[]){ "--adjustment", NULL }, 0, false },
    { "ionice", "cnp", (const char *const[]){ "--class", "--classdata", NULL }, 0, false },
    { "timeout", "sk", (const char *const[]){ "--signal", "--kill-after", NULL }, 1, false },
    { "stdbuf", "ioe", (const char *const[]){ "--input", "--output", "--error", NULL }, 0, false },
    { "setsid", "", NULL, 0, false },
    { "chroot", "", (const char *const[]){ "--userspec", "--groups", NULL }, 1, false },
    { "sudo", "ughpUrtCTD", (const char *const[]){ "--user", "--group", "--host", "--prompt", NULL }, 0, true },
    { "doas", "uC", NULL, 0, false },
    { "xargs", "adEILnPs", (const char *const[]){ "--arg-file", "--delimiter", "--max-args",
                                                  "--max-procs", "--max-lines", "--max-chars", NULL }, 0, false },
    { "busybox", "", NULL, 0, false },
    { "toybox", "", NULL, 0, false },
    { "watch", "nd", (const char *const[]){ "--interval", NULL }, 0, false },
    { "strace", "eoOpPsSuaXbIE", NULL, 0, false },
    { "unbuffer", "", NULL, 0, false },
    { "taskset", "", NULL, 1, false },
    { "screen", "SceHhLlpTtX", NULL, 0, false },
    { "flock", "wE", (const char *const[]){ "--timeout", "--conflict-exit-code", NULL }, 1, false },
    { "chrt", "", NULL, 1, false },
    { "unshare", "", NULL, 0, false },
    { "systemd-run", "upE", (const char *const[]){ "--unit", "--property", "--setenv", "--uid", "--gid",
                                                    "--working-directory", NULL }, 0, false },
    { "torsocks", "", NULL, 0, false },
    { "proxychains", "f", NULL, 0, false },
    { "proxychains4", "f", NULL, 0, false },
    { "valgrind", "", NULL, 0, false },
    { "ltrace", "eoOpPsSuaXbIE", NULL, 0, false },
};

static const struct wrapper *find_wrapper(const char *name)
{
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
        if (name[0] == wrappers[i].name[0] && !strcmp(name, wrappers[i].name))
            return &wrappers[i];
    return NULL;
}

static size_t next_arg(const rf_gseg *s, size_t i)
{
    while (i < s->n_words && s->words[i].kind != RF_GWORD_ARG)
        i++;
    return i;
}

/* Does option word t (of a program with these value-taking options) take
 * the next word as its value? */
static bool takes_value(const char *t, const char *short_args, const char *const *long_args)
{
    if (t[1] == '-')
        return !strchr(t, '=') && long_args && in_list(t, long_args);
    for (size_t j = 1; t[j]; j++)
        if (short_args && strchr(short_args, t[j]))
            return t[j + 1] == '\0';
    return false;
}

static size_t skip_wrapper(const rf_gseg *s, size_t i, const struct wrapper *w)
{
    for (i = next_arg(s, i); i < s->n_words; i = next_arg(s, i + 1)) {
        const char *t = s->words[i].text;
        if (!strcmp(t, "--")) {
            i = next_arg(s, i + 1);
            break;
        }
        if (t[0] == '-' && t[1]) {
            if (takes_value(t, w->short_args, w->long_args))
                i = next_arg(s, i + 1);
            continue;
        }
        if (!(w->assignments && rf_guard_is_assignment(t)))
            break;
    }
    for (int k = 0; k < w->positional && i < s->n_words; k++)
        i = next_arg(s, i + 1);
    return i;
}

/* Walk past assignments, keywords and wrappers to the command word; mark
 * (when mark is non-NULL) every word that names a program on the way. */
static size_t core_walk(const rf_gseg *s, bool *mark)
{
    size_t i = next_arg(s, 0);
    for (int rounds = 0; i < s->n_words && rounds < 64; rounds++) {
        const char *t = s->words[i].text;
        const struct wrapper *w = NULL;
        if (!strcmp(t, "function")) { /* function NAME: the body comes next */
            i = next_arg(s, next_arg(s, i + 1) + 1);
            continue;
        }
        if (rf_guard_is_assignment(t) || is_keyword(t)) {
            i = next_arg(s, i + 1);
            continue;
        }
        if (mark)
            mark[i] = true;
        if (!(w = find_wrapper(rf_guard_basename(t))))
            return i;
        i = skip_wrapper(s, i + 1, w);
    }
    return SIZE_MAX;
}

size_t rf_guard_core_index(const rf_gseg *s)
{
    return core_walk(s, NULL);
}

/* Append w with every run of blanks turned into one space. */
static void add_collapsed(rf_gbuf *b, const char *w)
{
    static const char blanks[] = " \t\n\r\v\f";
    for (bool blank = false; *w; blank = true) {
        size_t n = strcspn(w, blanks); /* copied as one run: this is the guard's hottest loop */
        if (n > 0) {
            if (blank && b->len && b->s[b->len - 1] != ' ')
                rf_guard_buf_addc(b, ' ');
            rf_guard_buf_add(b, w, n);
        }
        w += n;
        w += strspn(w, blanks);
    }
}

static void add_word(rf_gbuf *b, const char *w)
{
    if (b->len && b->s[b->len - 1] != ' ')
        rf_guard_buf_addc(b, ' ');
    add_collapsed(b, w);
}

static char *join_words(const rf_gwords *w)
{
    rf_gbuf b = { 0 };
    for (size_t i = 0; i < w->n; i++)
        add_word(&b, w->v[i]);
    return rf_guard_buf_steal(&b);
}

/* Every word, the redirections with their operators; with `programs`,
 * each word naming a program (doas in `doas ls`) by its canonical name. */
static char *build_full(const rf_gseg *s, const bool *programs)
{
    rf_gbuf b = { 0 };
    for (size_t i = 0; i < s->n_words; i++) {
        if (s->words[i].op)
            add_word(&b, s->words[i].op);
        add_word(&b, programs && programs[i] ? rf_guard_alias(rf_guard_basename(s->words[i].text))
                                            : s->words[i].text);
    }
    return rf_guard_buf_steal(&b);
}

void rf_guard_view_clear(rf_gview *v)
{
    free(v->raw);
    free(v->full);
    free(v->programs);
    free(v->core);
    free(v->canon);
    rf_strv_free(v->variants);
    rf_strv_free(v->commands);
    rf_strv_free(v->code);
    *v = (rf_gview){ 0 };
}

int rf_guard_view_build(const rf_glist *l, const rf_gseg *s, rf_gview *v)
{
    bool *programs = calloc(s->n_words + 1, sizeof(*programs));
    if (!programs)
        return -1;
    *v = (rf_gview){ .core_index = core_walk(s, programs) };
    v->raw = strndup(l->src + s->raw_start, s->raw_end - s->raw_start);
    v->full = build_full(s, NULL);
    v->programs = build_full(s, programs);
    int pr = rf_guard_position_commands(s, programs, v->core_index, &v->commands);
    free(programs);
    if (pr < 0 || rf_guard_position_code(s, v->core_index, &v->code) < 0) {
        rf_guard_view_clear(v);
        return -1;
    }
    rf_gwords cw = { 0 };
    if (v->core_index != SIZE_MAX) {
        const char *name = rf_guard_basename(s->words[v->core_index].text);
        snprintf(v->cmd, sizeof v->cmd, "%s", rf_guard_alias(name));
        if (rf_guard_words_push(&cw, name) < 0)
            goto oom;
        for (size_t i = next_arg(s, v->core_index + 1); i < s->n_words; i = next_arg(s, i + 1))
            if (rf_guard_words_push(&cw, s->words[i].text) < 0)
                goto oom;
    }
    v->core = join_words(&cw);
    if (rf_guard_canonicalise(&cw, v->cmd) < 0)
        goto oom;
    v->canon = join_words(&cw);
    if (!v->raw || !v->full || !v->programs || !v->core || !v->canon || rf_guard_variants(&cw, &v->variants) < 0)
        goto oom;
    rf_guard_words_free(&cw);
    return 0;
oom:
    rf_guard_words_free(&cw);
    rf_guard_view_clear(v);
    return -1;
}
