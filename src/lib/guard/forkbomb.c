/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fork bombs by structure, not by spelling. The seed's pattern knows one
 * spelling, `:(){ :|:& };:`; `bomb() { bomb | bomb & }; bomb`, `function f
 * { f & f; }` or `. () ( .|. & )` are the same thing. What makes one is a
 * shell function whose body runs the function itself at least twice, with
 * at least one of those runs in a pipeline or in the background (a pipe
 * or & forks: the number of processes doubles at every level).
 *
 * A definition is `NAME ( ) BODY` (any spacing) or `function NAME [( )]
 * BODY`, in any list, so also inside sh -c, eval and $(..). The body is the
 * { .. } group that follows, across simple commands, or a ( .. ) subshell;
 * calls in lists nested in it ((..), $(..)) count, and inherit the pipe or
 * & of the command that holds them. Variables set earlier in the command
 * are already expanded by the lexer, so `x=f; f(){ $x|$x& }` is seen. */
#include "guard/guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORK_BOMB_SOURCE ":\\(\\)\\s*\\{.*\\};\\s*:"

typedef struct tally {
    size_t calls;
    bool forked;
} tally;

static bool is_keyword(const char *w)
{
    static const char *const kw[] = { "{", "}", "!", "then", "do", "else", "elif", "if", "while", "until",
                                      "time", NULL };
    for (size_t i = 0; kw[i]; i++)
        if (!strcmp(w, kw[i]))
            return true;
    return false;
}

/* The command word of s at or after word `from`: keywords skipped. */
static const char *command_word(const rf_gseg *s, size_t from)
{
    for (size_t i = from; i < s->n_words; i++) {
        if (s->words[i].kind != RF_GWORD_ARG)
            continue;
        if (!is_keyword(s->words[i].text))
            return s->words[i].text;
    }
    return NULL;
}

static bool seg_forks(const rf_glist *l, size_t si)
{
    rf_gop op = l->segs[si].op;
    return op == RF_GOP_PIPE || op == RF_GOP_BG || (si > 0 && l->segs[si - 1].op == RF_GOP_PIPE);
}

static void tally_list(const rf_gparse *p, int li, const char *name, bool forked, tally *t);

static void tally_seg(const rf_gparse *p, int li, size_t si, size_t from, const char *name, bool forked, tally *t)
{
    const rf_glist *l = p->lists[li];
    const rf_gseg *s = &l->segs[si];
    forked = forked || seg_forks(l, si);
    const char *w = command_word(s, from);
    if (w && !strcmp(w, name)) {
        t->calls++;
        t->forked = t->forked || forked;
    }
    for (size_t k = 0; k < s->n_children; k++)
        tally_list(p, s->children[k], name, forked, t);
}

static void tally_list(const rf_gparse *p, int li, const char *name, bool forked, tally *t)
{
    for (size_t si = 0; si < p->lists[li]->n_segs; si++)
        tally_seg(p, li, si, 0, name, forked, t);
}

/* Is segment si of list li the head of a definition? Then *name and
 * *body (the first word of the body in that segment). */
static bool definition(const rf_gparse *p, const rf_glist *l, size_t si, const char **name, size_t *body)
{
    const rf_gseg *s = &l->segs[si];
    if (s->n_words == 0 || s->words[0].kind != RF_GWORD_ARG)
        return false;
    if (!strcmp(s->words[0].text, "function") && s->n_words >= 2) {
        *name = s->words[1].text;
        *body = 2;
        return true;
    }
    if (s->n_children == 0)
        return false;
    const rf_glist *paren = p->lists[s->children[0]];
    if (paren->kind != RF_GLIST_SUBSHELL || paren->n_segs != 0 || paren->start == 0)
        return false;
    /* NAME ( ): one word, then the empty parentheses */
    const char *src = l->src;
    size_t open = paren->start - 1, i = s->raw_start;
    while (i < open && (src[i] == ' ' || src[i] == '\t'))
        i++;
    size_t w = i;
    while (w < open && src[w] != ' ' && src[w] != '\t')
        w++;
    while (w < open && (src[w] == ' ' || src[w] == '\t'))
        w++;
    if (w != open || i == open)
        return false;
    *name = s->words[0].text;
    *body = 1;
    return true;
}

static int brace_delta(const rf_gseg *s, size_t from)
{
    int d = 0;
    for (size_t i = from; i < s->n_words; i++)
        if (s->words[i].kind == RF_GWORD_ARG)
            d += !strcmp(s->words[i].text, "{") - !strcmp(s->words[i].text, "}");
    return d;
}

/* The calls to `name` in the body that starts at word `body` of segment si. */
static tally body_calls(const rf_gparse *p, int li, size_t si, size_t body, const char *name)
{
    const rf_glist *l = p->lists[li];
    tally t = { 0 };
    int depth = brace_delta(&l->segs[si], body);
    tally_seg(p, li, si, body, name, false, &t);
    /* a { .. } body goes on until its closing brace; a ( .. ) body is the
     * nested list already counted. `f()` then a newline: the body is next. */
    bool open = depth > 0 || (body >= l->segs[si].n_words && l->segs[si].n_children <= 1);
    for (size_t k = si + 1; open && k < l->n_segs; k++) {
        tally_seg(p, li, k, 0, name, false, &t);
        depth += brace_delta(&l->segs[k], 0);
        open = depth > 0;
    }
    return t;
}

/* 1 with the verdict set when a definition in the command is a fork bomb. */
int rf_guard_scan_forkbomb(rf_gcheck *c)
{
    const char *source = NULL;
    for (size_t i = 0; i < c->g->deny.n && !source; i++)
        if (!strcmp(c->g->deny.items[i].source, FORK_BOMB_SOURCE))
            source = c->g->deny.items[i].source;
    if (!source || !c->g->deny_enabled)
        return 0;
    for (size_t li = 0; li < c->parse.n_lists; li++) {
        const rf_glist *l = c->parse.lists[li];
        for (size_t si = 0; si < l->n_segs; si++) {
            const char *name;
            size_t body;
            if (c->views[li][si].exempt || !definition(&c->parse, l, si, &name, &body))
                continue;
            tally t = body_calls(&c->parse, (int)li, si, body, name);
            if (t.calls < 2 || !t.forked)
                continue;
            c->result = RF_GUARD_BLOCKED_PATTERN;
            c->pattern = source;
            if (asprintf(&c->detail, "fork bomb: function %s runs itself %zu times with | or &", name, t.calls) < 0) {
                c->detail = NULL;
                return -1;
            }
            return 1;
        }
    }
    return 0;
}
