/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* read: a text file, whole or a range of lines, streamed so that reading
 * lines 10-20 of a large log needs neither the whole file in memory nor a
 * cap on the file's size, only on the text returned. */
#include "fs/fs-internal.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 65536

typedef struct lines {
    uint64_t first, last; /* 1-based, inclusive */
    uint64_t line;        /* line the next byte belongs to */
    uint64_t scanned;     /* bytes read so far */
    bool in_range_seen;   /* some byte of line `first` was read */
    bool ends_with_nl;
    char *buf;
    size_t len, cap;
    uint64_t max;
} lines;

static int append(lines *l, const char *p, size_t n, const char *path, rf_error **err)
{
    if (l->len + n > l->max) {
        rf_fs_fail(err, 0, "file too large: the text asked for from %s is more than max_read_bytes (%llu bytes)",
                   path, (unsigned long long)l->max);
        return rf_error_hint_set(err, "read fewer lines at a time (offset and limit count lines)");
    }
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n + 1)
            cap *= 2;
        char *nb = realloc(l->buf, cap);
        if (!nb)
            return rf_fs_fail(err, ENOMEM, "read %s", path);
        l->buf = nb;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, p, n);
    l->len += n;
    return 0;
}

/* Take the lines of one chunk that fall in range. Returns 1 once past it. */
static int take_chunk(lines *l, const char *p, size_t n, const char *path, rf_error **err)
{
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        if (l->line >= l->first) {
            l->in_range_seen = true;
            if (append(l, p, (size_t)(stop - p), path, err) < 0)
                return -1;
        }
        p = stop;
        if (nl && ++l->line > l->last)
            return 1;
    }
    l->ends_with_nl = n > 0 && end[-1] == '\n';
    return 0;
}

static int check_binary(lines *l, const char *p, size_t n, const char *path, rf_error **err)
{
    if (l->scanned >= RF_FS_BINARY_PROBE)
        return 0;
    size_t probe = RF_FS_BINARY_PROBE - l->scanned;
    if (memchr(p, '\0', n < probe ? n : probe)) {
        rf_fs_fail(err, 0, "file looks binary: %s has a NUL byte in its first 8 KiB", path);
        return rf_error_hint_set(err, "the file tools read text; inspect binary files with a command instead");
    }
    return 0;
}

static int read_lines(int fd, lines *l, const char *path, rf_error **err)
{
    _cleanup_free_ char *chunk = malloc(CHUNK);
    if (!chunk)
        return rf_fs_fail(err, ENOMEM, "read %s", path);
    for (;;) {
        ssize_t n = read(fd, chunk, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rf_fs_fail(err, errno, "cannot read %s", path);
        if (n == 0)
            return 0;
        if (check_binary(l, chunk, (size_t)n, path, err) < 0)
            return -1;
        l->scanned += (uint64_t)n;
        int r = take_chunk(l, chunk, (size_t)n, path, err);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
}

static int open_for_read(rf_fs *fs, const char *path, struct stat *st, rf_error **err)
{
    rf_fs_obj o;
    if (rf_fs_open_object(fs, path, RF_FS_READ, &o, err) < 0)
        return -1;
    int fd = -1;
    if (rf_fs_gate(fs, o.beneath, o.lex_inside, o.canon, RF_FS_READ, path, err) < 0) {
        /* denied */
    } else if (S_ISDIR(o.st.st_mode)) {
        rf_fs_fail(err, 0, "is a directory: %s", path);
        rf_error_hint_set(err, "list it instead");
    } else if (!S_ISREG(o.st.st_mode)) {
        rf_fs_fail(err, 0, "not a regular file: %s", path);
    } else {
        /* O_NONBLOCK: never hang on something swapped in since (a FIFO);
         * the reopen checks it is still the same inode anyway. */
        fd = rf_fs_reopen(fs, &o, O_RDONLY | O_NONBLOCK, path, err);
    }
    *st = o.st;
    rf_fs_obj_clear(&o);
    return fd;
}

RF_EXPORT int rf_fs_read(rf_fs *fs, const char *path, uint64_t offset, uint64_t limit, char **out,
                         size_t *out_len, rf_error **err)
{
    if (!fs || !out)
        return rf_fs_fail(err, EINVAL, "read");
    if (rf_fs_tool_enabled(fs, "read_file", err) < 0)
        return -1;
    struct stat st;
    _cleanup_close_ int fd = open_for_read(fs, path, &st, err);
    if (fd < 0)
        return -1;
    lines l = { .first = offset ? offset : 1, .line = 1, .max = fs->max_read };
    l.last = limit ? l.first + limit - 1 : UINT64_MAX;
    if (l.last < l.first) /* overflow: to the end */
        l.last = UINT64_MAX;
    if (l.first == 1 && !limit && (uint64_t)st.st_size > l.max) {
        rf_fs_fail(err, 0, "file too large: %s is %llu bytes, more than max_read_bytes (%llu)", path,
                   (unsigned long long)st.st_size, (unsigned long long)l.max);
        return rf_error_hint_set(err, "read part of it: offset is the first line (1-based), limit the number of lines");
    }
    if (read_lines(fd, &l, path, err) < 0) {
        free(l.buf);
        return -1;
    }
    if (l.first > 1 && !l.in_range_seen) {
        uint64_t total = l.line - 1 + (l.scanned && !l.ends_with_nl);
        free(l.buf);
        return rf_fs_fail(err, 0, "offset %llu is past the end of %s (%llu lines)", (unsigned long long)l.first,
                          path, (unsigned long long)total);
    }
    if (!l.buf && !(l.buf = calloc(1, 1)))
        return rf_fs_fail(err, ENOMEM, "read %s", path);
    l.buf[l.len] = '\0';
    *out = l.buf;
    if (out_len)
        *out_len = l.len;
    return 0;
}
