/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Overlay sessions (docs/changes.md), internal to libringfence.
 *
 *   <instance root>/sessions/ID/
 *       session.json   workspace, instance, when it began
 *       upper/         the overlay's upper layer: the command's changes
 *       work/          overlayfs' work directory
 *   ID/ itself is flock'd: exclusively by a running sandbox, apply and
 *   discard, so none of them sees a layer in use (a `lock` file inside,
 *   when a session of an older ringfence has one, or where a directory
 *   cannot be flock'd: session.c)
 *
 * Sessions live under the instance root, which no sandbox can reach (the
 * plan masks it), not in an instance's tree: that is bound writable into
 * its sandbox, and the record of when a session began must not be
 * forgeable by the command it watches. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#define RF_CHANGES_MAX_ENTRIES 2000000 /* a changeset larger than this is refused */
#define RF_CHANGES_MAX_DEPTH 256
#define RF_CHANGES_MAX_PATH 4096

struct rf_session {
    char *root;      /* the instance root */
    char *id;
    char *dir;       /* root/sessions/id */
    char *workspace; /* the real workspace: the lower layer */
    char *instance;  /* or NULL */
    struct timespec began; /* a real file changed at or after this is a conflict */
    double created;
};

struct rf_changeset {
    rf_change *v;
    size_t n, cap;
};

/* session.c */
bool rf_session_id_valid(const char *id);
/* A new id (12 hex digits from getrandom). */
int rf_session_new_id(char out[RF_SESSION_ID_MAX], rf_error **err);
/* root/sessions/id, malloc'd. */
char *rf_session_dir_path(const char *root, const char *id);
/* Create the session (or check the existing one belongs to `workspace`)
 * for a start: its directories, its record. The upper root stands in for
 * the workspace's own directory: its mode, and (a root caller) the owner
 * the sandbox sees that directory as, `owner`/`group`. */
int rf_session_prepare(const char *root, const char *id, const char *workspace, const char *instance,
                       uid_t owner, gid_t group, rf_error **err);
/* flock the session's lock exclusively; returns the fd or -1 with *err.
 * `wait`: a run waits for the one before it (an overlay is mounted by one
 * sandbox at a time: an MCP connection's exec calls queue here); apply
 * and discard do not wait, they fail "in use". */
int rf_session_lock(const char *dir, const char *id, bool wait, rf_error **err);
/* Open a directory of the session (upper) as O_RDONLY|O_DIRECTORY, not
 * following symlinks. */
int rf_session_open_upper(const rf_session *s, rf_error **err);
/* An instance's sessions live and die with it: remove those whose record
 * names `instance` (rf_instance_destroy). Best effort: a session in use is
 * left for its sandbox. */
void rf_sessions_remove_instance(const char *root, const char *instance);
/* Remove the tree `name` beneath dirfd, never following a symlink. */
int rf_changes_remove_tree(int dirfd, const char *name);

/* scan.c */
int rf_changes_scan(int upper_fd, int ws_fd, rf_changeset *cs, rf_error **err);
/* Is this upper entry overlayfs' whiteout (a deletion)? */
bool rf_changes_is_whiteout(const struct stat *st);
/* Open `rel` beneath dirfd without following any symlink; -1 with errno.
 * Readers pass O_NONBLOCK: a fifo swapped in for a file must not hang
 * them (its type is checked after the open). */
int rf_changes_open_beneath(int dirfd, const char *rel, int flags);

/* ids.c: the ids the sandbox's user namespace maps (two each: the
 * command's and the caller's, which may be the same). */
typedef struct rf_changes_ids {
    uid_t uid[2];
    gid_t gid[2];
} rf_changes_ids;
/* -1 with *err (the first file, the way out) when the command could
 * write a file of the workspace whose owner or group (or a directory's
 * above it) `ids` does not hold: overlayfs could not copy it up. A clean
 * walk is remembered for a minute in root/ids-clean (root may be NULL:
 * always walk). */
int rf_changes_check_ids(const char *root, const char *workspace, const rf_changes_ids *ids, rf_error **err);

/* diff.c: a unified diff of two texts (3 lines of context) appended to
 * *out (a malloc'd, growing string of *len bytes). flags: RF_DIFF_COLOR,
 * RF_DIFF_VISIBLE (each line's control characters shown, util/printable.h;
 * *controls, when not NULL, grows by how many). */
int rf_changes_text_diff(const char *a, size_t alen, const char *b, size_t blen, unsigned flags, char **out,
                         size_t *len, size_t *ins, size_t *del, size_t *controls);

/* Append printf-formatted text to a growing string. */
int rf_changes_appendf(char **out, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
