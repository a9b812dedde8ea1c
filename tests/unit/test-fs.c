/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file tools: confinement (traversal, absolute paths, magic links,
 * symlink escapes, symlinks that stay inside), allow_* patterns, protected
 * paths, and each verb's behaviour and errors. */
#include "fs-helpers.h"
#include "model/policy.h"
#include "util/strv.h"

#include <sys/types.h>

#define OUTSIDE "access denied: path is outside the workspace"
#define SYMLINK "access denied: symlink resolves outside workspace"

/* ── thin wrappers: return NULL on success or the error message ── */

static char *rd(rf_fs *fs, const char *path, uint64_t off, uint64_t lim)
{
    rf_error *err = NULL;
    char *out = NULL;
    size_t n = 0;
    if (rf_fs_read(fs, path, off, lim, &out, &n, &err) < 0) {
        printf("#   read %s: %s\n", path, errmsg(err));
        return NULL;
    }
    return out;
}

static const char *rd_err(rf_fs *fs, const char *path, uint64_t off, uint64_t lim)
{
    rf_error *err = NULL;
    char *out = NULL;
    size_t n = 0;
    if (rf_fs_read(fs, path, off, lim, &out, &n, &err) == 0) {
        if (strstr(out, "TOP-SECRET"))
            printf("#   LEAK: read %s returned the secret\n", path);
        free(out);
        return "(read succeeded)";
    }
    if (rf_error_exit_code(err) != RF_FS_EXIT_FAILED)
        printf("#   exit code %d\n", rf_error_exit_code(err));
    return errmsg(err);
}

static const char *wr(rf_fs *fs, const char *path, const char *content)
{
    rf_error *err = NULL;
    if (rf_fs_write(fs, path, content, strlen(content), &err) == 0)
        return NULL;
    return errmsg(err);
}

static const char *ap(rf_fs *fs, const char *path, const char *content)
{
    rf_error *err = NULL;
    if (rf_fs_append(fs, path, content, strlen(content), &err) == 0)
        return NULL;
    return errmsg(err);
}

static const char *ed(rf_fs *fs, const char *path, const char *old_text, const char *new_text)
{
    rf_error *err = NULL;
    if (rf_fs_edit(fs, path, old_text, new_text, &err) == 0)
        return NULL;
    return errmsg(err);
}

static bool denied_errno(rf_fs *fs, const char *path)
{
    rf_error *err = NULL;
    char *out = NULL;
    size_t n;
    int rc = rf_fs_read(fs, path, 0, 0, &out, &n, &err);
    bool ok = rc < 0 && rf_error_errno(err) == EACCES && rf_error_exit_code(err) == RF_FS_EXIT_FAILED;
    free(out);
    rf_error_free(err);
    return ok;
}

static void test_open_errors(void)
{
    rf_fs_options o;
    rf_error *err = NULL;
    rf_fs_options_init(&o);
    o.workspace = "relative/ws";
    ok(!rf_fs_open(&o, &err), "open: a relative workspace is refused");
    like(errmsg(err), "must be an absolute path", "open: says why");
    err = NULL;
    o.workspace = tpath(T_ROOT, "missing");
    ok(!rf_fs_open(&o, &err), "open: a missing workspace is refused");
    like(errmsg(err), "cannot open the workspace", "open: names the workspace");
    err = NULL;
    const char *bad[] = { "^/etc/(hosts$", NULL };
    o.workspace = T_WS;
    o.allow_read_paths = bad;
    ok(!rf_fs_open(&o, &err), "open: a bad regex is refused");
    like(errmsg(err), "allow_read_paths: bad pattern", "open: names the setting");
    err = NULL;
    const char *prot[] = { "../x", NULL };
    o.allow_read_paths = NULL;
    o.protected_paths = prot;
    ok(!rf_fs_open(&o, &err), "open: a protected path leaving the workspace is refused");
    rf_error_free(err);
}

