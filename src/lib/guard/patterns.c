/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The deny and allow patterns: PCRE2, JIT-compiled where the platform has a
 * JIT (unless the guard checks only one command), every match bounded by
 * the guard's match, depth and heap limits. */
#include "guard/guard.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Seed 001's default deny patterns (picoclaw's exec tool), same meaning.
 * The seed lists the disk-device pattern only as ">/dev/(sd[a-z]|hd[a-z]|...)";
 * the device families after "..." are ours, and so is dd's "of=" form of the
 * same write.
 *
 * Each has a kind (docs/guard.md has the table and the reasons):
 *  - text: a shell construct or a destructive argument, dangerous wherever
 *    it is written: the seed's pattern on the text and the normalised forms;
 *  - command (a second, anchored pattern): running a program. It matches
 *    only a simple command's command position (the program after the
 *    wrappers, and each wrapper), so `--format json`, `clang-format`,
 *    `git commit -m "drop sudo"` do not count; the seed's pattern still
 *    reads the inline code of other interpreters (python -c, perl -e, ...).
 * The reported pattern is always the seed's text. */
#define END "(?:\\s|$)"
/* Literals of which a match contains at least one (patterns are case-
 * sensitive): a cheap strstr before PCRE2. */
#define NEEDLES(...) (const char *const[]){ __VA_ARGS__, NULL }
const rf_guard_default rf_guard_defaults[] = {
    /* destructive */
    { "\\brm\\s+-[rf]{1,2}\\b", NULL, NEEDLES("rm") },
    { "\\bdel\\s+/[fq]\\b", NULL, NEEDLES("del") },
    { "\\brmdir\\s+/s\\b", NULL, NEEDLES("rmdir") },
    { "\\b(format|mkfs|diskpart)\\b\\s", "^(?:format|mkfs(?:\\.\\w+)?|mke2fs|diskpart)" END, NEEDLES("format", "mkfs", "mke2fs", "diskpart") },
    { "\\bdd\\s+if=", NULL, NEEDLES("if=") },
    { "(>|\\bof=)\\s*/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme[0-9]|mmcblk[0-9]|md[0-9]|dm-[0-9]|loop[0-9]|mapper/)",
      NULL, NEEDLES("/dev/") },
    /* system control */
    { "\\b(shutdown|reboot|poweroff)\\b",
      "^(?:shutdown|reboot|poweroff|halt)" END "|^(?:systemctl|loginctl)(?:\\s+-\\S+)*\\s+(?:reboot|poweroff|halt|kexec)"
      END "|^(?:tel)?init\\s+[06]" END, NEEDLES("shutdown", "reboot", "poweroff", "halt", "kexec", "init") },
    /* shell injection */
    { ":\\(\\)\\s*\\{.*\\};\\s*:", NULL, NEEDLES(":()") },
    { "\\$\\([^)]+\\)", NULL, NEEDLES("$(") },
    { "\\$\\{[^}]+\\}", NULL, NEEDLES("${") },
    { "`[^`]+`", NULL, NEEDLES("`") },
    { "\\|\\s*sh\\b", NULL, NEEDLES("sh") },
    { "\\|\\s*bash\\b", NULL, NEEDLES("bash") },
    /* privilege escalation */
    { "\\bsudo\\b", "^sudo" END, NEEDLES("sudo") },
    { "\\bchmod\\s+[0-7]{3,4}\\b", "^chmod\\s+[0-7]{3,4}\\b", NEEDLES("chmod") },
    { "\\bchown\\b", "^chown" END, NEEDLES("chown") },
    /* process control */
    { "\\bpkill\\b", "^pkill" END, NEEDLES("pkill") },
    { "\\bkillall\\b", "^killall" END, NEEDLES("killall") },
    { "\\bkill\\s+-[9]\\b", "^kill\\s+-9\\b", NEEDLES("-9") },
    /* remote execution */
    { "\\bcurl\\b.*\\|\\s*(sh|bash)", NULL, NEEDLES("curl") },
    { "\\bwget\\b.*\\|\\s*(sh|bash)", NULL, NEEDLES("wget") },
    { "\\bssh\\b.*@", "^ssh\\s.*@", NEEDLES("@") },
    /* package managers */
    { "\\bapt\\s+(install|remove|purge)\\b", "^apt\\s+(?:install|remove|purge)\\b", NEEDLES("apt") },
    { "\\byum\\s+(install|remove)\\b", "^yum\\s+(?:install|remove)\\b", NEEDLES("yum") },
    { "\\bdnf\\s+(install|remove)\\b", "^dnf\\s+(?:install|remove)\\b", NEEDLES("dnf") },
    { "\\bnpm\\s+install\\s+-g\\b", "^npm\\s+install\\s+-g\\b", NEEDLES("-g") },
    { "\\bpip\\s+install\\s+--user\\b", "^pip\\s+install\\s+--user\\b", NEEDLES("--user") },
    /* containers */
    { "\\bdocker\\s+run\\b", "^docker\\s+run\\b", NEEDLES("docker") },
    { "\\bdocker\\s+exec\\b", "^docker\\s+exec\\b", NEEDLES("docker") },
    /* version control */
    { "\\bgit\\s+push\\b", "^git\\s+push\\b", NEEDLES("push") },
    { "\\bgit\\s+force\\b", "^git\\s+force\\b", NEEDLES("force") },
    { NULL, NULL, NULL },
};
#undef END
#undef NEEDLES

