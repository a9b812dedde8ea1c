/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file tools' handle: a directory fd of the workspace, the compiled
 * allow_* patterns, the protected paths; plus the errors every verb uses. */
#include "fs/fs-internal.h"
#include "model/policy.h"
#include "model/protected.h"
#include "policy/checks.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* PCRE2 backtracking bounds: a pathological pattern fails to match (and so
 * denies) instead of burning CPU. */
#define MATCH_LIMIT 100000
#define DEPTH_LIMIT 10000

__attribute__((format(printf, 4, 0)))
static int fs_verror(rf_error **err, int errnum, bool denied, const char *fmt, va_list ap)
{
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    rf_error_set_code(err, RF_FS_EXIT_FAILED, denied ? 0 : errnum, "%s", msg ? msg : "out of memory");
    free(msg);
    if (err && *err && denied)
        (*err)->errnum = EACCES;
    return -1;
}

int rf_fs_deny(rf_error **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_verror(err, 0, true, fmt, ap);
    va_end(ap);
    return -1;
}

int rf_fs_fail(rf_error **err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_verror(err, errnum, false, fmt, ap);
    va_end(ap);
    return -1;
}

int rf_fs_fail_open(rf_error **err, int errnum, const char *path)
{
    switch (errnum) {
    case ENOENT:
        return rf_fs_fail(err, 0, "file not found: %s", path);
    case ENOTDIR:
        return rf_fs_fail(err, 0, "not a directory: %s (a component of the path is a file)", path);
    case EISDIR:
        return rf_fs_fail(err, 0, "is a directory: %s", path);
    case ELOOP:
        /* RESOLVE_NO_MAGICLINKS reports /proc/<pid>/{root,cwd,fd/N} as ELOOP. */
        return rf_fs_deny(err, "access denied: too many symlinks or a /proc magic link in %s", path);
    case ENAMETOOLONG:
        return rf_fs_fail(err, 0, "path too long: %s", path);
    case EACCES:
    case EPERM:
        rf_fs_fail(err, errnum, "cannot open %s", path);
        if (err && *err)
            (*err)->errnum = EACCES;
        return -1;
    default:
        return rf_fs_fail(err, errnum, "cannot open %s", path);
    }
}

bool rf_fs_match_any(const rf_fs *fs, pcre2_code *const *re, size_t n, const char *subject)
{
    for (size_t i = 0; i < n; i++) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re[i], NULL);
        if (!md)
            return false;
        int rc = pcre2_match(re[i], (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, fs->mctx);
        pcre2_match_data_free(md);
        /* Any error (match limit, bad subject) counts as no match: deny. */
        if (rc >= 0)
            return true;
    }
    return false;
}

static int compile_patterns(const char *const *src, const char *setting, pcre2_code ***out,
                            size_t *n_out, rf_error **err)
{
    size_t n = 0;
    while (src && src[n])
        n++;
    if (n > RF_FS_MAX_PATTERNS)
        return rf_error_set(err, 0, "%s: %zu patterns, at most %d", setting, n, RF_FS_MAX_PATTERNS);
    *out = calloc(n + 1, sizeof(**out));
    if (!*out)
        return rf_error_set(err, ENOMEM, "%s", setting);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(src[i]);
        if (len > RF_FS_MAX_PATTERN_LEN)
            return rf_error_set(err, 0, "%s: pattern %zu is %zu bytes long, at most %d", setting,
                                i + 1, len, RF_FS_MAX_PATTERN_LEN);
        int code = 0;
        PCRE2_SIZE off = 0;
        /* No PCRE2_UTF: paths are bytes, not necessarily UTF-8. */
        (*out)[i] = pcre2_compile((PCRE2_SPTR)src[i], len, 0, &code, &off, NULL);
        if (!(*out)[i]) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(code, msg, sizeof msg);
            rf_error_set(err, 0, "%s: bad pattern '%s' at offset %zu: %s", setting, src[i],
                         (size_t)off, (char *)msg);
            return rf_error_hint_set(err, "patterns are PCRE2 regexes matched against canonical "
                                          "absolute paths, e.g. ^/etc/hosts$");
        }
        *n_out = i + 1;
    }
    return 0;
}

/* Protected paths are workspace-relative and may not climb out of it. */
static int load_protected(rf_fs *fs, const char *const *src, rf_error **err)
{
    if (!src)
        src = rf_policy_default_protected();
    fs->protected_rel = calloc(1, sizeof(char *));
    if (!fs->protected_rel)
        return rf_error_set(err, ENOMEM, "protected_paths");
    size_t n = 0;
    for (; src[n]; n++) {
        if (n >= RF_FS_MAX_PROTECTED)
            return rf_error_set(err, 0, "protected_paths: more than %d entries", RF_FS_MAX_PROTECTED);
        const char *p = src[n];
        if (!*p || p[0] == '/' || strlen(p) >= RF_FS_MAX_PATH)
            return rf_error_set(err, 0, "protected_paths: '%s' must be a path relative to the workspace", p);
        for (const char *s = p; (s = strstr(s, "..")); s += 2)
            if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
                return rf_error_set(err, 0, "protected_paths: '%s' leaves the workspace", p);
        _cleanup_free_ char *norm = rf_path_join("/", p);
        if (!norm)
            return rf_error_set(err, ENOMEM, "protected_paths");
        if (rf_strv_push(&fs->protected_rel, norm[1] ? norm + 1 : ".") < 0)
            return rf_error_set(err, ENOMEM, "protected_paths");
    }
    return 0;
}