static void test_traversal(rf_fs *fs)
{
    char abs_secret[600], magic[700];
    snprintf(abs_secret, sizeof abs_secret, "%s/secret", T_OUT);
    snprintf(magic, sizeof magic, "/proc/self/root%s", abs_secret);
    like(rd_err(fs, "../out/secret", 0, 0), OUTSIDE, "traversal: ../ is outside");
    like(rd_err(fs, "a/../../out/secret", 0, 0), OUTSIDE, "traversal: a/../../ is outside");
    like(rd_err(fs, abs_secret, 0, 0), OUTSIDE, "traversal: an absolute outside path");
    like(rd_err(fs, magic, 0, 0), OUTSIDE, "traversal: /proc/self/root/... is outside");
    like(rd_err(fs, "../out/secret", 0, 0), "../out/secret", "traversal: the message names the path");
    ok(denied_errno(fs, "../out/secret"), "traversal: errno EACCES, exit code 1");
    like(wr(fs, "../out/new", "x"), OUTSIDE, "traversal: write ../ is outside");
    ok(!exists(tpath(T_OUT, "new")), "traversal: nothing created outside");
    like(ap(fs, abs_secret, "x"), OUTSIDE, "traversal: append outside refused");
    like(ed(fs, "../out/secret", "TOP", "x"), OUTSIDE, "traversal: edit outside refused");
    ok(content_is(tpath(T_OUT, "secret"), SECRET), "traversal: the secret is untouched");
    rf_error *err = NULL;
    char **ents = NULL;
    ok(rf_fs_list(fs, "..", false, 0, &ents, &err) < 0, "traversal: list .. refused");
    like(errmsg(err), OUTSIDE, "traversal: list .. says outside");

    /* A symlink planted in the workspace to /proc/self/root: a magic link
     * at the end of the chain. */
    sym("/proc/self/root", tpath(T_WS, "procroot"));
    char via[700];
    snprintf(via, sizeof via, "procroot%s", abs_secret);
    const char *m = rd_err(fs, via, 0, 0);
    ok(strstr(m, "access denied") != NULL, "traversal: workspace symlink to /proc/self/root refused");
    printf("#   %s\n", m);
}

static void test_magic_with_outside_reads(void)
{
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.allow_read_outside_workspace = true;
    rf_fs *fs = open_ws(&o);
    char magic[700];
    snprintf(magic, sizeof magic, "/proc/self/root%s/secret", T_OUT);
    like(rd_err(fs, magic, 0, 0), "magic link", "magic: /proc/self/root refused even with reads outside");
    char *s = rd(fs, tpath(T_OUT, "secret"), 0, 0);
    is_str(s, SECRET, "allow_read_outside_workspace: reads outside");
    free(s);
    like(wr(fs, tpath(T_OUT, "secret"), "x"), OUTSIDE, "allow_read_outside_workspace: writes stay confined");
    rf_fs_close(fs);
}

static void test_symlink_escape(rf_fs *fs)
{
    sym("../out/secret", tpath(T_WS, "lf"));
    char abs_out[400];
    snprintf(abs_out, sizeof abs_out, "%s", T_OUT);
    sym(abs_out, tpath(T_WS, "ld"));
    like(rd_err(fs, "lf", 0, 0), SYMLINK, "escape: file symlink out, read");
    like(rd_err(fs, "ld/secret", 0, 0), SYMLINK, "escape: dir symlink out, read");
    like(rd_err(fs, tpath(T_WS, "ld/secret"), 0, 0), SYMLINK, "escape: absolute path through dir symlink");
    like(wr(fs, "lf", "pwned"), SYMLINK, "escape: write through file symlink");
    like(ap(fs, "lf", "pwned"), SYMLINK, "escape: append through file symlink");
    like(ed(fs, "lf", "TOP", "pwned"), SYMLINK, "escape: edit through file symlink");
    like(wr(fs, "ld/new", "pwned"), SYMLINK, "escape: write into dir symlink");
    like(wr(fs, "ld/sub/new", "pwned"), SYMLINK, "escape: create parents through dir symlink");
    like(wr(fs, "ld/../../x", "pwned"), OUTSIDE, "escape: lexical escape past a symlink");
    ok(content_is(tpath(T_OUT, "secret"), SECRET), "escape: the secret is untouched");
    ok(!exists(tpath(T_OUT, "new")) && !exists(tpath(T_OUT, "sub")), "escape: nothing created outside");
    ok(exists(tpath(T_WS, "lf")), "escape: the symlink itself was not replaced");
    rf_error *err = NULL;
    char **ents = NULL;
    ok(rf_fs_list(fs, "ld", false, 0, &ents, &err) < 0, "escape: list through dir symlink refused");
    like(errmsg(err), SYMLINK, "escape: list says symlink");
    /* A dangling symlink to a new file outside must not create it. */
    sym(tpath(T_OUT, "created"), tpath(T_WS, "dangling"));
    like(wr(fs, "dangling", "pwned"), SYMLINK, "escape: write through dangling symlink");
    ok(!exists(tpath(T_OUT, "created")), "escape: dangling target not created");
    unlink(tpath(T_WS, "dangling"));
}

