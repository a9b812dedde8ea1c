/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Appending to the audit trail: one record per call, chained (audit.h). */
#include "audit/audit.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char zero_hash[RF_AUDIT_HASH_LEN + 1] =
    "0000000000000000000000000000000000000000000000000000000000000000";

/* ,"hash":" + 64 digits + "} */
#define HASH_SUFFIX_LEN (9 + RF_AUDIT_HASH_LEN + 2)

char *rf_audit_dir(const char *instance_root)
{
    char *dir = NULL;
    return asprintf(&dir, "%s/audit", instance_root) < 0 ? NULL : dir;
}

void rf_audit_now(char out[32])
{
    struct timespec t;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &t);
    gmtime_r(&t.tv_sec, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03ldZ", t.tv_nsec / 1000000);
}

void rf_audit_new_id(char out[13])
{
    unsigned char r[6] = { 0 };
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* No entropy yet (early boot): unique enough for a name, which is
         * all an id is; the chain does not depend on it. */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t v = (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 30) ^ (uint64_t)t.tv_sec;
        memcpy(r, &v, sizeof r);
    }
    for (int i = 0; i < 6; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
}

static bool is_hex_hash(const char *s)
{
    for (int i = 0; i < RF_AUDIT_HASH_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

bool rf_audit_line_ok(const char *line, size_t len)
{
    if (len < HASH_SUFFIX_LEN + 2 || line[0] != '{')
        return false;
    const char *suf = line + len - HASH_SUFFIX_LEN;
    if (memcmp(suf, ",\"hash\":\"", 9) != 0 || !is_hex_hash(suf + 9) || memcmp(suf + 9 + RF_AUDIT_HASH_LEN, "\"}", 2))
        return false;
    rf_sha256 s;
    unsigned char d[32];
    rf_sha256_init(&s);
    rf_sha256_update(&s, line, len - HASH_SUFFIX_LEN);
    rf_sha256_update(&s, "}", 1);
    rf_sha256_final(&s, d);
    for (int i = 0; i < 32; i++) {
        char two[3];
        snprintf(two, sizeof two, "%02x", d[i]);
        if (memcmp(two, suf + 9 + 2 * i, 2) != 0)
            return false;
    }
    return true;
}

/* audit/head: "SEQ HASH\n", SEQ padded to 20 digits so every head has
 * the same 86 bytes and is rewritten in place with one pwrite: no new
 * inode per record (a head.new renamed over it, and a lock file, made
 * auditing cost 1.17x the CPU of a start without it on ext4; in place,
 * 1.02x: bench/interleave.py, docs/audit.md). It is also the lock (flock)
 * that serialises appends. Empty: the chain starts (0, zeros). */
#define HEAD_LEN (20 + 1 + RF_AUDIT_HASH_LEN + 1)

static int read_head(int fd, uint64_t *seq, char hash[RF_AUDIT_HASH_LEN + 1], rf_error **err)
{
    *seq = 0;
    memcpy(hash, zero_hash, sizeof zero_hash);
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n < 0)
        return rf_error_set(err, errno, "audit: read the head");
    if (n == 0)
        return 0;
    buf[n] = '\0';
    unsigned long long s;
    char h[RF_AUDIT_HASH_LEN + 1];
    if (sscanf(buf, "%llu %64s", &s, h) != 2 || strlen(h) != RF_AUDIT_HASH_LEN || !is_hex_hash(h))
        return rf_error_set(err, 0, "audit: the head file is damaged (%.40s)", buf);
    *seq = s;
    memcpy(hash, h, sizeof h);
    return 0;
}

static int write_head(int fd, uint64_t seq, const char *hash, rf_error **err)
{
    char buf[HEAD_LEN + 1];
    snprintf(buf, sizeof buf, "%020" PRIu64 " %s\n", seq, hash);
    /* 86 bytes at offset 0: within one sector, never seen half-written. */
    if (pwrite(fd, buf, HEAD_LEN, 0) != HEAD_LEN)
        return rf_error_set(err, errno ? errno : ENOSPC, "audit: write the head");
    return 0;
}

static size_t rotate_bytes(void)
{
#ifdef RF_TEST_HOOKS
    const char *v = getenv("RINGFENCE_TEST_AUDIT_ROTATE_BYTES"); /* tests/security/audit.sh */
    if (v && atol(v) > 0)
        return (size_t)atol(v);
#endif
    return RF_AUDIT_ROTATE_BYTES;
}

/* The log to append to, renamed aside first once it is large. */
static int open_log(int dirfd, uint64_t seq, rf_error **err)
{
    int fd = openat(dirfd, RF_AUDIT_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= rotate_bytes()) {
        char old[64];
        snprintf(old, sizeof old, RF_AUDIT_LOG ".%012" PRIu64, seq);
        close(fd);
        if (renameat(dirfd, RF_AUDIT_LOG, dirfd, old) < 0)
            return rf_error_set(err, errno, "audit: rotate the log to %s", old);
        fd = openat(dirfd, RF_AUDIT_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    return fd < 0 ? rf_error_set(err, errno, "audit: open " RF_AUDIT_LOG) : fd;
}

static int open_dir(const char *dir, rf_error **err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (slash && slash != parent) {
            *slash = '\0';
            (void)mkdir(parent, 0700); /* the instance root, on a first run */
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return rf_error_set(err, errno, "audit: create %s", dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0)
        return rf_error_set(err, errno, "audit: open %s", dir);
    return fd;
}

/* The record's text without the hash: seq, time, event, fields, prev. */
static char *record_text(uint64_t seq, const char *event, const json_t *fields, const char *prev)
{
    char now[32];
    rf_audit_now(now);
    json_t *o = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t)seq, "time", now, "event", event);
    const char *k;
    json_t *v;
    if (o && fields)
        json_object_foreach((json_t *)fields, k, v)
            if (strcmp(k, "seq") && strcmp(k, "time") && strcmp(k, "event") && strcmp(k, "prev") && strcmp(k, "hash"))
                json_object_set(o, k, v);
    if (o)
        json_object_set_new(o, "prev", json_string(prev));
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}

static int append_locked(int dirfd, int head, const char *event, const json_t *fields, bool journal,
                         char *ret_head, rf_error **err)
{
    uint64_t seq;
    char prev[RF_AUDIT_HASH_LEN + 1];
    if (read_head(head, &seq, prev, err) < 0)
        return -1;
    _cleanup_free_ char *text = record_text(seq + 1, event, fields, prev);
    if (!text)
        return rf_error_set(err, ENOMEM, "audit: record");
    char hash[RF_AUDIT_HASH_LEN + 1];
    size_t len = strlen(text);
    rf_sha256_hex(text, len, hash);
    _cleanup_free_ char *line = NULL;
    int n = asprintf(&line, "%.*s,\"hash\":\"%s\"}\n", (int)(len - 1), text, hash);
    if (n < 0)
        return rf_error_set(err, ENOMEM, "audit: record");
    _cleanup_close_ int fd = open_log(dirfd, seq, err);
    if (fd < 0)
        return -1;
    /* One write of an O_APPEND file: the record lands whole or not at all
     * (short only on a full disk, which verify then reports). */
    if (write(fd, line, (size_t)n) != n)
        return rf_error_set(err, errno ? errno : ENOSPC, "audit: append to " RF_AUDIT_LOG);
    if (write_head(head, seq + 1, hash, err) < 0)
        return -1;
    if (journal)
        rf_audit_journal(event, json_string_value(json_object_get(fields, "sandbox")), line, (size_t)n - 1, hash);
    if (ret_head)
        memcpy(ret_head, hash, sizeof hash);
    return 0;
}

int rf_audit_append(const char *dir, const char *event, const json_t *fields, char ret_head[RF_AUDIT_HASH_LEN + 1],
                    rf_error **err)
{
    return rf_audit_append_ex(dir, event, fields, true, ret_head, err);
}

int rf_audit_append_ex(const char *dir, const char *event, const json_t *fields, bool journal,
                       char ret_head[RF_AUDIT_HASH_LEN + 1], rf_error **err)
{
    _cleanup_close_ int dirfd = open_dir(dir, err);
    if (dirfd < 0)
        return -1;
    _cleanup_close_ int head = openat(dirfd, "head", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (head < 0)
        return rf_error_set(err, errno, "audit: open %s/head", dir);
    while (flock(head, LOCK_EX) < 0)
        if (errno != EINTR)
            return rf_error_set(err, errno, "audit: lock %s/head", dir);
    int rc = append_locked(dirfd, head, event, fields, journal, ret_head, err);
    if (rc < 0)
        rf_error_prefix(err, "%s", dir);
    return rc; /* the lock goes with the descriptor */
}
