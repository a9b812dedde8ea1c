/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec guard on arbitrary commands and patterns: it must never crash,
 * read out of bounds or hang, and its verdict must be consistent (a message
 * exactly when blocked, a pattern only for a pattern verdict). The same
 * command goes to the exec tool's plain-command splitter (plan/plain.c):
 * the words it returns, joined by single spaces, are the command with its
 * runs of blanks made single, and hold only bytes the shell takes literally.
 *
 * Input: one flags byte, then the command. Flags & 3 pick the options
 * (deny patterns on/off x restrict_to_workspace on/off); with 0x80 the
 * first line after the flags is a custom deny pattern (and with 0x40 also
 * an allow pattern), which exercises compile errors and match limits. */
#include "plan/build.h"
#include "ringfence.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rf_guard *guard_for(unsigned flags, const char *deny, const char *allow)
{
    rf_guard_options o = RF_GUARD_OPTIONS_INIT;
    o.enable_deny_patterns = !(flags & 1);
    o.restrict_to_workspace = !(flags & 2);
    o.workspace = "/ws";
    o.cwd = "/ws/sub";
    o.custom_deny = deny ? (const char *const[]){ deny, NULL } : NULL;
    o.custom_allow = allow ? (const char *const[]){ allow, NULL } : NULL;
    return rf_guard_new(&o, NULL);
}

static void check_plain(const char *cmd)
{
    char **argv = rf_plan_plain_argv(cmd);
    if (!argv)
        return;
    const char *p = cmd;
    for (size_t i = 0; argv[i]; i++) {
        p += strspn(p, " \t");
        size_t n = strlen(argv[i]);
        if (!n || strncmp(p, argv[i], n) || strcspn(argv[i], " \t\n;&|<>()$`\\\"'*?[~#{}!") != n)
            abort();
        p += n;
    }
    if (!argv[0] || p[strspn(p, " \t")] || strchr(argv[0], '='))
        abort();
    free(argv);
}

static void check_verdict(int r, const rf_guard_verdict *v, const rf_error *err)
{
    if (r < 0) {
        if (!err || v->message || v->pattern || v->detail)
            abort();
        return;
    }
    bool blocked = v->result != RF_GUARD_ALLOWED;
    if (v->result > RF_GUARD_BLOCKED_PATH || blocked != (v->message != NULL) ||
        (v->pattern && v->result != RF_GUARD_BLOCKED_PATTERN) || (blocked && !v->detail))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rf_guard *guards[4];
    if (size == 0 || size > 70000)
        return 0;
    unsigned flags = data[0];
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *cmd = text;
    rf_guard *own = NULL, *g;
    if (flags & 0x80) {
        char *nl = strchr(text, '\n');
        cmd = nl ? nl + 1 : text + strlen(text);
        if (nl)
            *nl = '\0';
        g = own = guard_for(flags, text, flags & 0x40 ? text : NULL);
    } else {
        if (!guards[flags & 3])
            guards[flags & 3] = guard_for(flags & 3, NULL, NULL);
        g = guards[flags & 3];
    }
    if (g) {
        rf_guard_verdict v;
        rf_error *err = NULL;
        int r = rf_guard_check(g, cmd, &v, &err);
        check_verdict(r, &v, err);
        rf_guard_verdict_clear(&v);
        rf_error_free(err);
    }
    check_plain(cmd);
    rf_guard_free(own);
    free(text);
    return 0;
}
