/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The structure of a shell command, as far as the guard needs it: lists of
 * simple commands joined by | || && ; & and newlines, redirections, and the
 * nested lists of $(..), `..`, (..), <(..), here-documents and the string
 * of `sh -c STR` / `eval` / `env -S`. It is not a shell: where it is unsure
 * it parses more text as commands, not less (a heredoc body is parsed as
 * commands, since `sh <<EOF` runs it). */
#include "guard/guard.h"
#include "util/error.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *a = reallocarray(*arr, n, size);
    if (!a)
        return false;
    *arr = a;
    *cap = n;
    return true;
}

int rf_guard_parse_new_list(rf_gparse *p, rf_glist_kind kind, int parent, size_t parent_seg,
                            const char *src, size_t start, size_t end, char *owned)
{
    int depth = parent >= 0 ? p->lists[parent]->depth + 1 : 0;
    if (depth > RF_GUARD_MAX_DEPTH)
        p->limit = "commands nested more than 16 levels deep";
    else if (p->n_lists >= RF_GUARD_MAX_LISTS)
        p->limit = "more than 1024 nested commands";
    rf_glist *l = p->limit ? NULL : calloc(1, sizeof(*l));
    if (!l || !grow((void **)&p->lists, &p->cap_lists, p->n_lists + 1, sizeof(*p->lists))) {
        p->oom = p->oom || !p->limit;
        free(l);
        free(owned);
        return -1;
    }
    *l = (rf_glist){ .src = src, .start = start, .end = end, .owned = owned, .kind = kind,
                     .parent = parent, .parent_seg = parent_seg, .depth = depth };
    p->lists[p->n_lists] = l;
    return (int)p->n_lists++;
}

int rf_guard_seg_add_word(rf_gparse *p, rf_gseg *s, rf_gbuf *b, rf_gword_kind kind, const char *op, bool tilde)
{
    if (++p->n_words > RF_GUARD_MAX_WORDS) {
        p->limit = "more than 16384 words";
        return -1;
    }
    char *text = rf_guard_buf_steal(b);
    if (!text || !grow((void **)&s->words, &s->cap_words, s->n_words + 1, sizeof(*s->words))) {
        free(text);
        p->oom = true;
        return -1;
    }
    s->words[s->n_words++] = (rf_gword){ .text = text, .kind = kind, .op = op, .tilde = tilde };
    return 0;
}

int rf_guard_seg_add_child(rf_gparse *p, rf_gseg *s, int child)
{
    if (!grow((void **)&s->children, &s->cap_children, s->n_children + 1, sizeof(*s->children))) {
        p->oom = true;
        return -1;
    }
    s->children[s->n_children++] = child;
    return 0;
}

const char *rf_guard_var_get(const rf_gparse *p, const char *name, size_t n)
{
    for (size_t i = p->n_vars; i-- > 0;)
        if (strlen(p->vars[i].name) == n && !memcmp(p->vars[i].name, name, n))
            return p->vars[i].value;
    return NULL;
}

int rf_guard_var_set(rf_gparse *p, const char *name, size_t n, const char *value)
{
    if (strlen(value) > RF_GUARD_MAX_VALUE) {
        p->limit = "a variable assigned more than 16 KiB";
        return -1;
    }
    for (size_t i = 0; i < p->n_vars; i++) {
        if (strlen(p->vars[i].name) == n && !memcmp(p->vars[i].name, name, n)) {
            char *v = strdup(value);
            if (!v)
                return p->oom = true, -1;
            free(p->vars[i].value);
            p->vars[i].value = v;
            return 0;
        }
    }
    if (p->n_vars >= RF_GUARD_MAX_VARS) {
        p->limit = "more than 256 variable assignments";
        return -1;
    }
    rf_gvar *vars = reallocarray(p->vars, p->n_vars + 1, sizeof(*vars));
    if (!vars)
        return p->oom = true, -1;
    p->vars = vars;
    vars[p->n_vars] = (rf_gvar){ strndup(name, n), strdup(value) };
    if (!vars[p->n_vars].name || !vars[p->n_vars].value) {
        free(vars[p->n_vars].name);
        free(vars[p->n_vars].value);
        return p->oom = true, -1;
    }
    p->n_vars++;
    return 0;
}

