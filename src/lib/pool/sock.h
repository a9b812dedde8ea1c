/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pool server's socket file (serve.c): bound, known by its identity,
 * and checked to be still the one clients reach. A server whose path no
 * longer leads to its socket (removed, its directory removed, replaced by
 * another file or another server's socket) can never be reached again:
 * it stops (docs/pool.md). */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

typedef struct rf_pool_sock {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    dev_t dev;
    ino_t ino;
    /* The birth time, where the file system keeps one: ext4 hands a freed
     * inode number to the next file made, so a socket removed and another
     * made at the path can have the same st_ino a second later. */
    bool has_btime;
    int64_t btime_sec;
    uint32_t btime_nsec;
} rf_pool_sock;

typedef enum rf_pool_sock_state {
    RF_POOL_SOCK_OURS,        /* the path leads to our socket */
    RF_POOL_SOCK_UNKNOWN,     /* cannot tell (EACCES, EIO...): not a reason to stop */
    RF_POOL_SOCK_REMOVED,     /* nothing at the path */
    RF_POOL_SOCK_DIR_REMOVED, /* nor its directory */
    RF_POOL_SOCK_REPLACED,    /* another file, or another socket, is there */
} rf_pool_sock_state;

/* Bind and listen on path (0600; a stale socket nobody listens on is
 * replaced, a live one is not), its identity into *ret. Returns the
 * listening fd or -1 with *err naming the path and a hint. */
int rf_pool_sock_listen(const char *path, rf_pool_sock *ret, rf_error **err);
/* What the path leads to now. */
rf_pool_sock_state rf_pool_sock_check(const rf_pool_sock *s);
/* Whether a file's identity (from statx, mask as it returned) is ours. */
bool rf_pool_sock_same(const rf_pool_sock *s, dev_t dev, ino_t ino, bool has_btime, int64_t btime_sec,
                       uint32_t btime_nsec);
/* Remove the path only while it leads to our socket: never another
 * server's that took its place. */
void rf_pool_sock_remove(const rf_pool_sock *s);
/* Why a server in `state` stops, for *err (state past UNKNOWN). */
int rf_pool_sock_gone_error(const rf_pool_sock *s, rf_pool_sock_state state, rf_error **err);
