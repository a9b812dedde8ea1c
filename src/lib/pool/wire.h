/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The request of `run --via` on the pool's socket (see serve.c):
 *   "RFP1", the policy key, cwd, argv[0..]: each NUL-terminated,
 * with the client's fds 0, 1 and 2 attached (SCM_RIGHTS); or, when some
 * streams are to be a pty inside (docs/terminal.md),
 *   "RFP2", one byte of streams (bit i: stream i is the pty), the window
 *   size as 4 little-endian uint16 (rows, cols, xpixel, ypixel), the
 *   client's TERM (NUL-terminated, "" for none: a pty's user's terminal
 *   type, not the server's), then as RFP1, with only the other streams'
 *   descriptors attached, in order.
 * A pty-less request stays RFP1, which older servers read too; an older
 * server refuses RFP2 as malformed rather than run without the pty.
 * Apart so the parser of what another process sends can be fuzzed on its
 * own. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define RF_POOL_REQ_MAX 65536
#define RF_POOL_REQ_MAX_ARGS 1024

#define RF_POOL_TERM_MAX 64

/* What RFP2 adds. */
typedef struct rf_pool_wire_tty {
    unsigned streams;    /* bit i: stream i is the pty; 0: none (RFP1) */
    struct winsize size; /* the client's window */
    const char *term;    /* TERM: letters, digits, "._+-", at most
                            RF_POOL_TERM_MAX; "" for none */
} rf_pool_wire_tty;

typedef struct rf_pool_wire_request {
    const char *key;
    const char *cwd;
    rf_pool_wire_tty tty;  /* streams 0 for an RFP1 request */
    char *argv[RF_POOL_REQ_MAX_ARGS + 1]; /* NULL-terminated; point into the buffer */
} rf_pool_wire_request;

/* TERM is one the server takes (see rf_pool_wire_tty). */
bool rf_pool_wire_term_ok(const char *term);
/* The request as bytes (malloc'd, *len set), or NULL with errno: E2BIG
 * when it would not fit RF_POOL_REQ_MAX or has too many arguments, EINVAL
 * for a TERM the server would refuse. tty NULL or its streams 0 make an
 * RFP1 request. */
char *rf_pool_wire_encode(const char *key, const char *cwd, char *const argv[], const rf_pool_wire_tty *tty,
                          size_t *len);
/* Split buf[0..n) in place into req; -1 (EPROTO) unless it is a whole,
 * well-formed request with at least one argument (RFP2: streams a
 * non-empty subset of 0, 1, 2, and a TERM as above). */
int rf_pool_wire_parse(char *buf, size_t n, rf_pool_wire_request *req);
/* How many descriptors a request with these pty streams carries. */
int rf_pool_wire_nfds(unsigned pty_streams);
/* Take the descriptors a received message carries: in order into the
 * slots of fds whose stream is not the pty (bit i of pty_streams), the
 * other slots set to -1; every descriptor beyond those closed, so a
 * malformed message can never leave one behind. Returns how many it
 * carried: a request is well-formed only when that is
 * rf_pool_wire_nfds(pty_streams). */
int rf_pool_wire_take_fds(struct msghdr *mh, unsigned pty_streams, int fds[3]);
