/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure parts of changes/: the line diff, path quoting, session ids. */
#include "tap.h"
#include "changes/changes.h"

#include <stdlib.h>
#include <string.h>

static char *diff(const char *a, const char *b, size_t *ins, size_t *del)
{
    char *out = NULL;
    size_t len = 0;
    *ins = *del = 0;
    if (rf_changes_text_diff(a, strlen(a), b, strlen(b), false, &out, &len, ins, del) < 0)
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

    ok(rf_session_id_valid("0123456789ab"), "a new id is valid");
    ok(!rf_session_id_valid("../etc"), "'..' is no id");
    ok(!rf_session_id_valid("a/b"), "a slash is no id");
    ok(!rf_session_id_valid(""), "empty is no id");
    ok(!rf_session_id_valid("-x"), "a leading '-' is no id");
    char id[RF_SESSION_ID_MAX];
    ok(rf_session_new_id(id, NULL) == 0 && strlen(id) == 12 && rf_session_id_valid(id), "new ids are 12 hex digits");
    return done_testing();
}
