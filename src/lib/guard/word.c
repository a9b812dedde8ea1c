/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Lexing one shell word into the text the shell would pass to the command:
 * quotes and backslash escapes removed, $'..' decoded, variables assigned
 * earlier in the same command expanded (and split on blanks when unquoted,
 * as the shell does). Command substitutions, backticks and process
 * substitutions are parsed as nested lists; their source text stays in the
 * word so the seed's `$(..)` / backtick patterns still see it.
 *
 * Each word also gets a "path text" for the workspace check, in which an
 * expansion the guard cannot know becomes RF_GUARD_UNKNOWN (so `$D/x` is not
 * mistaken for `/x`), $PWD and $(pwd) become ".", $HOME becomes RF_GUARD_HOME
 * and $IFS a blank. */
#include "guard/guard.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char UNKNOWN[] = { RF_GUARD_UNKNOWN, '\0' };
static const char HOME[] = { RF_GUARD_HOME, '\0' };

typedef struct lexer {
    rf_gparse *p;
    int li;
    size_t si;
    const char *src;
    size_t pos, end;
    rf_gbuf text, path;
    rf_gbuf mask;      /* per byte of text: 0 unquoted literal, 1 otherwise */
    rf_gbuf pmask;     /* the same for path */
    bool unquoted_lit; /* the next add_lit is an unquoted literal */
    bool started;      /* "" is a word too */
    bool tilde;
    rf_gword_kind kind;
    const char *op;
} lexer;

bool rf_guard_is_name_start(char c)
{
    return c == '_' || isalpha((unsigned char)c);
}

