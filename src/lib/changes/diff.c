/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small line diff (Myers' O((N+M)D) algorithm, after the common prefix
 * and suffix are stripped) printed as a unified diff with 3 lines of
 * context. Written here rather than running diff(1) or git: the session's
 * files are read beneath the workspace's and the upper layer's fds
 * (no path is handed to another program that would follow symlinks), and
 * `changes diff` works on a host without either tool. An edit script
 * longer than MAX_D lines falls back to "everything between the common
 * ends replaced", which is still a correct diff, only not the shortest. */
#include "changes/changes.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/printable.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT 3
#define MAX_D 1000

typedef struct line {
    const char *p;
    size_t len; /* with its '\n', if it has one */
} line;

typedef struct lines {
    line *v;
    size_t n;
} lines;

typedef enum { OP_EQ, OP_DEL, OP_INS } op_kind;
typedef struct op {
    op_kind t;
    size_t a, b; /* lines of a and b before this one */
} op;

typedef struct ops {
    op *v;
    size_t n, cap;
} ops;

int rf_changes_appendf(char **out, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    char *grown = realloc(*out, *len + (size_t)n + 1);
    if (!grown) {
        free(s);
        return -1;
    }
    memcpy(grown + *len, s, (size_t)n + 1);
    *out = grown;
    *len += (size_t)n;
    free(s);
    return 0;
}

static int split(const char *s, size_t len, lines *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    out->v = calloc(n + 2, sizeof *out->v);
    if (!out->v)
        return -1;
    out->n = 0;
    for (size_t start = 0; start < len;) {
        const char *nl = memchr(s + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - s) + 1 : len;
        out->v[out->n++] = (line){ s + start, end - start };
        start = end;
    }
    return 0;
}

static bool eq(const line *x, const line *y)
{
    return x->len == y->len && !memcmp(x->p, y->p, x->len);
}

static int push_op(ops *o, op_kind t, size_t a, size_t b)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        op *v = realloc(o->v, cap * sizeof *v);
        if (!v)
            return -1;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (op){ t, a, b };
    return 0;
}

/* Myers' forward search over a[0..n) and b[0..m), keeping each step's
 * frontier for the walk back. Returns D, or -1 when it exceeds MAX_D. */
static long myers_search(const line *a, size_t n, const line *b, size_t m, long **trace_out)
{
    long max = (long)(n + m), lim = max < MAX_D ? max : MAX_D;
    long width = 2 * lim + 3;
    long *v = calloc((size_t)width, sizeof *v);
    long *trace = calloc((size_t)((lim + 1) * width), sizeof *trace);
    if (!v || !trace) {
        free(v);
        free(trace);
        return -2;
    }
    long off = lim + 1;
    for (long d = 0; d <= lim; d++) {
        memcpy(trace + d * width, v, (size_t)width * sizeof *v);
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
            long y = x - k;
            while (x < (long)n && y < (long)m && eq(&a[x], &b[y]))
                x++, y++;
            v[off + k] = x;
            if (x >= (long)n && y >= (long)m) {
                free(v);
                *trace_out = trace;
                return d;
            }
        }
    }
    free(v);
    free(trace);
    return -1;
}

/* The walk back from (n, m), then the ops in forward order. */
static int myers_ops(long d_end, const long *trace, long lim, size_t n, size_t m, size_t base, ops *o)
{
    long width = 2 * lim + 3, off = lim + 1;
    long x = (long)n, y = (long)m;
    size_t first = o->n;
    for (long d = d_end; d >= 0; d--) {
        const long *v = trace + d * width;
        long k = x - y, px, py;
        if (d == 0) {
            px = py = 0;
        } else {
            long pk = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? k + 1 : k - 1;
            px = v[off + pk];
            py = px - pk;
        }
        while (x > px && y > py) {
            x--, y--;
            if (push_op(o, OP_EQ, base + (size_t)x, base + (size_t)y) < 0)
                return -1;
        }
        if (d > 0 && push_op(o, x == px ? OP_INS : OP_DEL, base + (size_t)px, base + (size_t)py) < 0)
            return -1;
        x = px, y = py;
    }
    for (size_t i = first, j = o->n - 1; i < j; i++, j--) {
        op t = o->v[i];
        o->v[i] = o->v[j];
        o->v[j] = t;
    }
    return 0;
}

static int diff_middle(const lines *a, const lines *b, size_t pre, size_t suf, ops *o)
{
    size_t n = a->n - pre - suf, m = b->n - pre - suf;
    long *trace = NULL;
    long d = myers_search(a->v + pre, n, b->v + pre, m, &trace);
    if (d == -2)
        return -1;
    if (d >= 0) {
        long max = (long)(n + m), lim = max < MAX_D ? max : MAX_D;
        int rc = myers_ops(d, trace, lim, n, m, pre, o);
        free(trace);
        return rc;
    }
    for (size_t i = 0; i < n; i++) /* too many edits: all replaced */
        if (push_op(o, OP_DEL, pre + i, pre) < 0)
            return -1;
    for (size_t j = 0; j < m; j++)
        if (push_op(o, OP_INS, pre + n, pre + j) < 0)
            return -1;
    return 0;
}

