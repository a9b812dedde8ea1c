/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the audit trail back, oldest first, and checking its chain. */
#include "audit/audit.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* audit.log.<12 digits> sorted (oldest first), then audit.log. */
static char **log_files(const char *dir, rf_error **err)
{
    _cleanup_closedir_ DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return calloc(1, sizeof(char *));
        rf_error_set(err, errno, "audit: open %s", dir);
        return NULL;
    }
    char **names = calloc(1, sizeof(char *));
    bool current = false;
    struct dirent *e;
    size_t n = 0;
    while (names && (e = readdir(d))) {
        size_t pre = strlen(RF_AUDIT_LOG ".");
        if (!strcmp(e->d_name, RF_AUDIT_LOG))
            current = true;
        else if (!strncmp(e->d_name, RF_AUDIT_LOG ".", pre) && strlen(e->d_name) == pre + 12 &&
                 strspn(e->d_name + pre, "0123456789") == 12 && rf_strv_push(&names, e->d_name) == 0)
            n++;
    }
    if (names)
        qsort(names, n, sizeof *names, cmp_str);
    if (names && current && rf_strv_push(&names, RF_AUDIT_LOG) < 0) {
        rf_strv_free(names);
        names = NULL;
    }
    if (!names)
        rf_error_set(err, ENOMEM, "audit");
    return names;
}

static int read_file(const char *dir, const char *name, rf_audit_visit_fn fn, void *ud, rf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0)
        return rf_error_set(err, ENOMEM, "audit");
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    _cleanup_fclose_ FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, errno, "audit: open %s", path);
    }
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if ((size_t)n > RF_AUDIT_MAX_LINE)
            line[RF_AUDIT_MAX_LINE] = '\0';
        json_t *rec = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        int rc = fn(ud, rec, line);
        json_decref(rec);
        if (rc < 0)
            return 1; /* stopped */
    }
    return 0;
}

int rf_audit_read(const char *dir, rf_audit_visit_fn fn, void *ud, rf_error **err)
{
    char **files = log_files(dir, err);
    if (!files)
        return -1;
    int rc = 0;
    for (size_t i = 0; files[i] && rc == 0; i++)
        rc = read_file(dir, files[i], fn, ud, err);
    rf_strv_free(files);
    return rc < 0 ? -1 : 0;
}

typedef struct verify_state {
    rf_audit_check *out;
    uint64_t seq;
    char prev[RF_AUDIT_HASH_LEN + 1];
} verify_state;

/* "record N: what"; -1 to stop reading. */
static int bad(verify_state *v, uint64_t n, const char *what)
{
    v->out->intact = false;
    snprintf(v->out->problem, sizeof v->out->problem, "record %" PRIu64 ": %s", n, what);
    return -1;
}

static int verify_one(void *ud, const json_t *rec, const char *line)
{
    verify_state *v = ud;
    uint64_t at = v->seq + 1; /* what this record should be */
    json_int_t seq = json_integer_value(json_object_get(rec, "seq"));
    const char *prev = json_string_value(json_object_get(rec, "prev"));
    const char *hash = json_string_value(json_object_get(rec, "hash"));
    if (!rec || !prev || !hash || seq <= 0)
        return bad(v, at, "not a record (damaged, or a line inserted)");
    if (!rf_audit_line_ok(line, strlen(line)))
        return bad(v, (uint64_t)seq, "its hash does not match its contents (edited)");
    if (v->out->records == 0) {
        v->out->first_seq = (uint64_t)seq; /* the oldest kept: its prev is taken as given */
    } else if ((uint64_t)seq != at || strcmp(prev, v->prev)) {
        if ((uint64_t)seq > at) {
            char what[96];
            snprintf(what, sizeof what, "is missing (removed, or moved: record %" PRIu64 " comes next)", (uint64_t)seq);
            return bad(v, at, what);
        }
        return bad(v, (uint64_t)seq,
                   "does not follow the record before it (removed, reordered or copied)");
    }
    v->seq = (uint64_t)seq;
    snprintf(v->prev, sizeof v->prev, "%s", hash);
    v->out->records++;
    return 0;
}

static int read_head_text(const char *dir, uint64_t *seq, char *hash)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/head", dir) < 0)
        return -1;
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    unsigned long long s;
    if (!f || fscanf(f, "%llu %64s", &s, hash) != 2) /* empty: the chain never started */
        return -1;
    *seq = s;
    return 0;
}

int rf_audit_verify(const char *dir, rf_audit_check *out, rf_error **err)
{
    memset(out, 0, sizeof *out);
    out->intact = true;
    verify_state v = { .out = out };
    if (rf_audit_read(dir, verify_one, &v, err) < 0)
        return -1;
    snprintf(out->head, sizeof out->head, "%s", v.prev);
    if (!out->intact)
        return 0;
    uint64_t hseq = 0;
    char hhash[RF_AUDIT_HASH_LEN + 1] = "";
    bool have_head = read_head_text(dir, &hseq, hhash) == 0;
    if (!have_head && out->records == 0)
        return 0; /* nothing written yet */
    out->intact = false;
    if (!have_head)
        snprintf(out->problem, sizeof out->problem, "the head (%s/head) is missing or damaged", dir);
    else if (hseq > v.seq)
        snprintf(out->problem, sizeof out->problem,
                 "record %" PRIu64 ": is missing (the log ends at record %" PRIu64 ", the head is record %" PRIu64
                 ": records removed from the end)", v.seq + 1, v.seq, hseq);
    else if (hseq < v.seq)
        snprintf(out->problem, sizeof out->problem,
                 "record %" PRIu64 ": comes after the head (record %" PRIu64 "): appended by something else, or a "
                 "run died between the two writes", hseq + 1, hseq);
    else if (strcmp(hhash, v.prev))
        snprintf(out->problem, sizeof out->problem,
                 "record %" PRIu64 ": is not the one the head names (replaced)", v.seq);
    else
        out->intact = true;
    return 0;
}