bool rf_guard_is_name_char(char c)
{
    return c == '_' || isalnum((unsigned char)c);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

static bool is_meta(char c)
{
    return is_blank(c) || strchr(";&|<>()", c) != NULL;
}

/* Neither a metacharacter nor the start of a quote, escape or expansion. */
static bool is_plain(char c)
{
    return !is_meta(c) && !strchr("\\'\"$`", c);
}

static rf_gseg *cur_seg(lexer *lx)
{
    return &lx->p->lists[lx->li]->segs[lx->si];
}

static void push(lexer *lx, rf_gbuf *text, char *ptext, bool tilde)
{
    if (rf_guard_seg_add_word(lx->p, cur_seg(lx), text, lx->kind, lx->op, tilde) < 0) {
        free(ptext);
        return;
    }
    cur_seg(lx)->words[cur_seg(lx)->n_words - 1].ptext = ptext;
    if (!ptext)
        lx->p->oom = true;
}

/* {a,b} in the word: one word per alternative. The path text has the
 * same unquoted braces, so it expands into the same alternatives. */
static void push_expanded(lexer *lx)
{
    rf_gwords ex = { 0 }, pex = { 0 };
    bool over = false, pover = false;
    if (rf_guard_brace_expand(lx->text.s, lx->mask.s, lx->text.len, &ex, &over) < 0 ||
        rf_guard_brace_expand(lx->path.s ? lx->path.s : "", lx->pmask.s ? lx->pmask.s : "", lx->path.len, &pex,
                              &pover) < 0)
        lx->p->oom = true;
    else if (over || pover)
        lx->p->limit = "brace expansion into more than 256 words";
    lx->p->expanded += lx->text.len * ex.n;
    if (lx->p->expanded > RF_GUARD_MAX_EXPANSION)
        lx->p->limit = "brace expansion larger than 1 MiB";
    for (size_t i = 0; i < ex.n && !lx->p->limit && !lx->p->oom; i++) {
        rf_gbuf b = { 0 };
        rf_guard_buf_adds(&b, ex.v[i]);
        push(lx, &b, strdup(i < pex.n ? pex.v[i] : ex.v[i]), i == 0 && lx->tilde);
        rf_guard_buf_free(&b); /* taken by the word, unless the word limit refused it (found by fuzz-guard) */
    }
    rf_guard_words_free(&ex);
    rf_guard_words_free(&pex);
}

static bool has_unquoted_brace(const lexer *lx)
{
    for (size_t i = 0; i < lx->text.len; i++)
        if (lx->text.s[i] == '{' && !lx->mask.s[i])
            return true;
    return false;
}

static void emit(lexer *lx)
{
    if (!lx->started)
        return;
    if (lx->mask.failed || lx->pmask.failed)
        lx->p->oom = true;
    else if (has_unquoted_brace(lx))
        push_expanded(lx);
    else
        push(lx, &lx->text, rf_guard_buf_steal(&lx->path), lx->tilde);
    rf_guard_buf_free(&lx->text);
    rf_guard_buf_free(&lx->path);
    /* The masks are scratch: keep their memory for the next word. */
    rf_guard_buf_reset(&lx->mask);
    rf_guard_buf_reset(&lx->pmask);
    lx->started = false;
    lx->tilde = false;
}

/* Literal text: both views. A stray RF_GUARD_UNKNOWN or RF_GUARD_HOME byte
 * in the command must not pass for an expansion in the path text. */
static void add_lit(lexer *lx, const char *s, size_t n)
{
    size_t at = lx->path.len;
    rf_guard_buf_add(&lx->text, s, n);
    rf_guard_buf_add(&lx->path, s, n);
    rf_guard_buf_fill(&lx->mask, lx->unquoted_lit ? 0 : 1, n);
    rf_guard_buf_fill(&lx->pmask, lx->unquoted_lit ? 0 : 1, n);
    for (size_t i = at; !lx->path.failed && i < lx->path.len; i++)
        if (lx->path.s[i] == RF_GUARD_UNKNOWN || lx->path.s[i] == RF_GUARD_HOME)
            lx->path.s[i] = '?';
    lx->started = true;
}

/* An expansion's value; unquoted, blanks split it into several words. */
static void add_value(lexer *lx, const char *v, bool split)
{
    size_t n = strlen(v);
    lx->p->expanded += n;
    if (lx->p->expanded > RF_GUARD_MAX_EXPANSION) {
        lx->p->limit = "variable expansion larger than 1 MiB";
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (split && is_blank(v[i]))
            emit(lx);
        else
            add_lit(lx, &v[i], 1);
    }
}

/* Source text of an expansion in the text view, `path` in the path view. */
static void add_expansion(lexer *lx, size_t from, size_t to, const char *path)
{
    rf_guard_buf_add(&lx->text, lx->src + from, to - from);
    for (size_t i = from; i < to; i++)
        rf_guard_buf_addc(&lx->mask, 1);
    rf_guard_buf_adds(&lx->path, path);
    for (size_t i = 0; path[i]; i++)
        rf_guard_buf_addc(&lx->pmask, 1);
    lx->started = true;
}

static int nested(lexer *lx, rf_glist_kind kind, size_t at, size_t *endp)
{
    int child = rf_guard_parse_new_list(lx->p, kind, lx->li, lx->si, lx->src, at, lx->end, NULL);
    if (child < 0)
        return -1;
    if (rf_guard_seg_add_child(lx->p, cur_seg(lx), child) < 0)
        return -1;
    return rf_guard_parse_list(lx->p, child, at, ')', endp);
}

/* `..`: the inner text with \` \\ \$ unescaped is parsed on its own. */
static int nested_backtick(lexer *lx, size_t at, size_t *endp)
{
    rf_gbuf in = { 0 };
    size_t i = at + 1;
    for (; i < lx->end && lx->src[i] != '`'; i++) {
        if (lx->src[i] == '\\' && i + 1 < lx->end && strchr("`\\$", lx->src[i + 1]))
            i++;
        rf_guard_buf_addc(&in, lx->src[i]);
    }
    *endp = i < lx->end ? i + 1 : i;
    char *inner = rf_guard_buf_steal(&in);
    if (!inner) {
        lx->p->oom = true;
        return -1;
    }
    size_t len = strlen(inner);
    int child = rf_guard_parse_new_list(lx->p, RF_GLIST_BACKTICK, lx->li, lx->si, inner, 0, len, inner);
    if (child < 0)
        return -1;
    if (rf_guard_seg_add_child(lx->p, cur_seg(lx), child) < 0)
        return -1;
    size_t ignored;
    return rf_guard_parse_list(lx->p, child, 0, 0, &ignored);
}

static bool is_pwd_subst(const lexer *lx, size_t from, size_t to)
{
    size_t n = to - from;
    const char *s = lx->src + from;
    return (n == 6 && !memcmp(s, "$(pwd)", 6)) || (n == 5 && !memcmp(s, "`pwd`", 5));
}

/* A `...` substitution at lx->pos: skipped whole and recorded as an
 * expansion (the current directory for `pwd`, else unknown). */
static int backtick(lexer *lx)
{
    size_t from = lx->pos, to;
    if (nested_backtick(lx, from, &to) < 0)
        return -1;
    lx->pos = to;
    add_expansion(lx, from, to, is_pwd_subst(lx, from, to) ? "." : UNKNOWN);
    return 0;
}

/* ${...}: find the closing brace, parsing $( and ` inside as nested lists. */
static int param_end(lexer *lx, size_t at, size_t *endp)
{
    int depth = 0;
    size_t i = at + 2;
    while (i < lx->end) {
        char c = lx->src[i];
        if (c == '\\') {
            i += 2;
        } else if (c == '\'') {
            const char *q = memchr(lx->src + i + 1, '\'', lx->end - i - 1);
            i = q ? (size_t)(q - lx->src) + 1 : lx->end;
        } else if (c == '$' && i + 1 < lx->end && lx->src[i + 1] == '(') {
            if (nested(lx, RF_GLIST_SUBST, i + 2, &i) < 0)
                return -1;
        } else if (c == '`') {
            if (nested_backtick(lx, i, &i) < 0)
                return -1;
        } else if (c == '{') {
            depth++, i++;
        } else if (c == '}') {
            i++;
            if (depth-- == 0)
                break;
        } else {
            i++;
        }
    }
    *endp = i < lx->end ? i : lx->end;
    return 0;
}

/* Which path text stands for the variable `name` when it is not known. */
static const char *unknown_var_path(const char *name, size_t n)
{
    if (n == 3 && !memcmp(name, "PWD", 3))
        return ".";
    if (n == 4 && !memcmp(name, "HOME", 4))
        return HOME;
    if (n == 3 && !memcmp(name, "IFS", 3))
        return " ";
    return UNKNOWN;
}

static void expand_name(lexer *lx, size_t from, size_t to, const char *name, size_t n, bool split)
{
    const char *v = rf_guard_var_get(lx->p, name, n);
    if (v)
        add_value(lx, v, split);
    else
        add_expansion(lx, from, to, unknown_var_path(name, n));
}

static void param(lexer *lx, bool split)
{
    size_t from = lx->pos, to;
    if (param_end(lx, from, &to) < 0)
        return;
    lx->pos = to;
    const char *name = lx->src + from + 2;
    size_t n = to > from + 3 ? to - from - 3 : 0;
    bool simple = n > 0 && rf_guard_is_name_start(name[0]);
    for (size_t i = 0; simple && i < n; i++)
        simple = rf_guard_is_name_char(name[i]);
    if (simple)
        expand_name(lx, from, to, name, n, split);
    else
        add_expansion(lx, from, to, UNKNOWN);
}

static unsigned hexval(char c)
{
    return isdigit((unsigned char)c) ? (unsigned)(c - '0') : (unsigned)(tolower((unsigned char)c) - 'a' + 10);
}

static void put_utf8(rf_gbuf *b, unsigned long cp)
{
    if (cp < 0x80) {
        rf_guard_buf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        rf_guard_buf_addc(b, (char)(0xc0 | (cp >> 6)));
        rf_guard_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        rf_guard_buf_addc(b, (char)(0xe0 | (cp >> 12)));
        rf_guard_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        rf_guard_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x110000) {
        rf_guard_buf_addc(b, (char)(0xf0 | (cp >> 18)));
        rf_guard_buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
        rf_guard_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        rf_guard_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
    }
}

/* One escape of $'..' at s[*i] (just after the backslash); returns the
 * code point or byte, with *is_cp telling which. */
static unsigned long ansi_escape(const char *s, size_t end, size_t *i, bool *is_cp)
{
    static const char simple_in[] = "abeEfnrtv\\'\"?";
    static const char simple_out[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
    char c = s[*i];
    *is_cp = false;
    const char *k = strchr(simple_in, c);
    if (k && c) {
        (*i)++;
        return (unsigned char)simple_out[k - simple_in];
    }
    unsigned long v = 0;
    if (c >= '0' && c <= '7') {
        for (int n = 0; n < 3 && *i < end && s[*i] >= '0' && s[*i] <= '7'; n++, (*i)++)
            v = v * 8 + (unsigned long)(s[*i] - '0');
        return v & 0xff;
    }
    int max = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (max && *i + 1 < end && isxdigit((unsigned char)s[*i + 1])) {
        (*i)++;
        for (int n = 0; n < max && *i < end && isxdigit((unsigned char)s[*i]); n++, (*i)++)
            v = v * 16 + hexval(s[*i]);
        *is_cp = c != 'x';
        return v;
    }
    if (c == 'c' && *i + 1 < end) {
        *i += 2;
        return (unsigned long)(s[*i - 1] & 0x1f);
    }
    *is_cp = true; /* unknown escape: bash keeps the backslash */
    return '\\';
}

/* $'...': decoded as bash does; a NUL ends the string there. */
static void ansi_c(lexer *lx)
{
    rf_gbuf out = { 0 };
    bool cut = false;
    size_t i = lx->pos + 2;
    while (i < lx->end && lx->src[i] != '\'') {
        unsigned long v = (unsigned char)lx->src[i];
        bool is_cp = false;
        if (lx->src[i] == '\\' && i + 1 < lx->end) {
            i++;
            size_t before = i;
            v = ansi_escape(lx->src, lx->end, &i, &is_cp);
            if (is_cp && v == '\\' && i == before) /* kept backslash */
                is_cp = false;
        } else {
            i++;
        }
        if (v == 0)
            cut = true;
        if (cut)
            continue;
        if (is_cp)
            put_utf8(&out, v);
        else
            rf_guard_buf_addc(&out, (char)v);
    }
    lx->pos = i < lx->end ? i + 1 : i;
    char *s = rf_guard_buf_steal(&out);
    if (!s) {
        lx->p->oom = true;
        return;
    }
    add_lit(lx, s, strlen(s));
    free(s);
}

static void dollar(lexer *lx, bool in_dq);

static void double_quote(lexer *lx)
{
    lx->started = true;
    lx->pos++;
    while (lx->pos < lx->end && !lx->p->limit && !lx->p->oom) {
        char c = lx->src[lx->pos];
        if (c == '"') {
            lx->pos++;
            return;
        }
        if (c == '\\' && lx->pos + 1 < lx->end && strchr("$`\"\\\n", lx->src[lx->pos + 1])) {
            if (lx->src[lx->pos + 1] != '\n')
                add_lit(lx, &lx->src[lx->pos + 1], 1);
            lx->pos += 2;
        } else if (c == '$') {
            dollar(lx, true);
        } else if (c == '`') {
            if (backtick(lx) < 0)
                return;
        } else {
            add_lit(lx, &c, 1);
            lx->pos++;
        }
    }
}

static void dollar(lexer *lx, bool in_dq)
{
    size_t from = lx->pos;
    char next = from + 1 < lx->end ? lx->src[from + 1] : '\0';
    if (next == '(') {
        size_t to;
        if (nested(lx, RF_GLIST_SUBST, from + 2, &to) < 0)
            return;
        lx->pos = to;
        add_expansion(lx, from, to, is_pwd_subst(lx, from, to) ? "." : UNKNOWN);
    } else if (next == '{') {
        param(lx, !in_dq);
    } else if (next == '\'' && !in_dq) {
        ansi_c(lx);
    } else if (next == '"' && !in_dq) {
        lx->pos++; /* $"..." is a translated "..." */
        double_quote(lx);
    } else if (rf_guard_is_name_start(next)) {
        size_t i = from + 1;
        while (i < lx->end && rf_guard_is_name_char(lx->src[i]))
            i++;
        lx->pos = i;
        expand_name(lx, from, i, lx->src + from + 1, i - from - 1, !in_dq);
    } else if (next && (isdigit((unsigned char)next) || strchr("@*#?$!-", next))) {
        lx->pos += 2;
        add_expansion(lx, from, from + 2, UNKNOWN);
    } else {
        add_lit(lx, "$", 1);
        lx->pos++;
    }
}

static void single_quote(lexer *lx)
{
    size_t from = lx->pos + 1;
    const char *q = memchr(lx->src + from, '\'', lx->end - from);
    size_t to = q ? (size_t)(q - lx->src) : lx->end;
    add_lit(lx, lx->src + from, to - from);
    lx->pos = q ? to + 1 : to;
}

static void unquoted(lexer *lx, char c)
{
    if (c == '\\') {
        if (lx->pos + 1 < lx->end && lx->src[lx->pos + 1] != '\n')
            add_lit(lx, &lx->src[lx->pos + 1], 1);
        lx->pos += 2;
    } else if (c == '\'') {
        single_quote(lx);
    } else if (c == '"') {
        double_quote(lx);
    } else if (c == '$') {
        dollar(lx, false);
    } else if (c == '`') {
        if (backtick(lx) < 0)
            return;
    } else {
        /* A run of plain bytes is added at once: most of a command is. */
        size_t n = 1;
        while (lx->pos + n < lx->end && is_plain(lx->src[lx->pos + n]))
            n++;
        lx->unquoted_lit = true; /* the only bytes brace expansion sees */
        add_lit(lx, &lx->src[lx->pos], n);
        lx->unquoted_lit = false;
        lx->pos += n;
    }
}

int rf_guard_lex_word(rf_gparse *p, int li, size_t si, size_t *pos, rf_gword_kind kind, const char *op)
{
    const rf_glist *l = p->lists[li];
    lexer lx = { .p = p, .li = li, .si = si, .src = l->src, .pos = *pos, .end = l->end,
                 .kind = kind, .op = op };
    lx.tilde = lx.pos < lx.end && lx.src[lx.pos] == '~';
    while (lx.pos < lx.end && !p->limit && !p->oom) {
        char c = lx.src[lx.pos];
        if ((c == '<' || c == '>') && lx.pos + 1 < lx.end && lx.src[lx.pos + 1] == '(') {
            size_t from = lx.pos, to;
            if (nested(&lx, RF_GLIST_PROCSUB, from + 2, &to) < 0)
                break;
            lx.pos = to;
            add_expansion(&lx, from, to, UNKNOWN);
            continue;
        }
        if (is_meta(c))
            break;
        unquoted(&lx, c);
    }
    if (lx.pos > lx.end)
        lx.pos = lx.end;
    if (!p->limit && !p->oom)
        emit(&lx);
    rf_guard_buf_free(&lx.text);
    rf_guard_buf_free(&lx.path);
    rf_guard_buf_free(&lx.mask);
    rf_guard_buf_free(&lx.pmask);
    *pos = lx.pos;
    return p->limit || p->oom ? -1 : 0;
}