/* NAME=VALUE (or NAME+=VALUE) words set variables for the words after them. */
static void record_assignment(rf_gparse *p, const char *w)
{
    size_t n = 0;
    while (rf_guard_is_name_char(w[n]))
        n++;
    bool append = w[n] == '+';
    const char *value = w + n + 1 + append;
    if (!append) {
        rf_guard_var_set(p, w, n, value);
        return;
    }
    const char *old = rf_guard_var_get(p, w, n);
    char *joined = NULL;
    if (asprintf(&joined, "%s%s", old ? old : "", value) < 0) {
        p->oom = true;
        return;
    }
    rf_guard_var_set(p, w, n, joined);
    free(joined);
}

static char *join_args(const rf_gseg *s, size_t from);

/* for NAME in W1 W2 ...: NAME stands for all the words at once, so a
 * pattern still meets whichever one the loop body runs. */
static void record_for(rf_gparse *p, const rf_gseg *s, size_t i)
{
    if (i + 2 >= s->n_words || strcmp(s->words[i + 2].text, "in") ||
        !rf_guard_is_name_start(s->words[i + 1].text[0]))
        return;
    char *values = join_args(s, i + 3);
    if (!values) {
        p->oom = true;
        return;
    }
    rf_guard_var_set(p, s->words[i + 1].text, strlen(s->words[i + 1].text), values);
    free(values);
}

static void record_assignments(rf_gparse *p, const rf_gseg *s)
{
    static const char *const declare[] = { "export", "declare", "typeset", "local", "readonly", NULL };
    bool after_declare = false;
    for (size_t i = 0; i < s->n_words; i++) {
        const rf_gword *w = &s->words[i];
        if (w->kind != RF_GWORD_ARG)
            continue;
        if (rf_guard_is_assignment(w->text)) {
            record_assignment(p, w->text);
            continue;
        }
        if (!after_declare && (!strcmp(w->text, "for") || !strcmp(w->text, "select"))) {
            record_for(p, s, i);
            break;
        }
        if (after_declare && w->text[0] == '-')
            continue;
        if (after_declare)
            break;
        for (size_t k = 0; declare[k]; k++)
            after_declare = after_declare || !strcmp(w->text, declare[k]);
        if (!after_declare)
            break;
    }
}

/* The script of `sh [opts] -c SCRIPT`, `su -c SCRIPT`, `env -S STRING`
 * starting after words[i] (the program), or NULL. */
static const char *script_after(const rf_gseg *s, size_t i, bool env)
{
    bool has_c = false;
    for (size_t j = i + 1; j < s->n_words; j++) {
        const char *t = s->words[j].text;
        if (s->words[j].kind != RF_GWORD_ARG)
            continue;
        if (env && (!strcmp(t, "-S") || !strcmp(t, "--split-string")))
            return j + 1 < s->n_words ? s->words[j + 1].text : NULL;
        if (env && !strncmp(t, "--split-string=", 15))
            return t + 15;
        if (env && !strncmp(t, "-S", 2))
            return t + 2;
        if (!env && !strncmp(t, "--command=", 10))
            return t + 10;
        if (!env && !strcmp(t, "--command"))
            return j + 1 < s->n_words ? s->words[j + 1].text : NULL;
        if ((t[0] != '-' && t[0] != '+') || !strcmp(t, "-") || !strcmp(t, "--"))
            return has_c && !env && strcmp(t, "--") ? t : NULL;
        if (t[1] != '-') {
            has_c = has_c || strchr(t, 'c');
            if (strpbrk(t + 1, "oO") && !strchr(t, 'c'))
                j++; /* -o OPTION takes the next word */
        }
    }
    return NULL;
}

static int parse_script(rf_gparse *p, int li, size_t si, const char *text)
{
    char *owned = strdup(text);
    if (!owned)
        return p->oom = true, -1;
    int child = rf_guard_parse_new_list(p, RF_GLIST_SCRIPT, li, si, owned, 0, strlen(owned), owned);
    if (child < 0 || rf_guard_seg_add_child(p, &p->lists[li]->segs[si], child) < 0)
        return -1;
    size_t ignored;
    return rf_guard_parse_list(p, child, 0, 0, &ignored);
}