static void test_symlink_inside(rf_fs *fs)
{
    mkdir(tpath(T_WS, "sub"), 0755);
    put(tpath(T_WS, "sub/f"), "inside\n");
    sym("sub", tpath(T_WS, "in"));
    sym(tpath(T_WS, "sub"), tpath(T_WS, "absin"));
    sym("sub/f", tpath(T_WS, "fl"));
    char *s = rd(fs, "in/f", 0, 0);
    is_str(s, "inside\n", "inside: relative dir symlink read");
    free(s);
    s = rd(fs, "absin/f", 0, 0);
    is_str(s, "inside\n", "inside: absolute symlink pointing inside read");
    free(s);
    ok(!wr(fs, "in/g", "g\n"), "inside: write through relative dir symlink");
    ok(content_is(tpath(T_WS, "sub/g"), "g\n"), "inside: landed in the real directory");
    ok(!wr(fs, "absin/h", "h\n"), "inside: write through absolute symlink pointing inside");
    ok(content_is(tpath(T_WS, "sub/h"), "h\n"), "inside: landed in the real directory");
    ok(!wr(fs, "fl", "new\n"), "inside: write through a file symlink");
    ok(content_is(tpath(T_WS, "sub/f"), "new\n"), "inside: the target was replaced");
    struct stat st;
    ok(lstat(tpath(T_WS, "fl"), &st) == 0 && S_ISLNK(st.st_mode), "inside: the symlink is still a symlink");
    ok(!ap(fs, "fl", "more\n"), "inside: append through a file symlink");
    ok(!ed(fs, "fl", "more", "MORE"), "inside: edit through a file symlink");
    ok(content_is(tpath(T_WS, "sub/f"), "new\nMORE\n"), "inside: both landed in the target");
    char abs_f[600];
    snprintf(abs_f, sizeof abs_f, "%s/sub/./f", T_WS);
    s = rd(fs, abs_f, 0, 0);
    is_str(s, "new\nMORE\n", "inside: an absolute path in the workspace is accepted");
    free(s);
}

static void test_allow_patterns(void)
{
    char re_read[600], re_write[600];
    snprintf(re_read, sizeof re_read, "^%s/secret$", T_OUT);
    snprintf(re_write, sizeof re_write, "^%s/w[0-9]+\\.txt$", T_OUT);
    const char *rp[] = { re_read, NULL }, *wp[] = { re_write, NULL };
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.allow_read_paths = rp;
    o.allow_write_paths = wp;
    rf_fs *fs = open_ws(&o);
    put(tpath(T_OUT, "other"), "other\n");
    char *s = rd(fs, tpath(T_OUT, "secret"), 0, 0);
    is_str(s, SECRET, "allow_read_paths: the matching path is read");
    free(s);
    s = rd(fs, "../out/secret", 0, 0);
    is_str(s, SECRET, "allow_read_paths: also as a relative path");
    free(s);
    s = rd(fs, "lf", 0, 0);
    is_str(s, SECRET, "allow_read_paths: and through a workspace symlink (canonical path matches)");
    free(s);
    like(rd_err(fs, tpath(T_OUT, "other"), 0, 0), OUTSIDE, "allow_read_paths: other paths refused");
    like(rd_err(fs, tpath(T_OUT, "nope"), 0, 0), OUTSIDE, "allow_read_paths: no existence leak for others");
    like(wr(fs, tpath(T_OUT, "secret"), "x"), OUTSIDE, "allow_read_paths: does not allow writing");
    ok(!wr(fs, tpath(T_OUT, "w1.txt"), "w1\n"), "allow_write_paths: the matching path is written");
    ok(content_is(tpath(T_OUT, "w1.txt"), "w1\n"), "allow_write_paths: content landed");
    ok(!ap(fs, tpath(T_OUT, "w1.txt"), "more\n"), "allow_write_paths: append");
    ok(!ed(fs, tpath(T_OUT, "w1.txt"), "more", "MORE"), "allow_write_paths: edit");
    ok(content_is(tpath(T_OUT, "w1.txt"), "w1\nMORE\n"), "allow_write_paths: append + edit landed");
    like(wr(fs, tpath(T_OUT, "x.txt"), "x"), OUTSIDE, "allow_write_paths: non-matching refused");
    like(wr(fs, tpath(T_OUT, "d/w2.txt"), "x"), OUTSIDE, "allow_write_paths: no parent creation outside");
    ok(!exists(tpath(T_OUT, "x.txt")) && !exists(tpath(T_OUT, "d")), "allow_write_paths: nothing else created");
    rf_fs_close(fs);
}

