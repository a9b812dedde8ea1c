/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure parts of changes/: the line diff, path quoting, session ids;
 * and util/printable.c's visible form, which the diff uses on a terminal.
 * And the session lock: the session's directory, or its lock file. */
#include "tap.h"
#include "changes/changes.h"
#include "util/printable.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char *diff(const char *a, const char *b, size_t *ins, size_t *del)
{
    char *out = NULL;
    size_t len = 0;
    *ins = *del = 0;
    if (rf_changes_text_diff(a, strlen(a), b, strlen(b), 0, &out, &len, ins, del, NULL) < 0)
        return NULL;
    return out ? out : strdup("");
}

static void check_diff(const char *a, const char *b, const char *want, size_t wi, size_t wd, const char *desc)
{
    size_t ins, del;
    char *got = diff(a, b, &ins, &del);
    is_str(got, want, desc);
    ok(ins == wi && del == wd, desc);
    free(got);
}

/* What a terminal would act on is shown, everything else kept. */
static void visible_table(void)
{
    static const struct {
        const char *in, *want;
        size_t n;
        const char *desc;
    } t[] = {
        { "plain text", "plain text", 0, "plain text as it is" },
        { "tab\there", "tab\there", 0, "a tab is kept" },
        { "a\033[1A\033[2Kb", "a^[[1A^[[2Kb", 2, "CSI cursor-up and erase-line: ESC as ^[" },
        { "\033]52;c;aGk=\007", "^[]52;c;aGk=^G", 2, "OSC 52 (clipboard write) and BEL" },
        { "x\rY", "x^MY", 1, "a bare CR as ^M" },
        { "del\177", "del^?", 1, "DEL as ^?" },
        { "\xc2\x9b" "31m", "\\u009b31m", 1, "C1 CSI (U+009B) as \\u009b" },
        { "\x9b" "31m", "\\x9b31m", 1, "a lone 0x9b (CSI on an 8-bit terminal) as \\x9b" },
        { "\xc0\x9b", "\\xc0\\x9b", 2, "an overlong ESC as bytes" },
        { "\xed\xa0\x80", "\\xed\\xa0\\x80", 3, "a UTF-16 surrogate as bytes" },
        { "a\xe2\x80\xae" "b", "a\\u202eb", 1, "RIGHT-TO-LEFT OVERRIDE as \\u202e" },
        { "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 0,
          "UTF-8 text in any script kept" },
        { "cut\xe6\x97", "cut\\xe6\\x97", 2, "a sequence cut short as bytes" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = 99;
        char *v = rf_visible(t[i].in, strlen(t[i].in), &n);
        is_str(v, t[i].want, t[i].desc);
        is_int((long long)n, (long long)t[i].n, t[i].desc);
        free(v);
    }
    size_t n = 0;
    char *v = rf_visible("a\0" "b", 3, &n);
    is_str(v, "a^@b", "a NUL byte as ^@");
    free(v);
    char buf[8];
    rf_printable(buf, sizeof buf, "a\033b\xc3\xa9long");
    is_str(buf, "a?b??lo", "rf_printable: ASCII only, cut to size");
}

static void visible_diff(void)
{
    const char *a = "ok\n", *b = "ok line\nevil\033[1A\033[2Khidden\n";
    char *out = NULL;
    size_t len = 0, ins = 0, del = 0, k = 0;
    ok(rf_changes_text_diff(a, strlen(a), b, strlen(b), RF_DIFF_VISIBLE, &out, &len, &ins, &del, &k) == 0,
       "a visible diff");
    is_str(out, "@@ -1,1 +1,2 @@\n-ok\n+ok line\n+evil^[[1A^[[2Khidden\n", "its lines hold no ESC");
    is_int((long long)k, 2, "two control characters counted");
    free(out);
    out = NULL;
    len = 0;
    ok(rf_changes_text_diff(a, strlen(a), b, strlen(b), 0, &out, &len, &ins, &del, NULL) == 0 &&
           strstr(out, "evil\033[1A") != NULL,
       "without RF_DIFF_VISIBLE the bytes are kept (--raw, a pipe)");
    free(out);
}

/* A held session refuses a second holder, and no lock file is made; a
 * session with a lock file (an older ringfence's) is locked through it. */
static void session_lock(void)
{
    char dir[] = "/tmp/rf-test-lock.XXXXXX", file[64];
    if (!mkdtemp(dir)) {
        ok(false, "mkdtemp");
        return;
    }
    snprintf(file, sizeof file, "%s/lock", dir);
    rf_error *err = NULL;
    int a = rf_session_lock(dir, "s1", false, &err);
    ok(a >= 0, "a free session is locked");
    int b = rf_session_lock(dir, "s1", false, &err);
    ok(b < 0 && err && strstr(rf_error_message(err), "is in use"), "a held session is refused, 'in use'");
    rf_error_free(err);
    err = NULL;
    ok(access(file, F_OK) < 0, "no lock file is made");
    close(a);
    b = rf_session_lock(dir, "s1", false, &err);
    ok(b >= 0, "control: once let go, it is locked again");
    close(b);
    int f = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ok(f >= 0 && flock(f, LOCK_EX | LOCK_NB) == 0, "an older ringfence holds the lock file");
    b = rf_session_lock(dir, "s1", false, &err);
    ok(b < 0 && err, "a session whose lock file is held is refused");
    rf_error_free(err);
    err = NULL;
    close(f);
    b = rf_session_lock(dir, "s1", false, &err);
    ok(b >= 0, "control: once the file is let go, it is locked");
    close(b);
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    check_diff("a\nb\nc\n", "a\nb\nc\n", "", 0, 0, "identical: no hunk");
    check_diff("a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 1, 1, "one line replaced");
    check_diff("", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0, "new file");
    check_diff("x\n", "", "@@ -1,1 +0,0 @@\n-x\n", 0, 1, "emptied file");
    check_diff("a\n", "a", "@@ -1,1 +1,1 @@\n-a\n+a\n\\ No newline at end of file\n", 1, 1,
               "a lost final newline is a change, and said so");
    /* Two changes 10 lines apart: two hunks, 3 lines of context each. */
    const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    const char *b = "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n";
    check_diff(a, b, "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n", 2, 2,
               "distant changes: two hunks");
    /* An insertion in the middle keeps everything around it. */
    check_diff("a\nb\nc\nd\n", "a\nb\nnew\nc\nd\n", "@@ -1,4 +1,5 @@\n a\n b\n+new\n c\n d\n", 1, 0,
               "an insertion");

    /* A large rewrite past the edit limit is still a correct diff. */
    size_t n = 3000;
    char *big_a = malloc(n * 8), *big_b = malloc(n * 8), *pa = big_a, *pb = big_b;
    for (size_t i = 0; i < n; i++) {
        pa += sprintf(pa, "a%zu\n", i);
        pb += sprintf(pb, "b%zu\n", i);
    }
    size_t ins, del;
    char *got = diff(big_a, big_b, &ins, &del);
    ok(got && ins == n && del == n, "3000 lines all replaced: every line counted once");
    free(got);
    free(big_a);
    free(big_b);

    char *q = rf_change_quote_path("plain/name.txt");
    is_str(q, "plain/name.txt", "a plain path prints as it is");
    free(q);
    q = rf_change_quote_path("new\nline");
    is_str(q, "\"new\\nline\"", "a newline is quoted");
    free(q);
    q = rf_change_quote_path("bad\377");
    is_str(q, "\"bad\\377\"", "invalid UTF-8 is quoted in octal");
    free(q);
    q = rf_change_quote_path("caf\xc3\xa9");
    is_str(q, "caf\xc3\xa9", "valid UTF-8 stays");
    free(q);

    q = rf_change_quote_path("csi\xc2\x9b" "31m");
    is_str(q, "\"csi\\302\\23331m\"", "a C1 control (CSI) is quoted, though valid UTF-8");
    free(q);
    q = rf_change_quote_path("rlo\xe2\x80\xaetxt.exe");
    is_str(q, "\"rlo\\342\\200\\256txt.exe\"", "a bidi override is quoted");
    free(q);
    q = rf_change_quote_path("over\xc0\x9b");
    is_str(q, "\"over\\300\\233\"", "an overlong ESC is invalid UTF-8: quoted");
    free(q);
    visible_table();
    visible_diff();
    session_lock();

    ok(rf_session_id_valid("0123456789ab"), "a new id is valid");
    ok(!rf_session_id_valid("../etc"), "'..' is no id");
    ok(!rf_session_id_valid("a/b"), "a slash is no id");
    ok(!rf_session_id_valid(""), "empty is no id");
    ok(!rf_session_id_valid("-x"), "a leading '-' is no id");
    char id[RF_SESSION_ID_MAX];
    ok(rf_session_new_id(id, NULL) == 0 && strlen(id) == 12 && rf_session_id_valid(id), "new ids are 12 hex digits");
    return done_testing();
}