static char *join_args(const rf_gseg *s, size_t from)
{
    rf_gbuf b = { 0 };
    for (size_t j = from; j < s->n_words; j++) {
        if (s->words[j].kind != RF_GWORD_ARG)
            continue;
        if (b.len)
            rf_guard_buf_addc(&b, ' ');
        rf_guard_buf_adds(&b, s->words[j].text);
    }
    return rf_guard_buf_steal(&b);
}

/* ssh [options] DESTINATION COMMAND...: the words after the destination
 * run as a shell command on the other host. Their start, or 0. */
static size_t ssh_command(const rf_gseg *s, size_t i)
{
    for (size_t j = i + 1; j < s->n_words; j++) {
        const char *t = s->words[j].text;
        if (s->words[j].kind != RF_GWORD_ARG)
            continue;
        if (t[0] != '-')
            return j + 1 < s->n_words ? j + 1 : 0;
        if (t[1] && strchr("BbcDEeFIiJLlmOoPpQRSWw", t[strlen(t) - 1]) && t[1] != '-')
            j++; /* -p 22, -i key, -o Opt=x: the value is the next word */
    }
    return 0;
}

/* `sh <<< STR`, `at now <<< STR`: a here-string fed to a program that runs
 * its input as shell code. */
static int stdin_scripts(rf_gparse *p, int li, size_t si, size_t core)
{
    const rf_gseg *s = &p->lists[li]->segs[si];
    if (core >= s->n_words || strcmp(rf_guard_alias(rf_guard_basename(s->words[core].text)), "sh"))
        return 0;
    for (size_t j = 0; j < p->lists[li]->segs[si].n_words; j++) {
        s = &p->lists[li]->segs[si];
        if (s->words[j].kind == RF_GWORD_HERESTRING && parse_script(p, li, si, s->words[j].text) < 0)
            return -1;
    }
    return 0;
}

/* tmux new-session/new-window/split-window/run-shell [options] COMMAND...:
 * the operands are a shell command. The index of the first, or 0. */
static size_t tmux_command(const rf_gseg *s, size_t i)
{
    static const char *const subs[] = { "new", "new-session", "new-window", "neww", "split-window", "splitw",
                                        "run-shell", "run", "respawn-pane", "respawnp", "respawn-window",
                                        "respawnw", NULL };
    size_t sub = i + 1;
    while (sub < s->n_words && (s->words[sub].kind != RF_GWORD_ARG || s->words[sub].text[0] == '-'))
        sub++;
    bool known = false;
    for (size_t k = 0; sub < s->n_words && subs[k]; k++)
        known = known || !strcmp(s->words[sub].text, subs[k]);
    for (size_t j = sub + 1; known && j < s->n_words; j++) {
        const char *t = s->words[j].text;
        if (s->words[j].kind != RF_GWORD_ARG)
            continue;
        if (t[0] != '-')
            return j;
        if (t[1] && strchr("ceFfnstxyl", t[strlen(t) - 1]) && t[1] != '-')
            j++; /* -s NAME, -t TARGET, -c DIR, ...: the value is the next word */
    }
    return 0;
}