static void test_protected(rf_fs *fs)
{
    mkdir(tpath(T_WS, ".git"), 0755);
    put(tpath(T_WS, ".git/config"), "[core]\n");
    const char *p = "access denied: .ringfence.json is protected by the policy (protected_paths)";
    is_str(wr(fs, ".ringfence.json", "{}"), p, "protected: .ringfence.json, exact message");
    ok(!exists(tpath(T_WS, ".ringfence.json")), "protected: not created");
    like(wr(fs, ".git/hooks/pre-commit", "x"), "is protected", "protected: .git/hooks not created by parents");
    ok(!exists(tpath(T_WS, ".git/hooks")), "protected: .git/hooks was not created");
    mkdir(tpath(T_WS, ".git/hooks"), 0755);
    like(wr(fs, "./.git/../.git/hooks/x", "x"), "is protected", "protected: ./.git/../.git/hooks/x");
    like(ap(fs, ".git/hooks/x", "x"), "is protected", "protected: append");
    sym(".git/hooks", tpath(T_WS, "hk"));
    like(wr(fs, "hk/x", "x"), "is protected", "protected: through a symlink to it");
    put(tpath(T_WS, ".ringfence.yaml"), "a: 1\n");
    like(ed(fs, ".ringfence.yaml", "a", "b"), "is protected", "protected: edit");
    if (link(tpath(T_WS, ".ringfence.yaml"), tpath(T_WS, "cfg")) == 0) {
        like(ap(fs, "cfg", "b: 2\n"), "is protected", "protected: a hard link to it (by inode)");
        ok(content_is(tpath(T_WS, ".ringfence.yaml"), "a: 1\n"), "protected: content unchanged");
    } else {
        ok(1, "protected: hard link # SKIP cannot link");
        ok(1, "protected: content # SKIP");
    }
    ok(!exists(tpath(T_WS, ".git/hooks/x")), "protected: nothing written in hooks");
    ok(!wr(fs, ".git/config", "[core]\n\tbare = false\n"), "protected: .git/config is not protected");
    char *s = rd(fs, ".git/hooks/../config", 0, 0);
    ok(s != NULL, "protected: reading is allowed");
    free(s);

    const char *none[] = { NULL };
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.protected_paths = none;
    rf_fs *open = open_ws(&o);
    ok(!wr(open, ".ringfence.json", "{}"), "protected: an empty list protects nothing");
    rf_fs_close(open);
    unlink(tpath(T_WS, ".ringfence.json"));
}

/* In a child with its own mounts: bind .git/hooks elsewhere in the
 * workspace; a write there must still be refused (identity check).
 * Exit 0 refused, 1 written, 77 no mount namespace. */
