/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Deny patterns over every string the command is seen as: the command as
 * written (the seed's check), each list of simple commands re-joined from
 * its normalised segments, and every segment's views (view.c).
 *
 * custom_allow_patterns: the seed exempts a whole command when an allow
 * pattern matches it anywhere, so an allow for "git push" also waved
 * through "git push; rm -rf ~". Here an allow pattern exempts
 *  - the whole command when it matches all of it (anchored at both ends),
 *    or when the command is one simple command (the seed's case);
 *  - otherwise only the simple commands it matches (never one holding a
 *    nested command such as $(..)): their text is left out of the strings
 *    the deny patterns see, the rest of the command is checked as usual. */
#include "guard/guard.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { LV_FULL, LV_CORE, LV_CANON } level;

static const char *op_text(rf_gop op)
{
    switch (op) {
    case RF_GOP_PIPE: return " | ";
    case RF_GOP_AND: return " && ";
    case RF_GOP_OR: return " || ";
    case RF_GOP_SEQ: return " ; ";
    case RF_GOP_BG: return " & ";
    default: return "";
    }
}

static const rf_gview *view_of(const rf_gcheck *c, size_t li, size_t si)
{
    return &c->views[li][si];
}

/* One match, counted against the budget of the whole check: past it the
 * match is undecided, which fails closed. */
static rf_gmatch match(rf_gcheck *c, const rf_gpattern *p, const char *s, size_t len, bool whole)
{
    if (++c->matches > RF_GUARD_MAX_MATCHES)
        return RF_GMATCH_LIMIT;
    return rf_guard_pattern_match(p, s, len, whole, c->md, c->g->mctx);
}

/* What a string is, for the patterns (patterns.c): text (every text
 * pattern), a command position (the command patterns' anchored forms), or
 * another interpreter's code (the command patterns' seed text). */
typedef enum { AS_TEXT, AS_COMMAND, AS_CODE } subject;

/* 1 and the verdict set when a deny pattern matches (or could not be
 * decided within the limits: fail closed), 0 when none does, -1 on OOM. */
static int deny_as(rf_gcheck *c, const char *s, subject as)
{
    rf_gbytes bytes;
    size_t len = rf_guard_bytes_of(s, &bytes);
    if (len == 0)
        return 0;
    for (size_t i = 0; i < c->g->deny.n; i++) {
        const rf_gpattern *p = &c->g->deny.items[i];
        if ((as == AS_TEXT) != (p->command == NULL) || !rf_guard_pattern_may_match(p, s, &bytes))
            continue;
        rf_gpattern use = *p;
        use.code = as == AS_COMMAND ? p->command : p->code;
        rf_gmatch m = match(c, &use, s, len, false);
        if (m == RF_GMATCH_NO)
            continue;
        c->result = RF_GUARD_BLOCKED_PATTERN;
        c->pattern = p->source;
        if (m == RF_GMATCH_LIMIT) {
            if (asprintf(&c->detail, "%s (undecided: %s)", s, c->matches > RF_GUARD_MAX_MATCHES
                         ? "the command needs too many matches" : "the pattern hit the match limit") < 0)
                c->detail = NULL;
        } else {
            c->detail = strdup(s);
        }
        return c->detail ? 1 : -1;
    }
    return 0;
}

static int deny(rf_gcheck *c, const char *s)
{
    return deny_as(c, s, AS_TEXT);
}

static int deny_all(rf_gcheck *c, char *const *v, subject as)
{
    for (size_t k = 0; v && v[k]; k++) {
        int r = deny_as(c, v[k], as);
        if (r)
            return r;
    }
    return 0;
}

static bool allowed_by(rf_gcheck *c, const char *s, bool whole)
{
    for (size_t i = 0; i < c->g->allow.n; i++)
        if (match(c, &c->g->allow.items[i], s, strlen(s), whole) == RF_GMATCH_YES)
            return true;
    return false;
}

static void render(const rf_gcheck *c, size_t li, level lv, rf_gbuf *b)
{
    const rf_glist *l = c->parse.lists[li];
    for (size_t si = 0; si < l->n_segs; si++) {
        const rf_gseg *s = &l->segs[si];
        const rf_gview *v = view_of(c, li, si);
        if (v->exempt) {
            /* left out */
        } else if (s->n_words == 0) {
            for (size_t k = 0; k < s->n_children; k++) {
                if (c->parse.lists[s->children[k]]->kind != RF_GLIST_SUBSHELL)
                    continue;
                rf_guard_buf_adds(b, lv == LV_FULL ? "( " : "");
                render(c, (size_t)s->children[k], lv, b);
                rf_guard_buf_adds(b, lv == LV_FULL ? " )" : "");
            }
        } else {
            rf_guard_buf_adds(b, lv == LV_FULL ? v->full : lv == LV_CORE ? v->core : v->canon);
        }
        rf_guard_buf_adds(b, op_text(s->op));
    }
}

/* The list's source text without the exempt segments. */
static char *masked_source(const rf_gcheck *c, size_t li)
{
    const rf_glist *l = c->parse.lists[li];
    rf_gbuf b = { 0 };
    size_t at = l->start;
    for (size_t si = 0; si < l->n_segs; si++) {
        if (!view_of(c, li, si)->exempt)
            continue;
        rf_guard_buf_add(&b, l->src + at, l->segs[si].raw_start - at);
        at = l->segs[si].raw_end;
    }
    rf_guard_buf_add(&b, l->src + at, l->end > at ? l->end - at : 0);
    return rf_guard_buf_steal(&b);
}

static int deny_taken(rf_gcheck *c, char *s)
{
    int r = s ? deny(c, s) : -1;
    free(s);
    return r;
}

static int check_list_level(rf_gcheck *c, size_t li)
{
    const rf_glist *l = c->parse.lists[li];
    int r = 0;
    if (li == 0 || l->owned)
        r = deny_taken(c, masked_source(c, li));
    size_t busy = 0;
    for (size_t si = 0; si < l->n_segs; si++)
        busy += l->segs[si].n_words > 0 || l->segs[si].n_children > 0;
    for (level lv = LV_FULL; r == 0 && busy > 1 && lv <= LV_CANON; lv++) {
        rf_gbuf b = { 0 };
        render(c, li, lv, &b);
        r = deny_taken(c, rf_guard_buf_steal(&b));
    }
    return r;
}

/* `sh <(curl ...)` and `source <(curl ...)` are `curl ... | sh`: check
 * them in that form. */
static int check_procsub_shell(rf_gcheck *c, size_t li, size_t si)
{
    const rf_gseg *s = &c->parse.lists[li]->segs[si];
    const char *cmd = view_of(c, li, si)->cmd;
    if (strcmp(cmd, "sh") && strcmp(cmd, "source") && strcmp(cmd, "."))
        return 0;
    int r = 0;
    for (size_t k = 0; r == 0 && k < s->n_children; k++) {
        if (c->parse.lists[s->children[k]]->kind != RF_GLIST_PROCSUB)
            continue;
        rf_gbuf b = { 0 };
        render(c, (size_t)s->children[k], LV_CANON, &b);
        rf_guard_buf_adds(&b, " | sh");
        r = deny_taken(c, rf_guard_buf_steal(&b));
    }
    return r;
}

static int check_segment(rf_gcheck *c, size_t li, size_t si)
{
    const rf_gview *v = view_of(c, li, si);
    if (v->exempt || c->parse.lists[li]->segs[si].n_words == 0)
        return 0;
    const char *seen[] = { v->full, v->programs, v->core, v->canon };
    for (size_t k = 0; k < 4; k++) {
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup = dup || !strcmp(seen[j], seen[k]);
        int r = dup ? 0 : deny(c, seen[k]);
        if (r)
            return r;
    }
    for (size_t k = 0; v->variants && v->variants[k]; k++) {
        int r = strcmp(v->variants[k], v->canon) ? deny(c, v->variants[k]) : 0;
        if (r)
            return r;
    }
    /* command position: the wrapper chain, the canonical core and its
     * variants, each string once */
    int r = deny_all(c, v->commands, AS_COMMAND);
    if (r == 0 && v->core_index != SIZE_MAX && !rf_strv_contains(v->commands, v->canon))
        r = deny_as(c, v->canon, AS_COMMAND);
    for (size_t k = 0; r == 0 && v->variants && v->variants[k]; k++)
        if (strcmp(v->variants[k], v->canon) && !rf_strv_contains(v->commands, v->variants[k]))
            r = deny_as(c, v->variants[k], AS_COMMAND);
    if (r == 0)
        r = deny_all(c, v->code, AS_CODE);
    return r ? r : check_procsub_shell(c, li, si);
}

static char *trimmed(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    return strndup(s, n);
}

/* Mark exempt segments; *whole when the entire command is exempt. */
static int exemptions(rf_gcheck *c, bool *whole)
{
    *whole = false;
    if (c->g->allow.n == 0)
        return 0;
    char *cmd = trimmed(c->command);
    if (!cmd)
        return -1;
    size_t busy = 0, nested = c->parse.n_lists - 1;
    for (size_t si = 0; si < c->parse.lists[0]->n_segs; si++)
        busy += c->parse.lists[0]->segs[si].n_words > 0;
    *whole = allowed_by(c, cmd, true) || (busy == 1 && nested == 0 && allowed_by(c, cmd, false));
    free(cmd);
    for (size_t li = 0; !*whole && li < c->parse.n_lists; li++) {
        const rf_glist *l = c->parse.lists[li];
        for (size_t si = 0; si < l->n_segs; si++) {
            const rf_gseg *s = &l->segs[si];
            rf_gview *v = &c->views[li][si];
            if (s->n_words > 0 && s->n_children == 0)
                v->exempt = allowed_by(c, v->raw, false) || allowed_by(c, v->full, false);
            *whole = *whole || (v->exempt && busy == 1 && nested == 0);
        }
    }
    return 0;
}

int rf_guard_scan_patterns(rf_gcheck *c, rf_error **err)
{
    if (!c->g->deny_enabled || c->g->deny.n == 0)
        return 0;
    bool whole;
    if (exemptions(c, &whole) < 0)
        return rf_error_set(err, ENOMEM, "checking the command");
    if (whole)
        return 0;
    for (size_t li = 0; li < c->parse.n_lists; li++) {
        int r = check_list_level(c, li);
        for (size_t si = 0; r == 0 && si < c->parse.lists[li]->n_segs; si++)
            r = check_segment(c, li, si);
        if (r < 0)
            return rf_error_set(err, ENOMEM, "checking the command");
        if (r > 0)
            return 0;
    }
    if (rf_guard_scan_forkbomb(c) < 0)
        return rf_error_set(err, ENOMEM, "checking the command");
    return 0;
}
