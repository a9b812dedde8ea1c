/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public face of a changeset: rf_session_diff and one change's diff
 * as text (git's format, so reviewers and tools read it as they know). */
#include "changes/changes.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/printable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIFF_MAX_BYTES (8 * 1024 * 1024) /* larger files get the one-line summary */
#define BINARY_PROBE 8192

RF_EXPORT rf_changeset *rf_session_diff(rf_session *s, rf_error **err)
{
    _cleanup_close_ int upper = rf_session_open_upper(s, err);
    if (upper < 0)
        return NULL;
    _cleanup_close_ int ws = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (ws < 0) {
        rf_error_set(err, errno, "session %s: its workspace %s", s->id, s->workspace);
        return NULL;
    }
    rf_changeset *cs = calloc(1, sizeof *cs);
    if (!cs) {
        rf_error_set(err, ENOMEM, "changes");
        return NULL;
    }
    if (rf_changes_scan(upper, ws, cs, err) < 0) {
        rf_changeset_free(cs);
        return NULL;
    }
    return cs;
}

RF_EXPORT size_t rf_changeset_count(const rf_changeset *cs) { return cs ? cs->n : 0; }

RF_EXPORT const rf_change *rf_changeset_get(const rf_changeset *cs, size_t i)
{
    return cs && i < cs->n ? &cs->v[i] : NULL;
}

RF_EXPORT long long rf_changeset_bytes(const rf_changeset *cs)
{
    long long n = 0;
    for (size_t i = 0; cs && i < cs->n; i++)
        if (cs->v[i].kind != RF_CHANGE_DELETED && cs->v[i].type == 'f')
            n += cs->v[i].new_size;
    return n;
}

RF_EXPORT void rf_changeset_free(rf_changeset *cs)
{
    for (size_t i = 0; cs && i < cs->n; i++) {
        free(cs->v[i].path);
        free(cs->v[i].old_path);
    }
    if (cs)
        free(cs->v);
    free(cs);
}

/* Bytes git's quotePath would escape (control characters, '"', '\\',
 * and bytes of invalid UTF-8) make the path print quoted, C style; so do
 * the characters git leaves as they are that a terminal acts on (C1
 * controls, U+009B being CSI to some) or that reorder the text shown
 * (bidi overrides), each byte in octal. */
static size_t plain_len(const unsigned char *p)
{
    size_t n = rf_utf8_len(p, strnlen((const char *)p, 4));
    return n && p[0] >= 0x20 && p[0] != '"' && p[0] != '\\' && !rf_utf8_is_control(p, n) ? n : 0;
}

RF_EXPORT char *rf_change_quote_path(const char *path)
{
    const unsigned char *p = (const unsigned char *)path;
    bool plain = true;
    for (size_t i = 0; p[i] && plain;) {
        size_t n = plain_len(p + i);
        plain = n != 0;
        i += n;
    }
    if (plain)
        return strdup(path);
    char *out = malloc(strlen(path) * 4 + 3), *o = out;
    if (!out)
        return NULL;
    *o++ = '"';
    for (size_t i = 0; p[i];) {
        size_t n = plain_len(p + i);
        static const char esc[] = "\a\b\t\n\v\f\r";
        const char *e = strchr(esc, p[i]);
        if (n) {
            memcpy(o, p + i, n);
            o += n;
            i += n;
            continue;
        }
        if (e && *e)
            o += sprintf(o, "\\%c", "abtnvfr"[e - esc]);
        else if (p[i] == '"' || p[i] == '\\')
            o += sprintf(o, "\\%c", p[i]);
        else
            o += sprintf(o, "\\%03o", p[i]);
        i++;
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

/* One side's content: the file's bytes, or a symlink's text; "" when the
 * side does not exist. *big when larger than DIFF_MAX_BYTES. */
static int read_side(int dirfd, const char *path, char type, bool present, char **buf, size_t *len, bool *big)
{
    *buf = NULL;
    *len = 0;
    if (!present)
        return 0;
    _cleanup_close_ int fd = rf_changes_open_beneath(dirfd, path, type == 'l' ? O_PATH : O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (type == 'l') {
        *buf = malloc(RF_CHANGES_MAX_PATH);
        ssize_t n = *buf ? readlinkat(fd, "", *buf, RF_CHANGES_MAX_PATH) : -1;
        *len = n > 0 ? (size_t)n : 0;
        return n < 0 ? -1 : 0;
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -1;
    if (!S_ISREG(st.st_mode)) { /* swapped since the scan */
        errno = EINVAL;
        return -1;
    }
    if (st.st_size > DIFF_MAX_BYTES) {
        *big = true;
        return 0;
    }
    *buf = malloc((size_t)st.st_size + 1);
    while (*buf && *len < (size_t)st.st_size) {
        ssize_t n = read(fd, *buf + *len, (size_t)st.st_size - *len);
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    return *buf ? 0 : -1;
}

static bool binary(const char *p, size_t n)
{
    return memchr(p, '\0', n < BINARY_PROBE ? n : BINARY_PROBE) != NULL;
}

static int header(const rf_change *c, const char *qa, const char *qb, bool color, char **out, size_t *len)
{
    const char *b = color ? "\033[1m" : "", *e = color ? "\033[m" : "";
    int rc = rf_changes_appendf(out, len, "%sdiff --git a/%s b/%s%s\n", b, qa, qb, e);
    unsigned om = c->old_mode, nm = c->new_mode;
    if (rc == 0 && c->kind == RF_CHANGE_ADDED)
        rc = rf_changes_appendf(out, len, "%snew %s mode %06o%s\n", b, c->type == 'd' ? "directory" : "file", nm, e);
    else if (rc == 0 && c->kind == RF_CHANGE_DELETED)
        rc = rf_changes_appendf(out, len, "%sdeleted %s mode %06o%s\n", b, c->type == 'd' ? "directory" : "file", om,
                                e);
    else if (rc == 0 && c->kind == RF_CHANGE_RENAMED)
        rc = rf_changes_appendf(out, len, "%srename from %s\nrename to %s%s\n", b, qa, qb, e);
    if (rc == 0 && (c->kind == RF_CHANGE_MODIFIED || c->kind == RF_CHANGE_MODE || c->kind == RF_CHANGE_RENAMED) &&
        om != nm)
        rc = rf_changes_appendf(out, len, "%sold mode %06o\nnew mode %06o%s\n", b, om, nm, e);
    return rc;
}

/* The hunks go to a buffer of their own first: a file holding control
 * characters is said so above them, where a reviewer reads first. */
static int text_body(const char *a, size_t alen, const char *b, size_t blen, const char *qa, const char *qb,
                     bool had, bool has, unsigned flags, char **out, size_t *len, size_t *ins, size_t *del,
                     size_t *controls)
{
    _cleanup_free_ char *hunks = NULL;
    size_t hlen = 0, k = 0;
    if (rf_changes_text_diff(a, alen, b, blen, flags, &hunks, &hlen, ins, del, &k) < 0)
        return -1;
    *controls += k;
    const char *hb = flags & RF_DIFF_COLOR ? "\033[1m" : "", *he = flags & RF_DIFF_COLOR ? "\033[m" : "";
    if (k && rf_changes_appendf(out, len, "%s# ringfence: this file holds %zu control character%s, shown as ^[ "
                                          "(escape), ^M (carriage return), \\u009b, \\xff; "
                                          "--raw prints the bytes%s\n",
                                hb, k, k == 1 ? "" : "s", he) < 0)
        return -1;
    if (rf_changes_appendf(out, len, "%s--- %s%s\n+++ %s%s%s\n", hb, had ? "a/" : "", had ? qa : "/dev/null",
                           has ? "b/" : "", has ? qb : "/dev/null", he) < 0)
        return -1;
    return hunks ? rf_changes_appendf(out, len, "%s", hunks) : 0;
}

static int body(rf_session *s, const rf_change *c, const char *qa, const char *qb, unsigned flags, char **out,
                size_t *len, size_t *ins, size_t *del, size_t *controls)
{
    _cleanup_close_ int upper = rf_session_open_upper(s, NULL);
    _cleanup_close_ int ws = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    _cleanup_free_ char *a = NULL, *b = NULL;
    size_t alen, blen;
    bool big = false;
    bool had = c->kind != RF_CHANGE_ADDED, has = c->kind != RF_CHANGE_DELETED;
    if (upper < 0 || ws < 0 || read_side(ws, c->old_path ? c->old_path : c->path, c->type, had, &a, &alen, &big) < 0 ||
        read_side(upper, c->path, c->type, has, &b, &blen, &big) < 0)
        return -1;
    if (big || (a && binary(a, alen)) || (b && binary(b, blen)))
        return rf_changes_appendf(out, len, "Binary files %s%s and %s%s differ (%lld -> %lld bytes)\n",
                                  had ? "a/" : "", had ? qa : "/dev/null", has ? "b/" : "", has ? qb : "/dev/null",
                                  c->old_size, has ? c->new_size : 0);
    if (alen == blen && (alen == 0 || !memcmp(a, b, alen)))
        return 0; /* mode only, or an empty file */
    return text_body(a ? a : "", alen, b ? b : "", blen, qa, qb, had, has, flags, out, len, ins, del, controls);
}

RF_EXPORT char *rf_change_diff_flags(rf_session *s, const rf_change *c, unsigned flags, size_t *insertions,
                                     size_t *deletions, size_t *controls, rf_error **err)
{
    _cleanup_free_ char *qa = rf_change_quote_path(c->old_path ? c->old_path : c->path);
    _cleanup_free_ char *qb = rf_change_quote_path(c->path);
    char *out = NULL;
    size_t len = 0, ins = 0, del = 0, ctl = 0;
    bool color = flags & RF_DIFF_COLOR;
    int rc = !qa || !qb ? -1 : 0;
    if (rc == 0 && c->kind == RF_CHANGE_REFUSED)
        rc = rf_changes_appendf(&out, &len, "%srefused: %s: %s (never applied)%s\n", color ? "\033[31m" : "", qb,
                                c->refused, color ? "\033[m" : "");
    else if (rc == 0) {
        rc = header(c, qa, qb, color, &out, &len);
        /* A file the command made unreadable (chmod 000) is said so, and
         * the rest of the changeset still shows. */
        if (rc == 0 && c->type != 'd' && c->kind != RF_CHANGE_MODE &&
            body(s, c, qa, qb, flags, &out, &len, &ins, &del, &ctl) < 0)
            rc = errno == ENOMEM ? -1 : rf_changes_appendf(&out, &len, "cannot read %s: %s\n", qb, strerror(errno));
    }
    if (rc < 0) {
        rf_error_set(err, errno ? errno : ENOMEM, "diff %s", c->path);
        free(out);
        return NULL;
    }
    if (insertions)
        *insertions = ins;
    if (deletions)
        *deletions = del;
    if (controls)
        *controls = ctl;
    return out ? out : strdup("");
}

RF_EXPORT char *rf_change_diff(rf_session *s, const rf_change *c, bool color, size_t *insertions,
                               size_t *deletions, rf_error **err)
{
    return rf_change_diff_flags(s, c, color ? RF_DIFF_COLOR : 0, insertions, deletions, NULL, err);
}
