/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The request of `run --via` on the pool's socket (see serve.c):
 *   "RFP1", the policy key, cwd, argv[0..]: each NUL-terminated,
 * with the client's fds 0, 1 and 2 attached (SCM_RIGHTS). Apart so the
 * parser of what another process sends can be fuzzed on its own. */
#pragma once
#include <stddef.h>
#include <sys/socket.h>

#define RF_POOL_REQ_MAX 65536
#define RF_POOL_REQ_MAX_ARGS 1024

typedef struct rf_pool_wire_request {
    const char *key;
    const char *cwd;
    char *argv[RF_POOL_REQ_MAX_ARGS + 1]; /* NULL-terminated; point into the buffer */
} rf_pool_wire_request;

/* The request as bytes (malloc'd, *len set), or NULL with errno: E2BIG
 * when it would not fit RF_POOL_REQ_MAX or has too many arguments. */
char *rf_pool_wire_encode(const char *key, const char *cwd, char *const argv[], size_t *len);
/* Split buf[0..n) in place into req; -1 (EPROTO) unless it is a whole,
 * well-formed request with at least one argument. */
int rf_pool_wire_parse(char *buf, size_t n, rf_pool_wire_request *req);
/* Take the descriptors a received message carries: the first three into
 * fds (the rest set to -1), every other one closed, so a malformed message
 * can never leave a descriptor behind. Returns how many it carried. */
int rf_pool_wire_take_fds(struct msghdr *mh, int fds[3]);