/* Strings that will run as shell code: parse them as nested lists. */
static int find_scripts(rf_gparse *p, int li, size_t si)
{
    const rf_gseg *s = &p->lists[li]->segs[si];
    size_t core = rf_guard_core_index(s);
    size_t n = s->n_words;
    for (size_t i = 0; i < n; i++) {
        s = &p->lists[li]->segs[si];
        /* An option (-x, not the path -d/bash) never names one of the
         * programs below: skip it without the string compares (this loop
         * sees every word of every command). */
        const char *text = s->words[i].text;
        if (s->words[i].kind != RF_GWORD_ARG || (text[0] == '-' && !strchr(text, '/')))
            continue;
        const char *name = rf_guard_basename(s->words[i].text);
        const char *script = NULL;
        if (rf_guard_is_shell(name) || !strcmp(name, "su") || !strcmp(name, "runuser") || !strcmp(name, "script"))
            script = script_after(s, i, false);
        else if (!strcmp(name, "env"))
            script = script_after(s, i, true);
        size_t tmux = i == core && !strcmp(name, "tmux") ? tmux_command(s, i) : 0;
        bool watch = !strcmp(name, "watch");
        size_t remote = i == core && !strcmp(name, "ssh") ? ssh_command(s, i) : tmux;
        if (i == core && !strcmp(name, "alias")) {
            /* alias NAME=VALUE: VALUE runs wherever NAME is typed later */
            for (size_t j = i + 1; j < n; j++) {
                const char *eq = strchr(p->lists[li]->segs[si].words[j].text, '=');
                if (eq && eq[1] && parse_script(p, li, si, eq + 1) < 0)
                    return -1;
            }
            break;
        }
        if (remote) {
            char *joined = join_args(s, remote);
            int r = joined ? parse_script(p, li, si, joined) : (p->oom = true, -1);
            free(joined);
            if (r < 0)
                return -1;
        } else if ((i == core && !strcmp(name, "eval")) || watch) {
            /* watch runs its operands with sh -c, joined by blanks */
            size_t from = i + 1;
            while (watch && from < n && s->words[from].text[0] == '-')
                from += !strcmp(s->words[from].text, "-n") || !strcmp(s->words[from].text, "--interval") ? 2 : 1;
            char *joined = join_args(s, from);
            int r = joined ? parse_script(p, li, si, joined) : (p->oom = true, -1);
            free(joined);
            if (r < 0)
                return -1;
        } else if (script && parse_script(p, li, si, script) < 0) {
            return -1;
        }
    }
    return stdin_scripts(p, li, si, core);
}

static void finish_seg(rf_gparse *p, int li, ssize_t *si, rf_gop op)
{
    if (*si < 0)
        return;
    rf_gseg *s = &p->lists[li]->segs[*si];
    s->op = op;
    record_assignments(p, s);
    find_scripts(p, li, (size_t)*si);
    *si = -1;
}

static int ensure_seg(rf_gparse *p, int li, ssize_t *si, size_t pos)
{
    if (*si >= 0)
        return 0;
    rf_glist *l = p->lists[li];
    if (++p->n_segs > RF_GUARD_MAX_SEGMENTS) {
        p->limit = "more than 4096 simple commands";
        return -1;
    }
    if (!grow((void **)&l->segs, &l->cap_segs, l->n_segs + 1, sizeof(*l->segs)))
        return p->oom = true, -1;
    l->segs[l->n_segs] = (rf_gseg){ .raw_start = pos, .raw_end = pos, .op = RF_GOP_END };
    *si = (ssize_t)l->n_segs++;
    return 0;
}

static const char *const redirect_ops[] = {
    "<<<", "<<-", "<<", "<>", "<&", "<", "&>>", "&>", ">>", ">|", ">&", ">", NULL,
};

static void add_heredoc(rf_gparse *p, int li, size_t si, const char *delim, bool strip)
{
    if (p->n_heredocs >= RF_GUARD_MAX_HEREDOCS) {
        p->limit = "more than 64 here-documents on one line";
        return;
    }
    rf_gheredoc *h = reallocarray(p->heredocs, p->n_heredocs + 1, sizeof(*h));
    char *d = strdup(delim);
    if (!h || !d) {
        free(d);
        if (h)
            p->heredocs = h;
        p->oom = true;
        return;
    }
    p->heredocs = h;
    h[p->n_heredocs++] = (rf_gheredoc){ p->lists[li]->src, li, si, d, strip };
}