static int open_workspace(rf_fs *fs, const char *ws, rf_error **err)
{
    if (!ws || ws[0] != '/')
        return rf_error_set(err, 0, "workspace '%s' must be an absolute path", ws ? ws : "(none)");
    if (strlen(ws) >= RF_FS_MAX_PATH)
        return rf_error_set(err, 0, "workspace path too long");
    fs->ws_fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fs->ws_fd < 0)
        return rf_error_set(err, errno, "cannot open the workspace %s", ws);
    /* Fail closed on kernels without openat2 (< 5.6): there is no other
     * race-free way to confine a path. */
    int probe = (int)rf_fs_openat2(fs->ws_fd, ".", O_PATH | O_CLOEXEC, RESOLVE_BENEATH);
    if (probe < 0) {
        rf_error_set(err, errno, "openat2(RESOLVE_BENEATH) on the workspace %s", ws);
        return rf_error_hint_set(err, "the file tools need Linux >= 5.6 (openat2)");
    }
    close(probe);
    fs->ws_given = rf_path_normalize(ws);
    if (!fs->ws_given)
        return rf_error_set(err, ENOMEM, "workspace");
    return rf_fs_canonical(fs->ws_fd, ws, &fs->ws, err);
}

RF_EXPORT void rf_fs_options_init(rf_fs_options *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->restrict_to_workspace = true;
}

RF_EXPORT rf_fs *rf_fs_open(const rf_fs_options *opts, rf_error **err)
{
    rf_fs *fs = calloc(1, sizeof(*fs));
    if (!fs) {
        rf_error_set(err, ENOMEM, "file tools");
        return NULL;
    }
    fs->ws_fd = -1;
    fs->restrict_ws = opts->restrict_to_workspace;
    fs->read_outside = opts->allow_read_outside_workspace;
    fs->max_read = opts->max_read_bytes ? opts->max_read_bytes : RF_FS_DEFAULT_MAX_READ;
    fs->mctx = pcre2_match_context_create(NULL);
    if (!fs->mctx || pcre2_set_match_limit(fs->mctx, MATCH_LIMIT) ||
        pcre2_set_depth_limit(fs->mctx, DEPTH_LIMIT)) {
        rf_error_set(err, ENOMEM, "file tools");
        goto fail;
    }
    if (open_workspace(fs, opts->workspace, err) < 0 ||
        compile_patterns(opts->allow_read_paths, "allow_read_paths", &fs->read_re, &fs->n_read_re, err) < 0 ||
        compile_patterns(opts->allow_write_paths, "allow_write_paths", &fs->write_re, &fs->n_write_re, err) < 0 ||
        load_protected(fs, opts->protected_paths, err) < 0)
        goto fail;
    return fs;
fail:
    rf_fs_close(fs);
    return NULL;
}

RF_EXPORT rf_fs *rf_fs_open_for_policy(const rf_policy *policy, rf_error **err)
{
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.workspace = policy->workspace;
    o.restrict_to_workspace = policy->restrict_to_workspace;
    o.allow_read_outside_workspace = policy->allow_read_outside_workspace;
    o.allow_read_paths = (const char *const *)policy->tools.allow_read_paths;
    o.allow_write_paths = (const char *const *)policy->tools.allow_write_paths;
    o.protected_paths = (const char *const *)policy->protected_paths;
    o.max_read_bytes = policy->tools.max_read_bytes;
    rf_fs *fs = rf_fs_open(&o, err);
    if (fs && policy->tools.disabled && !(fs->disabled = rf_strv_copy(policy->tools.disabled))) {
        rf_fs_close(fs);
        rf_error_set(err, ENOMEM, "file tools");
        return NULL;
    }
    return fs;
}

int rf_fs_tool_enabled(const rf_fs *fs, const char *tool, rf_error **err)
{
    return rf_tools_disabled(fs->disabled, tool) ? rf_tools_refuse(tool, RF_FS_EXIT_FAILED, err) : 0;
}

static void free_patterns(pcre2_code **re, size_t n)
{
    for (size_t i = 0; re && i < n; i++)
        pcre2_code_free(re[i]);
    free(re);
}

RF_EXPORT void rf_fs_close(rf_fs *fs)
{
    if (!fs)
        return;
    if (fs->ws_fd >= 0)
        close(fs->ws_fd);
    free(fs->ws);
    free(fs->ws_given);
    free_patterns(fs->read_re, fs->n_read_re);
    free_patterns(fs->write_re, fs->n_write_re);
    pcre2_match_context_free(fs->mctx);
    rf_strv_free(fs->protected_rel);
    rf_strv_free(fs->disabled);
    free(fs);
}

RF_EXPORT void rf_fs_entries_free(char **entries)
{
    rf_strv_free(entries);
}
