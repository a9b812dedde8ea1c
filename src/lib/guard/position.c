/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command position: the strings the command patterns (patterns.c) see for
 * one simple command. A command pattern is about running a program, so it
 * reads only strings that start with a program's name:
 *
 *   every program of the wrapper chain, by its canonical name, with the
 *   words after it       sudo -u x nice rm y → "sudo -u x nice rm y",
 *                                              "nice rm y", "rm y"
 *   the command that find -exec/-execdir/-ok runs, and python -m's module,
 *   canonicalised like the core (view.c)
 *
 * and, as "code", the inline program text handed to another interpreter
 * (python -c, perl -e, node -e, awk '...'): the guard cannot parse it, so
 * there the seed's own text patterns still apply, as they always did. */
#include "guard/guard.h"
#include "util/strv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t next_arg(const rf_gseg *s, size_t i)
{
    while (i < s->n_words && s->words[i].kind != RF_GWORD_ARG)
        i++;
    return i;
}

/* name, then the argument words from `from` (up to `end`), single-spaced. */
static char *join_from(const char *name, const rf_gseg *s, size_t from, size_t end)
{
    rf_gbuf b = { 0 };
    rf_guard_buf_adds(&b, name);
    for (size_t i = next_arg(s, from); i < end; i = next_arg(s, i + 1)) {
        rf_guard_buf_addc(&b, ' ');
        for (const char *w = s->words[i].text; *w; w++)
            rf_guard_buf_addc(&b, strchr(" \t\n\r\v\f", *w) ? ' ' : *w);
    }
    return rf_guard_buf_steal(&b);
}

/* The core of the words [from, end) as its own command: canonical form
 * and option variants, as view.c does for the segment's core. */
static int push_nested(const rf_gseg *s, size_t from, size_t end, char ***out)
{
    rf_gseg sub = { .words = s->words + from, .n_words = end - from };
    size_t core = rf_guard_core_index(&sub);
    if (core == SIZE_MAX)
        return 0;
    rf_gwords cw = { 0 };
    char **variants = NULL;
    const char *name = rf_guard_basename(sub.words[core].text);
    int r = rf_guard_words_push(&cw, name);
    for (size_t i = next_arg(&sub, core + 1); r == 0 && i < sub.n_words; i = next_arg(&sub, i + 1))
        r = rf_guard_words_push(&cw, sub.words[i].text);
    if (r == 0)
        r = rf_guard_canonicalise(&cw, rf_guard_alias(name));
    if (r == 0) {
        rf_gbuf b = { 0 };
        for (size_t i = 0; i < cw.n; i++) {
            if (i)
                rf_guard_buf_addc(&b, ' ');
            rf_guard_buf_adds(&b, cw.v[i]);
        }
        char *canon = rf_guard_buf_steal(&b);
        r = canon ? rf_strv_push_take(out, canon) : -1;
    }
    if (r == 0)
        r = rf_guard_variants(&cw, &variants);
    for (size_t i = 0; r == 0 && variants && variants[i]; i++)
        r = rf_strv_push(out, variants[i]);
    rf_strv_free(variants);
    rf_guard_words_free(&cw);
    return r;
}

static bool is_python(const char *n)
{
    return !strncmp(n, "python", 6) || !strncmp(n, "pypy", 4);
}

/* find ... -exec CMD ... ; and python -m MODULE ...: commands run by the core. */
static int nested_commands(const rf_gseg *s, size_t core, char ***out)
{
    const char *name = rf_guard_basename(s->words[core].text);
    bool find = !strcmp(name, "find"), py = is_python(name);
    for (size_t i = next_arg(s, core + 1); i < s->n_words; i = next_arg(s, i + 1)) {
        const char *t = s->words[i].text;
        if (find && (!strcmp(t, "-exec") || !strcmp(t, "-execdir") || !strcmp(t, "-ok") || !strcmp(t, "-okdir"))) {
            size_t end = i + 1;
            while (end < s->n_words && strcmp(s->words[end].text, ";") && strcmp(s->words[end].text, "+"))
                end++;
            if (push_nested(s, i + 1, end, out) < 0)
                return -1;
            i = end < s->n_words ? end : s->n_words - 1;
        } else if (py && (!strcmp(t, "-m") || !strncmp(t, "-m", 2))) {
            /* python3 -m pip ... runs pip; -mpip too */
            if (t[2]) {
                char *subject = join_from(t + 2, s, i + 1, s->n_words);
                return subject ? rf_strv_push_take(out, subject) : -1;
            }
            return push_nested(s, i + 1, s->n_words, out);
        } else if (py && t[0] != '-') {
            break; /* a script: its arguments are not python's */
        }
    }
    return 0;
}