/* A redirection at *pos (an fd number or {var} may come first). */
static int redirect(rf_gparse *p, int li, ssize_t *si, size_t *pos)
{
    const rf_glist *l = p->lists[li];
    size_t i = *pos;
    while (i < l->end && (isdigit((unsigned char)l->src[i]) || strchr("{}", l->src[i]) ||
                          (i > *pos && rf_guard_is_name_char(l->src[i]))))
        i++;
    const char *op = NULL;
    for (size_t k = 0; redirect_ops[k] && !op; k++)
        if (!strncmp(l->src + i, redirect_ops[k], strlen(redirect_ops[k])))
            op = redirect_ops[k];
    if (ensure_seg(p, li, si, *pos) < 0)
        return -1;
    i += strlen(op);
    while (i < l->end && (l->src[i] == ' ' || l->src[i] == '\t'))
        i++;
    rf_gword_kind kind = !strncmp(op, "<<<", 3) ? RF_GWORD_HERESTRING
                         : !strncmp(op, "<<", 2) ? RF_GWORD_HEREDOC : RF_GWORD_REDIR;
    rf_gseg *s = &p->lists[li]->segs[*si];
    size_t before = s->n_words;
    if (i < l->end && !strchr("\n;&|()", l->src[i]) &&
        rf_guard_lex_word(p, li, (size_t)*si, &i, kind, op) < 0)
        return -1;
    s = &p->lists[li]->segs[*si];
    if (s->n_words > before) {
        rf_gword *w = &s->words[before];
        bool digits = w->text[0] != '\0' && strspn(w->text, "0123456789") == strlen(w->text);
        if ((!strcmp(op, ">&") || !strcmp(op, "<&")) && (digits || !strcmp(w->text, "-")))
            w->kind = RF_GWORD_FD_DUP;
        if (kind == RF_GWORD_HEREDOC)
            add_heredoc(p, li, (size_t)*si, w->text, op[2] == '-');
    }
    s->raw_end = i;
    *pos = i;
    return 0;
}

static bool is_redirect_start(const rf_glist *l, size_t pos)
{
    size_t i = pos;
    if (i < l->end && l->src[i] == '{') { /* {fd}>file */
        i++;
        while (i < l->end && rf_guard_is_name_char(l->src[i]))
            i++;
        if (i >= l->end || l->src[i] != '}')
            return false;
        i++;
    } else {
        while (i < l->end && isdigit((unsigned char)l->src[i]))
            i++;
    }
    if (i >= l->end || (l->src[i] != '<' && l->src[i] != '>'))
        return false;
    return !(i + 1 < l->end && l->src[i + 1] == '(');
}

/* After a newline: the bodies of the heredocs started on that line. */
static int take_heredocs(rf_gparse *p, int li, size_t *pos)
{
    const rf_glist *l = p->lists[li];
    size_t k = 0;
    while (k < p->n_heredocs) {
        rf_gheredoc h = p->heredocs[k];
        if (h.src != l->src) {
            k++;
            continue;
        }
        memmove(&p->heredocs[k], &p->heredocs[k + 1], (p->n_heredocs - k - 1) * sizeof(h));
        p->n_heredocs--;
        size_t body = *pos, end = l->end, i = *pos, dl = strlen(h.delim);
        while (i < l->end) {
            const char *nl = memchr(l->src + i, '\n', l->end - i);
            size_t eol = nl ? (size_t)(nl - l->src) : l->end, t = i;
            while (h.strip_tabs && t < eol && l->src[t] == '\t')
                t++;
            if (eol - t == dl && !memcmp(l->src + t, h.delim, dl)) {
                end = i;
                i = nl ? eol + 1 : eol;
                break;
            }
            i = nl ? eol + 1 : eol;
        }
        free(h.delim);
        *pos = i;
        int child = rf_guard_parse_new_list(p, RF_GLIST_HEREDOC, h.list, h.seg, l->src, body, end, NULL);
        size_t ignored;
        if (child < 0 || rf_guard_seg_add_child(p, &p->lists[h.list]->segs[h.seg], child) < 0 ||
            rf_guard_parse_list(p, child, body, 0, &ignored) < 0)
            return -1;
    }
    return 0;
}

