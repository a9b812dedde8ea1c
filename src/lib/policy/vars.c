/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "policy/vars.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const known_names[] = { "WORKSPACE", "HOME", "USER", "TMPDIR", "RINGFENCE_HOME", NULL };

static const char *lookup(const rf_vars *v, const char *name, bool *known)
{
    const char *vals[] = { v->workspace, v->home, v->user, v->tmpdir, v->rf_home };
    for (size_t i = 0; known_names[i]; i++)
        if (!strcmp(name, known_names[i])) {
            *known = true;
            return vals[i];
        }
    *known = false;
    return NULL;
}

/* Read a variable name at *p (after the '$'); advances *p. */
static int read_name(const char **p, char *name, size_t size)
{
    const char *s = *p;
    bool braced = *s == '{';
    if (braced)
        s++;
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    if (n == 0 || n >= size || (braced && s[n] != '}'))
        return -1;
    memcpy(name, s, n);
    name[n] = '\0';
    *p = s + n + (braced ? 1 : 0);
    return 0;
}

static int expand_var(const rf_vars *v, const char **p, FILE *out, const char *in, const char *what,
                      rf_error **err)
{
    char name[64];
    if (read_name(p, name, sizeof name) < 0) {
        rf_error_set(err, 0, "%s: \"%s\": a '$' must start a variable name", what, in);
        return rf_error_hint_set(err, "use $NAME or ${NAME}; write $$ for a literal '$'");
    }
    bool known;
    const char *val = lookup(v, name, &known);
    if (!known) {
        rf_error_set(err, 0, "%s: \"%s\": unknown variable $%s", what, in, name);
        return rf_error_hint_set(err, "known variables: $WORKSPACE, $HOME, $USER, $TMPDIR, "
                                      "$RINGFENCE_HOME");
    }
    if (!val) {
        rf_error_set(err, 0, "%s: \"%s\": $%s cannot be used here", what, in, name);
        return rf_error_hint_set(err, "$%s is not known yet when %s is resolved; write the "
                                      "path out", name, what);
    }
    fputs(val, out);
    return 0;
}

char *rf_vars_expand(const rf_vars *v, const char *in, const char *what, rf_error **err)
{
    _cleanup_free_ char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) {
        rf_error_set(err, errno, "expanding %s", what);
        return NULL;
    }
    const char *p = in;
    if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
        if (!v->home) {
            fclose(out);
            rf_error_set(err, 0, "%s: \"%s\": '~' used but the home directory is unknown", what, in);
            return NULL;
        }
        fputs(v->home, out);
        p++;
    }
    while (*p) {
        if (*p != '$') {
            fputc(*p++, out);
            continue;
        }
        p++;
        if (*p == '$') {
            fputc(*p++, out);
            continue;
        }
        if (expand_var(v, &p, out, in, what, err) < 0) {
            fclose(out);
            return NULL;
        }
    }
    if (fclose(out) != 0) {
        rf_error_set(err, ENOMEM, "expanding %s", what);
        return NULL;
    }
    return steal_ptr(&buf);
}

char *rf_vars_path(const rf_vars *v, const char *in, const char *what, rf_error **err)
{
    _cleanup_free_ char *s = rf_vars_expand(v, in, what, err);
    if (!s)
        return NULL;
    if (s[0] != '/') {
        rf_error_set(err, 0, "%s: \"%s\" is not an absolute path", what, s);
        rf_error_hint_set(err, "start it with '/', '~/' or a variable such as $WORKSPACE/");
        return NULL;
    }
    char *norm = rf_path_normalize(s);
    if (!norm)
        rf_error_set(err, ENOMEM, "normalising %s", what);
    return norm;
}