static int build_ops(const lines *a, const lines *b, ops *o)
{
    size_t pre = 0, suf = 0;
    while (pre < a->n && pre < b->n && eq(&a->v[pre], &b->v[pre]))
        pre++;
    while (suf < a->n - pre && suf < b->n - pre && eq(&a->v[a->n - 1 - suf], &b->v[b->n - 1 - suf]))
        suf++;
    for (size_t i = 0; i < pre; i++)
        if (push_op(o, OP_EQ, i, i) < 0)
            return -1;
    if (diff_middle(a, b, pre, suf, o) < 0)
        return -1;
    for (size_t i = 0; i < suf; i++)
        if (push_op(o, OP_EQ, a->n - suf + i, b->n - suf + i) < 0)
            return -1;
    return 0;
}

typedef struct emit {
    char **out;
    size_t *len;
    unsigned flags;  /* RF_DIFF_COLOR, RF_DIFF_VISIBLE */
    size_t controls; /* made visible */
} emit;

static int emit_line(emit *e, char sign, const line *l)
{
    bool color = e->flags & RF_DIFF_COLOR;
    const char *c = !color ? "" : sign == '-' ? "\033[31m" : sign == '+' ? "\033[32m" : "";
    bool nl = l->len && l->p[l->len - 1] == '\n';
    size_t n = l->len - nl, k = 0;
    char *shown = e->flags & RF_DIFF_VISIBLE ? rf_visible(l->p, n, &k) : NULL;
    if (e->flags & RF_DIFF_VISIBLE && !shown)
        return -1;
    e->controls += k;
    int rc = shown ? rf_changes_appendf(e->out, e->len, "%s%c%s%s\n", c, sign, shown, *c ? "\033[m" : "")
                   : rf_changes_appendf(e->out, e->len, "%s%c%.*s%s\n", c, sign, (int)n, l->p, *c ? "\033[m" : "");
    free(shown);
    if (rc < 0)
        return -1;
    return nl ? 0 : rf_changes_appendf(e->out, e->len, "\\ No newline at end of file\n");
}

static int emit_hunk(emit *e, const ops *o, size_t s, size_t end, const lines *a, const lines *b)
{
    size_t ac = 0, bc = 0;
    bool color = e->flags & RF_DIFF_COLOR;
    for (size_t i = s; i < end; i++) {
        ac += o->v[i].t != OP_INS;
        bc += o->v[i].t != OP_DEL;
    }
    size_t as = o->v[s].a + (ac ? 1 : 0), bs = o->v[s].b + (bc ? 1 : 0);
    if (rf_changes_appendf(e->out, e->len, "%s@@ -%zu,%zu +%zu,%zu @@%s\n", color ? "\033[36m" : "", as, ac, bs, bc,
                           color ? "\033[m" : "") < 0)
        return -1;
    for (size_t i = s; i < end; i++) {
        const op *p = &o->v[i];
        int rc = p->t == OP_INS ? emit_line(e, '+', &b->v[p->b])
                                : emit_line(e, p->t == OP_DEL ? '-' : ' ', &a->v[p->a]);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Group the ops into hunks: changes closer than 2 * CONTEXT equal lines
 * share one. */
static int emit_hunks(emit *e, const ops *o, const lines *a, const lines *b)
{
    size_t i = 0;
    while (i < o->n) {
        while (i < o->n && o->v[i].t == OP_EQ)
            i++;
        if (i == o->n)
            break;
        size_t s = i > CONTEXT ? i - CONTEXT : 0, j = i;
        for (;;) {
            while (j < o->n && o->v[j].t != OP_EQ)
                j++;
            size_t k = j;
            while (k < o->n && o->v[k].t == OP_EQ)
                k++;
            if (k < o->n && k - j <= 2 * CONTEXT) {
                j = k;
                continue;
            }
            break;
        }
        size_t end = j + CONTEXT < o->n ? j + CONTEXT : o->n;
        if (emit_hunk(e, o, s, end, a, b) < 0)
            return -1;
        i = end;
    }
    return 0;
}

int rf_changes_text_diff(const char *a, size_t alen, const char *b, size_t blen, unsigned flags, char **out,
                         size_t *len, size_t *ins, size_t *del, size_t *controls)
{
    lines la = { 0 }, lb = { 0 };
    ops o = { 0 };
    emit e = { .out = out, .len = len, .flags = flags };
    int rc = -1;
    if (split(a, alen, &la) == 0 && split(b, blen, &lb) == 0 && build_ops(&la, &lb, &o) == 0)
        rc = emit_hunks(&e, &o, &la, &lb);
    if (controls)
        *controls += e.controls;
    for (size_t i = 0; rc == 0 && i < o.n; i++) {
        *ins += o.v[i].t == OP_INS;
        *del += o.v[i].t == OP_DEL;
    }
    free(la.v);
    free(lb.v);
    free(o.v);
    return rc;
}