static void test_protected_bind_mount(void)
{
    mkdir(tpath(T_WS, "hooks-bind"), 0755);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (private_mounts() < 0 || mount(tpath(T_WS, ".git/hooks"), tpath(T_WS, "hooks-bind"), NULL, MS_BIND, NULL) < 0)
            _exit(77);
        rf_fs *fs = open_ws(NULL);
        const char *e = wr(fs, "hooks-bind/post-merge", "x");
        _exit(e && strstr(e, "is protected") ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 99;
    if (rc == 77)
        printf("ok %d - protected: a bind mount of .git/hooks # SKIP no mount namespace\n", ++tap_n);
    else
        is_int(rc, 0, "protected: a bind mount of .git/hooks is caught by identity");
    ok(!exists(tpath(T_WS, ".git/hooks/post-merge")), "protected: nothing written through the bind mount");
    rmdir(tpath(T_WS, "hooks-bind"));
}

static void test_edit(rf_fs *fs)
{
    put(tpath(T_WS, "e.txt"), "alpha beta\ngamma beta\n");
    chmod(tpath(T_WS, "e.txt"), 0640);
    is_str(ed(fs, "e.txt", "delta", "x"), "old text not found in e.txt", "edit: zero occurrences");
    is_str(ed(fs, "e.txt", "beta", "x"), "old text occurs 2 times in e.txt; it must occur exactly once",
           "edit: several occurrences, with the count");
    ok(content_is(tpath(T_WS, "e.txt"), "alpha beta\ngamma beta\n"), "edit: failures change nothing");
    ok(!ed(fs, "e.txt", "gamma beta", "gamma BETA"), "edit: exactly one occurrence");
    ok(content_is(tpath(T_WS, "e.txt"), "alpha beta\ngamma BETA\n"), "edit: replaced");
    struct stat st;
    ok(stat(tpath(T_WS, "e.txt"), &st) == 0 && (st.st_mode & 07777) == 0640, "edit: mode kept");
    put(tpath(T_WS, "aaa"), "aaa");
    like(ed(fs, "aaa", "aa", "b"), "occurs 2 times", "edit: overlapping occurrences are ambiguous");
    like(ed(fs, "e.txt", "", "x"), "old text is empty", "edit: empty old text refused");
    like(ed(fs, "missing.txt", "a", "b"), "file not found: missing.txt", "edit: missing file");
    ok(!ed(fs, "e.txt", "alpha ", ""), "edit: deleting text");
    ok(content_is(tpath(T_WS, "e.txt"), "beta\ngamma BETA\n"), "edit: deleted");
}

static void test_list(rf_fs *fs)
{
    mkdir(tpath(T_WS, "L"), 0755);
    mkdir(tpath(T_WS, "L/b"), 0755);
    mkdir(tpath(T_WS, "L/b/c"), 0755);
    put(tpath(T_WS, "L/a.txt"), "a");
    put(tpath(T_WS, "L/b/z"), "z");
    put(tpath(T_WS, "L/b/c/d"), "d");
    sym("..", tpath(T_WS, "L/b/up"));
    sym(T_OUT, tpath(T_WS, "L/out"));
    char **e = NULL;
    rf_error *err = NULL;
    is_int(rf_fs_list(fs, "L", false, 0, &e, &err), 0, "list: flat");
    ok(e && e[0] && !strcmp(e[0], "a.txt") && !strcmp(e[1], "b/") && !strcmp(e[2], "out") && !e[3],
       "list: sorted, '/' on directories, symlinks plain");
    rf_fs_entries_free(e);
    e = NULL;
    is_int(rf_fs_list(fs, "L", true, 0, &e, &err), 0, "list: recursive");
    const char *want[] = { "a.txt", "b/", "b/c/", "b/c/d", "b/up", "b/z", "out", NULL };
    bool same = true;
    for (int i = 0; want[i] || (e && e[i]); i++)
        if (!e || !want[i] || !e[i] || strcmp(e[i], want[i])) {
            same = false;
            printf("#   entry %d: got %s, want %s\n", i, e && e[i] ? e[i] : "(end)", want[i] ? want[i] : "(end)");
            break;
        }
    ok(same, "list: recursive order, symlinks (even to ..) not followed");
    rf_fs_entries_free(e);
    e = NULL;
    is_int(rf_fs_list(fs, "L", true, 3, &e, &err), 1, "list: --max stops and says truncated");
    is_int(e ? (long long)(e[0] && e[1] && e[2] && !e[3]) : 0, 1, "list: exactly max entries");
    rf_fs_entries_free(e);
    e = NULL;
    ok(rf_fs_list(fs, "L/a.txt", false, 0, &e, &err) < 0, "list: a file is not a directory");
    like(errmsg(err), "not a directory: L/a.txt", "list: says so");
    err = NULL;
    ok(rf_fs_list(fs, NULL, false, 0, &e, &err) == 0 && e && e[0], "list: NULL path is the workspace");
    rf_fs_entries_free(e);
}

static void test_read(rf_fs *fs)
{
    put(tpath(T_WS, "r.txt"), "one\ntwo\nthree\nfour");
    char *s = rd(fs, "r.txt", 2, 2);
    is_str(s, "two\nthree\n", "read: offset 2 limit 2 (lines, 1-based)");
    free(s);
    s = rd(fs, "r.txt", 3, 0);
    is_str(s, "three\nfour", "read: from line 3 to the end, no final newline");
    free(s);
    s = rd(fs, "r.txt", 4, 10);
    is_str(s, "four", "read: limit past the end");
    free(s);
    s = rd(fs, "r.txt", 0, 1);
    is_str(s, "one\n", "read: offset 0 is line 1");
    free(s);
    is_str(rd_err(fs, "r.txt", 5, 0), "offset 5 is past the end of r.txt (4 lines)", "read: offset past the end");
    put(tpath(T_WS, "empty"), "");
    s = rd(fs, "empty", 0, 0);
    is_str(s, "", "read: an empty file");
    free(s);
    is_str(rd_err(fs, "nope.txt", 0, 0), "file not found: nope.txt", "read: not found");
    is_str(rd_err(fs, "sub", 0, 0), "is a directory: sub", "read: a directory");
    like(rd_err(fs, "r.txt/x", 0, 0), "not a directory", "read: a file as a directory");
    mkfifo(tpath(T_WS, "fifo"), 0644);
    like(rd_err(fs, "fifo", 0, 0), "not a regular file: fifo", "read: a FIFO (without hanging)");
    is_str(rd_err(fs, "", 0, 0), "empty path", "read: empty path");
}

static void test_binary_and_size(void)
{
    char big[200];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\0';
    for (int i = 9; i < 199; i += 10)
        big[i] = '\n';
    put(tpath(T_WS, "big.txt"), big);
    FILE *f = fopen(tpath(T_WS, "bin"), "w");
    fwrite("ab\0cd", 1, 5, f);
    fclose(f);
    f = fopen(tpath(T_WS, "late-nul"), "w");
    for (int i = 0; i < 9000; i++)
        fputc('a', f);
    fputc('\0', f);
    fclose(f);
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.max_read_bytes = 100;
    rf_fs *fs = open_ws(&o);
    is_str(rd_err(fs, "bin", 0, 0), "file looks binary: bin has a NUL byte in its first 8 KiB", "binary: refused");
    like(rd_err(fs, "big.txt", 0, 0), "file too large: big.txt is 199 bytes, more than max_read_bytes (100)",
         "too large: refused with sizes");
    char *s = rd(fs, "big.txt", 2, 3);
    ok(s && strlen(s) == 30, "too large: a small range of a large file is fine");
    free(s);
    like(rd_err(fs, "big.txt", 1, 15), "more than max_read_bytes", "too large: a range above the cap");
    rf_fs_close(fs);
    fs = open_ws(NULL);
    s = rd(fs, "late-nul", 0, 0);
    ok(s != NULL, "binary: a NUL after the first 8 KiB is not probed");
    free(s);
    size_t n = RF_FS_MAX_WRITE + 1;
    char *huge = malloc(n);
    memset(huge, 'y', n);
    rf_error *err = NULL;
    ok(rf_fs_write(fs, "huge", huge, n, &err) < 0, "write: more than 16 MiB refused");
    like(errmsg(err), "content too large", "write: says too large");
    ok(!exists(tpath(T_WS, "huge")), "write: nothing written");
    free(huge);
    rf_fs_close(fs);
}

static void test_write(rf_fs *fs)
{
    ok(!wr(fs, "deep/er/file.txt", "x\n"), "write: creates parent directories");
    ok(content_is(tpath(T_WS, "deep/er/file.txt"), "x\n"), "write: content");
    ok(!wr(fs, "deep/er/file.txt", "y\n"), "write: replaces");
    ok(content_is(tpath(T_WS, "deep/er/file.txt"), "y\n"), "write: new content");
    is_int(count_entries(tpath(T_WS, "deep/er")), 1, "write: no temp file left");
    chmod(tpath(T_WS, "deep/er/file.txt"), 0604);
    ok(!wr(fs, "deep/er/file.txt", "z\n"), "write: replace a 0604 file");
    struct stat st;
    ok(stat(tpath(T_WS, "deep/er/file.txt"), &st) == 0 && (st.st_mode & 07777) == 0604, "write: mode kept");
    is_str(wr(fs, "deep", "x"), "is a directory: deep", "write: over a directory refused");
    is_str(wr(fs, ".", "x"), "is a directory: .", "write: '.' refused");
    is_str(wr(fs, "deep/..", "x"), "is a directory: deep/..", "write: '..' refused");
    like(wr(fs, "deep/er/file.txt/x", "x"), "not a directory", "write: under a file refused");
    ok(!ap(fs, "log.txt", "1\n") && !ap(fs, "log.txt", "2\n"), "append: creates, then appends");
    ok(content_is(tpath(T_WS, "log.txt"), "1\n2\n"), "append: content");
    ok(!wr(fs, "empty-write", ""), "write: empty content");
    ok(content_is(tpath(T_WS, "empty-write"), ""), "write: empty file");
}

static void test_unrestricted(void)
{
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.restrict_to_workspace = false;
    rf_fs *fs = open_ws(&o);
    char *s = rd(fs, "../out/secret", 0, 0);
    is_str(s, SECRET, "unrestricted: ../ reads outside");
    free(s);
    ok(!wr(fs, "../out/free.txt", "free\n"), "unrestricted: writes outside");
    ok(content_is(tpath(T_OUT, "free.txt"), "free\n"), "unrestricted: landed");
    like(wr(fs, ".ringfence.yml", "x"), "is protected", "unrestricted: protected paths still hold");
    rf_fs_close(fs);
}

static void test_open_for_policy(void)
{
    struct rf_policy p;
    memset(&p, 0, sizeof p);
    char re[600];
    snprintf(re, sizeof re, "^%s/secret$", T_OUT);
    p.workspace = T_WS;
    p.restrict_to_workspace = true;
    rf_strv_push(&p.tools.allow_read_paths, re);
    rf_strv_push(&p.protected_paths, "only-this");
    p.tools.max_read_bytes = 5;
    rf_error *err = NULL;
    rf_fs *fs = rf_fs_open_for_policy(&p, &err);
    ok(fs != NULL, "policy: opens from a resolved policy");
    if (fs) {
        like(rd_err(fs, tpath(T_OUT, "secret"), 0, 0), "more than max_read_bytes (5)",
             "policy: tools.allow_read_paths admits, tools.max_read_bytes caps");
        like(wr(fs, "only-this", "x"), "is protected", "policy: protected_paths from the policy");
        ok(!wr(fs, ".ringfence.json", "{}"), "policy: its list replaces the built-in one");
        unlink(tpath(T_WS, ".ringfence.json"));
        rf_fs_close(fs);
    }
    rf_error_free(err);
    rf_strv_free(p.tools.allow_read_paths);
    rf_strv_free(p.protected_paths);
}

int main(void)
{
    scratch_setup();
    test_open_errors();
    rf_fs *fs = open_ws(NULL);
    test_traversal(fs);
    test_magic_with_outside_reads();
    test_symlink_escape(fs);
    test_symlink_inside(fs);
    test_allow_patterns();
    test_protected(fs);
    test_protected_bind_mount();
    test_edit(fs);
    test_list(fs);
    test_read(fs);
    test_binary_and_size();
    test_write(fs);
    test_unrestricted();
    test_open_for_policy();
    rf_fs_close(fs);
    scratch_teardown();
    return done_testing();
}
