/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file tools' internals, shared by fs.c (handle, patterns), resolve.c
 * (paths → fds), protect.c (protected_paths), read.c, write.c and list.c.
 *
 * Confinement rule: every object is opened by the kernel beneath ws_fd
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS). Only when that fails
 * with EXDEV, or when the path is lexically outside and some allow_* setting
 * could admit it, is the path opened on the host (O_PATH, no data access),
 * and then the canonical path of the object actually opened decides. */
#pragma once
#define PCRE2_CODE_UNIT_WIDTH 8
#include "ringfence.h"

#include <pcre2.h>
#include <stdbool.h>
#include <sys/stat.h>

#define RF_FS_MAX_PATH 4096      /* bytes, like PATH_MAX */
#define RF_FS_MAX_PATTERNS 256   /* per allow_* list */
#define RF_FS_MAX_PATTERN_LEN 1024
#define RF_FS_MAX_PROTECTED 256
#define RF_FS_MAX_HOPS 40        /* final-component symlinks followed, like the kernel */
#define RF_FS_MAX_NEW_DIRS 64    /* parent directories one write may create */
#define RF_FS_BINARY_PROBE 8192  /* NUL in the first 8 KiB → binary */

struct rf_fs {
    int ws_fd;           /* O_PATH | O_DIRECTORY of the workspace */
    char *ws;            /* its canonical absolute path */
    char *ws_given;      /* the path as configured, normalised (may hold symlinks) */
    bool restrict_ws;
    bool read_outside;
    pcre2_code **read_re, **write_re;
    size_t n_read_re, n_write_re;
    pcre2_match_context *mctx;
    char **protected_rel; /* normalised, workspace-relative */
    uint64_t max_read;
    bool no_tmpfile;     /* tests: force the named temp file path */
    char **disabled;     /* the policy's tools.disabled (rf_fs_open_for_policy) */
};

/* 0 when the policy this handle came from enables `tool` (read_file,
 * write_file, ...), else -1 with the refusal of policy/tools.c. */
int rf_fs_tool_enabled(const rf_fs *fs, const char *tool, rf_error **err);

typedef enum { RF_FS_READ, RF_FS_WRITE } rf_fs_access;

/* An object opened with O_PATH (final symlinks followed). */
typedef struct rf_fs_obj {
    int fd;
    char *canon;      /* canonical absolute path */
    struct stat st;
    bool beneath;     /* the kernel resolved it beneath ws_fd */
    bool lex_inside;  /* the path, read lexically, stays in the workspace */
} rf_fs_obj;

/* The parent directory of a write target, and the target's name in it. */
/* The parent directories a write created, so a failed write (a full disk)
 * removes them again: each as its parent's fd and its name. */
typedef struct rf_fs_made {
    int parent[RF_FS_MAX_NEW_DIRS];
    char *name[RF_FS_MAX_NEW_DIRS];
    int n;
} rf_fs_made;

typedef struct rf_fs_target {
    rf_fs_made *made; /* NULL until a parent is created */
    int dirfd;        /* O_RDONLY | O_DIRECTORY, so it can be fsync'd */
    char *dir_canon;
    char *base;
    char *canon;      /* dir_canon + "/" + base */
    bool exists;
    struct stat st;   /* of the existing target (not followed) */
} rf_fs_target;

/* fs.c: errors. Every file tool error exits RF_FS_EXIT_FAILED. */
int rf_fs_deny(rf_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rf_fs_fail(rf_error **err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map the errno of a failed open of `path` to a message naming it. */
int rf_fs_fail_open(rf_error **err, int errnum, const char *path);
bool rf_fs_match_any(const rf_fs *fs, pcre2_code *const *re, size_t n, const char *subject);

/* resolve.c */
long rf_fs_openat2(int dirfd, const char *path, int flags, uint64_t resolve);
int rf_fs_canonical(int fd, const char *hint, char **out, rf_error **err);
int rf_fs_open_object(rf_fs *fs, const char *path, rf_fs_access acc, rf_fs_obj *o, rf_error **err);
void rf_fs_obj_clear(rf_fs_obj *o);
/* May the object at canonical path canon be used for acc? beneath: the
 * kernel already confined it. Denies with the seed's message naming
 * user_path: "symlink resolves outside workspace" when the path, read
 * lexically, stayed inside (lex_inside), else "path is outside the workspace". */
int rf_fs_gate(const rf_fs *fs, bool beneath, bool lex_inside, const char *canon,
               rf_fs_access acc, const char *user_path, rf_error **err);
/* Open o again for I/O (flags: O_RDONLY, O_DIRECTORY...), checking that
 * the same inode was opened. */
int rf_fs_reopen(const rf_fs *fs, const rf_fs_obj *o, int flags, const char *user_path,
                 rf_error **err);
/* Resolve a write target: parent directory (created if create_parents),
 * final symlinks followed, gated for writing, protected paths checked. */
int rf_fs_target_open(rf_fs *fs, const char *path, bool create_parents, rf_fs_target *t,
                      rf_error **err);
void rf_fs_target_clear(rf_fs_target *t);
/* After a failed write: remove the parent directories rf_fs_target_open
 * created, newest first, each only if still empty. */
void rf_fs_target_undo_parents(rf_fs_target *t);

/* protect.c: refuse when canon (the object to write, or a directory to
 * create) is, or lies beneath, a protected path; dirfd (may be -1) and st
 * (may be NULL) add identity checks against hard links and bind mounts. */
int rf_fs_check_protected(rf_fs *fs, const char *canon, int dirfd, const struct stat *st,
                          const char *user_path, rf_error **err);

/* write.c, used by edit: replace t's target with data, atomically. When
 * expect is non-NULL the target must still be that inode, unchanged. */
int rf_fs_replace(rf_fs *fs, const rf_fs_target *t, const char *data, size_t len,
                  const struct stat *expect, const char *user_path, rf_error **err);