int rf_guard_position_commands(const rf_gseg *s, const bool *programs, size_t core, char ***out)
{
    for (size_t i = 0; i < s->n_words; i++) {
        if (!programs[i])
            continue;
        char *subject = join_from(rf_guard_alias(rf_guard_basename(s->words[i].text)), s, i + 1, s->n_words);
        if (!subject || rf_strv_push_take(out, subject) < 0)
            return -1;
    }
    return core == SIZE_MAX ? 0 : nested_commands(s, core, out);
}

/* Interpreters and the options whose value is a program in their language. */
static const struct interpreter {
    const char *prefix; /* the name, or its start (python3.11) */
    const char *const *code_opts;
} interpreters[] = {
    { "python", (const char *const[]){ "-c", NULL } },
    { "pypy", (const char *const[]){ "-c", NULL } },
    { "perl", (const char *const[]){ "-e", "-E", NULL } },
    { "ruby", (const char *const[]){ "-e", NULL } },
    { "node", (const char *const[]){ "-e", "-p", "--eval", "--print", NULL } },
    { "bun", (const char *const[]){ "-e", "--eval", NULL } },
    { "deno", (const char *const[]){ "eval", NULL } },
    { "php", (const char *const[]){ "-r", NULL } },
    { "lua", (const char *const[]){ "-e", NULL } },
    { "Rscript", (const char *const[]){ "-e", NULL } },
    { "osascript", (const char *const[]){ "-e", NULL } },
};

static bool is_awk(const char *n)
{
    return !strcmp(n, "awk") || !strcmp(n, "gawk") || !strcmp(n, "mawk") || !strcmp(n, "nawk");
}

/* awk's program: the first operand, unless -f gives a file. */
static const char *awk_program(const rf_gseg *s, size_t core)
{
    for (size_t i = next_arg(s, core + 1); i < s->n_words; i = next_arg(s, i + 1)) {
        const char *t = s->words[i].text;
        if (!strcmp(t, "-f") || !strncmp(t, "--file", 6))
            return NULL;
        if (!strcmp(t, "-F") || !strcmp(t, "-v") || !strcmp(t, "--assign") || !strcmp(t, "--field-separator")) {
            i = next_arg(s, i + 1);
            if (i >= s->n_words)
                return NULL;
            continue;
        }
        if (!strcmp(t, "--"))
            continue;
        if (t[0] != '-')
            return t;
    }
    return NULL;
}

int rf_guard_position_code(const rf_gseg *s, size_t core, char ***out)
{
    if (core == SIZE_MAX)
        return 0;
    const char *name = rf_guard_basename(s->words[core].text);
    if (is_awk(name)) {
        const char *prog = awk_program(s, core);
        return prog ? rf_strv_push(out, prog) : 0;
    }
    const struct interpreter *in = NULL;
    for (size_t k = 0; !in && k < sizeof interpreters / sizeof interpreters[0]; k++)
        if (!strncmp(name, interpreters[k].prefix, strlen(interpreters[k].prefix)))
            in = &interpreters[k];
    if (!in)
        return 0;
    for (size_t i = next_arg(s, core + 1); i < s->n_words; i = next_arg(s, i + 1)) {
        const char *t = s->words[i].text;
        for (size_t k = 0; in->code_opts[k]; k++) {
            const char *opt = in->code_opts[k];
            size_t n = strlen(opt), len = strlen(t);
            /* perl -ne CODE: a short option bundle that ends in the letter */
            bool bundle = n == 2 && opt[0] == '-' && t[0] == '-' && t[1] != '-' && len > 2 &&
                          t[len - 1] == opt[1] && strspn(t + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == len - 1;
            if (bundle)
                n = len;
            else if (strncmp(t, opt, n))
                continue;
            /* -c CODE, -cCODE, --eval=CODE: the rest is the program */
            const char *code = t[n] == '=' ? t + n + 1 : t[n] ? t + n : NULL;
            size_t from = i + 1;
            if (!code && (from = next_arg(s, i + 1)) < s->n_words)
                code = s->words[from++].text;
            char *joined = code ? join_from(code, s, from, s->n_words) : NULL;
            return code && (!joined || rf_strv_push_take(out, joined) < 0) ? -1 : 0;
        }
    }
    return 0;
}
