/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The deny and allow patterns: PCRE2, JIT-compiled where the platform has a
 * JIT, every match bounded by the guard's match, depth and heap limits. */
#include "guard/guard.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Seed 001's default deny patterns (picoclaw's exec tool), same meaning.
 * The seed lists the disk-device pattern only as ">/dev/(sd[a-z]|hd[a-z]|...)";
 * the device families after "..." are ours, and so is dd's "of=" form of the
 * same write. */
const char *const rf_guard_default_deny[] = {
    /* destructive */
    "\\brm\\s+-[rf]{1,2}\\b",
    "\\bdel\\s+/[fq]\\b",
    "\\brmdir\\s+/s\\b",
    "\\b(format|mkfs|diskpart)\\b\\s",
    "\\bdd\\s+if=",
    "(>|\\bof=)\\s*/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme[0-9]|mmcblk[0-9]|md[0-9]|dm-[0-9]|loop[0-9]|mapper/)",
    /* system control */
    "\\b(shutdown|reboot|poweroff)\\b",
    /* shell injection */
    ":\\(\\)\\s*\\{.*\\};\\s*:",
    "\\$\\([^)]+\\)",
    "\\$\\{[^}]+\\}",
    "`[^`]+`",
    "\\|\\s*sh\\b",
    "\\|\\s*bash\\b",
    /* privilege escalation */
    "\\bsudo\\b",
    "\\bchmod\\s+[0-7]{3,4}\\b",
    "\\bchown\\b",
    /* process control */
    "\\bpkill\\b",
    "\\bkillall\\b",
    "\\bkill\\s+-[9]\\b",
    /* remote execution */
    "\\bcurl\\b.*\\|\\s*(sh|bash)",
    "\\bwget\\b.*\\|\\s*(sh|bash)",
    "\\bssh\\b.*@",
    /* package managers */
    "\\bapt\\s+(install|remove|purge)\\b",
    "\\byum\\s+(install|remove)\\b",
    "\\bdnf\\s+(install|remove)\\b",
    "\\bnpm\\s+install\\s+-g\\b",
    "\\bpip\\s+install\\s+--user\\b",
    /* containers */
    "\\bdocker\\s+run\\b",
    "\\bdocker\\s+exec\\b",
    /* version control */
    "\\bgit\\s+push\\b",
    "\\bgit\\s+force\\b",
    NULL,
};

static int compile_one(rf_gpattern *out, const char *src, const char *what, size_t idx,
                       pcre2_compile_context *cctx, rf_error **err)
{
    size_t len = strlen(src);
    if (len > RF_GUARD_MAX_PATTERN_LEN) {
        rf_error_set(err, 0, "%s[%zu]: pattern is %zu bytes long (limit %u)", what, idx, len,
                     RF_GUARD_MAX_PATTERN_LEN);
        return rf_error_hint_set(err, "shorten the pattern or split it into several");
    }
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)src, len, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                                   PCRE2_NEVER_BACKSLASH_C, &code, &offset, cctx);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        rf_error_set(err, 0, "%s[%zu]: bad pattern '%s' at offset %zu: %s", what, idx, src, (size_t)offset,
                     (const char *)msg);
        return rf_error_hint_set(err, "patterns are PCRE2 regular expressions; escape literal characters "
                                      "such as ( [ { . * + ? | with a backslash");
    }
    /* No JIT on this platform is fine: the interpreter obeys the same limits. */
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    char *copy = strdup(src);
    if (!copy) {
        pcre2_code_free(re);
        return rf_error_set(err, ENOMEM, "compiling %s", what);
    }
    *out = (rf_gpattern){ .source = copy, .code = re };
    return 0;
}

int rf_guard_patterns_add(rf_gpatterns *set, const char *const *sources, const char *what, rf_error **err)
{
    size_t n = 0;
    while (sources && sources[n])
        n++;
    if (n == 0)
        return 0;
    rf_gpattern *items = reallocarray(set->items, set->n + n, sizeof(*items));
    if (!items)
        return rf_error_set(err, ENOMEM, "compiling %s", what);
    set->items = items;
    pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
    if (!cctx)
        return rf_error_set(err, ENOMEM, "compiling %s", what);
    pcre2_set_max_pattern_length(cctx, RF_GUARD_MAX_PATTERN_LEN);
    pcre2_set_parens_nest_limit(cctx, 64);
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        r = compile_one(&set->items[set->n], sources[i], what, i, cctx, err);
        if (r == 0)
            set->n++;
    }
    pcre2_compile_context_free(cctx);
    return r;
}

void rf_guard_patterns_free(rf_gpatterns *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->items[i].source);
        pcre2_code_free(set->items[i].code);
    }
    free(set->items);
    *set = (rf_gpatterns){ 0 };
}

rf_gmatch rf_guard_pattern_match(const rf_gpattern *p, const char *subject, size_t len, bool whole,
                                 pcre2_match_data *md, pcre2_match_context *mctx)
{
    /* Anchoring at match time makes PCRE2 use its interpreter, which has
     * the depth and heap limits besides the match limit. */
    uint32_t opts = whole ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0;
    int rc = pcre2_match(p->code, (PCRE2_SPTR)subject, len, 0, opts, md, mctx);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(p->code, (PCRE2_SPTR)subject, len, 0, opts | PCRE2_NO_JIT, md, mctx);
    if (rc >= 0)
        return RF_GMATCH_YES;
    return rc == PCRE2_ERROR_NOMATCH ? RF_GMATCH_NO : RF_GMATCH_LIMIT;
}