/* One operator or token at *pos; returns false at the end of this list. */
static bool step(rf_gparse *p, int li, ssize_t *si, size_t *pos, char close)
{
    const rf_glist *l = p->lists[li];
    char c = l->src[*pos], n = *pos + 1 < l->end ? l->src[*pos + 1] : '\0';
    if (c == ' ' || c == '\t' || (c == '\\' && n == '\n')) {
        *pos += c == '\\' ? 2 : 1;
    } else if (close && c == close) {
        (*pos)++;
        return false;
    } else if (c == '#') { /* a comment: tokens start here, so # starts one */
        const char *nl = memchr(l->src + *pos, '\n', l->end - *pos);
        *pos = nl ? (size_t)(nl - l->src) : l->end;
    } else if (c == '\n' || c == ';' || c == ')') {
        finish_seg(p, li, si, RF_GOP_SEQ);
        *pos += (c == ';' && (n == ';' || n == '&')) ? 2 : 1;
        if (c == '\n')
            take_heredocs(p, li, pos);
    } else if (c == '&' && n != '>') {
        finish_seg(p, li, si, n == '&' ? RF_GOP_AND : RF_GOP_BG);
        *pos += n == '&' ? 2 : 1;
    } else if (c == '|') {
        finish_seg(p, li, si, n == '|' ? RF_GOP_OR : RF_GOP_PIPE);
        *pos += (n == '|' || n == '&') ? 2 : 1;
    } else if (c == '(') {
        if (ensure_seg(p, li, si, *pos) < 0)
            return false;
        int child = rf_guard_parse_new_list(p, RF_GLIST_SUBSHELL, li, (size_t)*si, l->src, *pos + 1, l->end, NULL);
        if (child < 0 || rf_guard_seg_add_child(p, &p->lists[li]->segs[*si], child) < 0 ||
            rf_guard_parse_list(p, child, *pos + 1, ')', pos) < 0)
            return false;
        rf_gseg *s = &p->lists[li]->segs[*si];
        s->raw_end = *pos;
        /* NAME ( ): a function definition; its body is a command of its own,
         * so the body's first word is in command position */
        if (s->n_words == 1 && s->n_children == 1 && p->lists[child]->n_segs == 0)
            finish_seg(p, li, si, RF_GOP_SEQ);
    } else if (c == '&' || is_redirect_start(l, *pos)) {
        return redirect(p, li, si, pos) == 0;
    } else {
        if (ensure_seg(p, li, si, *pos) < 0 || rf_guard_lex_word(p, li, (size_t)*si, pos, RF_GWORD_ARG, NULL) < 0)
            return false;
        p->lists[li]->segs[*si].raw_end = *pos;
    }
    return true;
}

int rf_guard_parse_list(rf_gparse *p, int li, size_t pos, char close, size_t *end)
{
    ssize_t si = -1;
    while (pos < p->lists[li]->end && !p->limit && !p->oom && step(p, li, &si, &pos, close))
        ;
    if (!p->limit && !p->oom)
        finish_seg(p, li, &si, RF_GOP_END);
    *end = pos;
    return p->limit || p->oom ? -1 : 0;
}

int rf_guard_parse(rf_gparse *p, const char *command, rf_error **err)
{
    size_t end;
    if (rf_guard_parse_new_list(p, RF_GLIST_TOP, -1, 0, command, 0, strlen(command), NULL) == 0)
        rf_guard_parse_list(p, 0, 0, 0, &end);
    if (p->oom)
        return rf_error_set(err, ENOMEM, "checking the command");
    if (p->limit) {
        rf_error_set(err, 0, "command too complex to check: %s", p->limit);
        return rf_error_hint_set(err, "split the command into smaller ones");
    }
    return 0;
}

static void free_list(rf_glist *l)
{
    for (size_t s = 0; s < l->n_segs; s++) {
        for (size_t w = 0; w < l->segs[s].n_words; w++) {
            free(l->segs[s].words[w].text);
            free(l->segs[s].words[w].ptext);
        }
        free(l->segs[s].words);
        free(l->segs[s].children);
    }
    free(l->segs);
    free(l->owned);
    free(l);
}

void rf_guard_parse_free(rf_gparse *p)
{
    for (size_t i = 0; i < p->n_lists; i++)
        free_list(p->lists[i]);
    free(p->lists);
    for (size_t i = 0; i < p->n_vars; i++) {
        free(p->vars[i].name);
        free(p->vars[i].value);
    }
    free(p->vars);
    for (size_t i = 0; i < p->n_heredocs; i++)
        free(p->heredocs[i].delim);
    free(p->heredocs);
    *p = (rf_gparse){ 0 };
}