static pcre2_code *compile_re(const char *src, const char *what, size_t idx, pcre2_compile_context *cctx,
                              bool jit, rf_error **err)
{
    size_t len = strlen(src);
    if (len > RF_GUARD_MAX_PATTERN_LEN) {
        rf_error_set(err, 0, "%s[%zu]: pattern is %zu bytes long (limit %u)", what, idx, len,
                     RF_GUARD_MAX_PATTERN_LEN);
        rf_error_hint_set(err, "shorten the pattern or split it into several");
        return NULL;
    }
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)src, len, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                                   PCRE2_NEVER_BACKSLASH_C, &code, &offset, cctx);
    if (!re) {
        PCRE2_UCHAR msg[256];
        if (code == PCRE2_ERROR_NOMEMORY) {
            rf_error_set(err, ENOMEM, "compiling %s", what);
            return NULL;
        }
        pcre2_get_error_message(code, msg, sizeof msg);
        rf_error_set(err, 0, "%s[%zu]: bad pattern '%s' at offset %zu: %s", what, idx, src, (size_t)offset,
                     (const char *)msg);
        rf_error_hint_set(err, "patterns are PCRE2 regular expressions; escape literal characters "
                               "such as ( [ { . * + ? | with a backslash");
        return NULL;
    }
    /* No JIT on this platform is fine: the interpreter obeys the same limits. */
    if (jit)
        (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

static int compile_one(rf_gpattern *out, const char *src, const rf_guard_default *def, const char *what, size_t idx,
                       pcre2_compile_context *cctx, bool jit, rf_error **err)
{
    const char *command = def ? def->command : NULL;
    *out = (rf_gpattern){ .needles = def ? def->needles : NULL };
    for (size_t i = 0; out->needles && out->needles[i]; i++) {
        if (i >= RF_GUARD_MAX_NEEDLES) { /* a table mistake: no prefilter rather than a wrong one */
            out->needles = NULL;
            break;
        }
        rf_guard_bytes_of(out->needles[i], &out->needle_bytes[i]);
    }
    if (!(out->code = compile_re(src, what, idx, cctx, jit, err)) ||
        (command && !(out->command = compile_re(command, what, idx, cctx, jit, err))))
        goto fail;
    if (!(out->source = strdup(src))) {
        rf_error_set(err, ENOMEM, "compiling %s", what);
        goto fail;
    }
    return 0;
fail:
    pcre2_code_free(out->code);
    pcre2_code_free(out->command);
    *out = (rf_gpattern){ 0 };
    return -1;
}

/* sources[i], or with defs, defs[i] (its command form and needles). */
static int add_all(rf_gpatterns *set, size_t n, const char *const *sources, const rf_guard_default *defs,
                   const char *what, bool jit, rf_error **err)
{
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
        r = compile_one(&set->items[set->n], defs ? defs[i].source : sources[i], defs ? &defs[i] : NULL, what, i,
                        cctx, jit, err);
        if (r == 0)
            set->n++;
    }
    pcre2_compile_context_free(cctx);
    return r;
}

int rf_guard_patterns_add(rf_gpatterns *set, const char *const *sources, const char *what, bool jit,
                          rf_error **err)
{
    size_t n = 0;
    while (sources && sources[n])
        n++;
    return add_all(set, n, sources, NULL, what, jit, err);
}

int rf_guard_patterns_add_defaults(rf_gpatterns *set, bool jit, rf_error **err)
{
    size_t n = sizeof rf_guard_defaults / sizeof rf_guard_defaults[0] - 1;
    return add_all(set, n, NULL, rf_guard_defaults, "default deny patterns", jit, err);
}

size_t rf_guard_bytes_of(const char *subject, rf_gbytes *out)
{
    *out = (rf_gbytes){ 0 };
    const unsigned char *c = (const unsigned char *)subject;
    for (; *c; c++)
        out->bits[*c >> 6] |= 1ull << (*c & 63);
    return (size_t)((const char *)c - subject);
}

void rf_guard_patterns_free(rf_gpatterns *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->items[i].source);
        pcre2_code_free(set->items[i].code);
        pcre2_code_free(set->items[i].command);
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
