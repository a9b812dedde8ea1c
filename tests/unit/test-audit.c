/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit trail (src/lib/audit/, src/lib/util/sha256.c): SHA-256 against
 * FIPS 180-4's vectors, the chain appended and checked, and each kind of
 * tampering verify must name: an edited record, a removed one, two
 * swapped, the tail cut off, a line inserted; rotation keeps the chain. */
#include "tap.h"
#include "audit/audit.h"
#include "util/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void sha256_vectors(void)
{
    char out[65];
    rf_sha256_hex("", 0, out);
    is_str(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 of nothing");
    rf_sha256_hex("abc", 3, out);
    is_str(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of abc");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    rf_sha256_hex(two, strlen(two), out);
    is_str(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "sha256 of two blocks");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    rf_sha256_hex(million, 1000000, out);
    free(million);
    is_str(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "sha256 of a million a's");
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

static void write_n(int n)
{
    remove_dir();
    for (int i = 0; i < n; i++) {
        json_t *f = json_pack("{s:s, s:i}", "sandbox", "abc", "n", i);
        rf_audit_append(dir, i % 2 ? "run.end" : "run.start", f, NULL, NULL);
        json_decref(f);
    }
}

/* Run a sed/shell edit on the log, verify, and return the problem text. */
static const char *after(const char *edit, rf_audit_check *c)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, edit);
    if (system(cmd) != 0)
        return "(the edit failed)";
    rf_audit_verify(dir, c, NULL);
    return c->problem;
}

static bool has(const char *s, const char *part)
{
    bool yes = strstr(s, part) != NULL;
    if (!yes)
        printf("# %s\n", s);
    return yes;
}

static void chain(void)
{
    rf_audit_check c;
    write_n(6);
    ok(rf_audit_verify(dir, &c, NULL) == 0 && c.intact && c.records == 6, "six records: intact");
    write_n(6);
    ok(has(after("sed -i '3s/\"n\":2/\"n\":7/' audit.log", &c), "record 3: its hash does not match") && !c.intact,
       "an edited record is named");
    write_n(6);
    ok(has(after("sed -i '4d' audit.log", &c), "record 4: is missing"), "a removed record is named");
    write_n(6);
    ok(has(after("sed -i '2{h;d};3G' audit.log", &c), "record 2: is missing (removed, or moved: record 3 comes next)"), "two swapped records are named");
    write_n(6);
    ok(has(after("sed -i '$d' audit.log", &c), "record 6: is missing") && has(c.problem, "from the end"),
       "a cut-off tail is caught by the head");
    write_n(6);
    ok(has(after("sed -i '2i {\"hello\":1}' audit.log", &c), "record 2: not a record"), "an inserted line is named");
    write_n(3);
    ok(has(after("rm head", &c), "head"), "a removed head is named");
    write_n(0);
    ok(rf_audit_verify(dir, &c, NULL) == 0 && c.intact && c.records == 0, "no log yet: intact, nothing in it");
}

static void line_ok(void)
{
    ok(!rf_audit_line_ok("", 0), "an empty line is not a record");
    ok(!rf_audit_line_ok("{}", 2), "{} is not a record");
    const char *fake = "{\"seq\":1,\"hash\":\"0000000000000000000000000000000000000000000000000000000000000000\"}";
    ok(!rf_audit_line_ok(fake, strlen(fake)), "a made-up hash is refused");
}

static void rotation(void)
{
    setenv("RINGFENCE_TEST_AUDIT_ROTATE_BYTES", "400", 1);
    write_n(12);
    unsetenv("RINGFENCE_TEST_AUDIT_ROTATE_BYTES");
    rf_audit_check c;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test $(ls %s | grep -c '^audit.log.[0-9]') -ge 2", dir);
    ok(system(cmd) == 0, "a small rotation size made several files");
    ok(rf_audit_verify(dir, &c, NULL) == 0 && c.intact && c.records == 12, "the chain runs across them");
    ok(has(after("rm $(ls audit.log.* | head -1)", &c), "") && c.intact && c.first_seq > 1,
       "the oldest file removed: the rest verifies, from a later record");
}

static void ocsf(void)
{
    json_t *rec = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:s}", "seq", 3, "time", "2026-01-02T03:04:05.678Z",
                            "event", "net.refused", "sandbox", "abc", "host", "evil.example", "port", 443, "hash",
                            "ff");
    json_t *o = rf_audit_ocsf(rec);
    is_int(json_integer_value(json_object_get(o, "class_uid")), 4001, "net.refused is Network Activity");
    is_int(json_integer_value(json_object_get(o, "type_uid")), 400105, "...activity Refuse");
    is_str(json_string_value(json_object_get(o, "action")), "Denied", "...denied");
    is_int(json_integer_value(json_object_get(o, "time")), 1767323045678LL, "time in ms since the epoch");
    is_str(json_string_value(json_object_get(json_object_get(o, "dst_endpoint"), "hostname")), "evil.example",
           "the host is the destination");
    json_decref(o);
    json_object_set_new(rec, "event", json_string("run.start"));
    json_object_set_new(rec, "command", json_pack("[s,s]", "ls", "-l"));
    o = rf_audit_ocsf(rec);
    is_int(json_integer_value(json_object_get(o, "type_uid")), 100701, "run.start is Process Activity: Launch");
    is_str(json_string_value(json_object_get(json_object_get(o, "process"), "cmd_line")), "ls -l", "its command line");
    json_decref(o);
    json_decref(rec);
    ok(rf_audit_ocsf(NULL) == NULL, "not a record: no event");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rf-test-audit-%d", (int)getpid());
    sha256_vectors();
    line_ok();
    chain();
    rotation();
    ocsf();
    remove_dir();
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
