/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/wire.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "RFP1"
#define MAGIC_PTY "RFP2"
#define PTY_HEAD 9 /* streams, then rows, cols, xpixel, ypixel */

static void put16(char *p, unsigned short v)
{
    p[0] = (char)(v & 0xff);
    p[1] = (char)(v >> 8);
}

static unsigned short get16(const char *p)
{
    return (unsigned short)((unsigned char)p[0] | (unsigned char)p[1] << 8);
}

/* A TERM names a terminfo entry: nothing else may pass (no '=', no
 * control bytes, no path). */
bool rf_pool_wire_term_ok(const char *t)
{
    size_t n = strlen(t);
    return n <= RF_POOL_TERM_MAX && strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") == n;
}

char *rf_pool_wire_encode(const char *key, const char *cwd, char *const argv[], const rf_pool_wire_tty *tty,
                          size_t *len)
{
    bool pty = tty && tty->streams;
    const char *term = pty && tty->term ? tty->term : "";
    if (pty && (tty->streams > 7 || !rf_pool_wire_term_ok(term))) {
        errno = EINVAL;
        return NULL;
    }
    size_t head = pty ? 4 + PTY_HEAD + strlen(term) + 1 : 4;
    size_t n = head + strlen(key) + 1 + strlen(cwd) + 1, argc = 0;
    for (; argv[argc]; argc++)
        n += strlen(argv[argc]) + 1;
    if (n > RF_POOL_REQ_MAX || argc > RF_POOL_REQ_MAX_ARGS) {
        errno = E2BIG;
        return NULL;
    }
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    memcpy(p, pty ? MAGIC_PTY : MAGIC, 4);
    if (pty) {
        p[4] = (char)tty->streams;
        put16(p + 5, tty->size.ws_row);
        put16(p + 7, tty->size.ws_col);
        put16(p + 9, tty->size.ws_xpixel);
        put16(p + 11, tty->size.ws_ypixel);
        strcpy(p + 4 + PTY_HEAD, term);
    }
    p = stpcpy(p + head, key) + 1;
    p = stpcpy(p, cwd) + 1;
    for (size_t i = 0; i < argc; i++)
        p = stpcpy(p, argv[i]) + 1;
    *len = n;
    return buf;
}

/* RFP2's head: which streams are the pty (some of 0, 1, 2, at least one),
 * the window size, any 16-bit values (the kernel takes them as is), and
 * TERM. Returns its length, or -1. The buffer ends with a NUL (checked by
 * the caller), so strlen stops inside it. */
static ssize_t parse_pty_head(const char *p, size_t n, rf_pool_wire_tty *tty)
{
    if (n < PTY_HEAD + 1)
        return -1;
    unsigned streams = (unsigned char)p[0];
    if (streams == 0 || streams > 7)
        return -1;
    tty->streams = streams;
    tty->size = (struct winsize){ .ws_row = get16(p + 1), .ws_col = get16(p + 3), .ws_xpixel = get16(p + 5),
                                  .ws_ypixel = get16(p + 7) };
    tty->term = p + PTY_HEAD;
    if (!rf_pool_wire_term_ok(tty->term))
        return -1;
    return (ssize_t)(PTY_HEAD + strlen(tty->term) + 1);
}

int rf_pool_wire_parse(char *buf, size_t n, rf_pool_wire_request *req)
{
    /* The last byte is a NUL, so every strlen below stops inside buf. */
    if (n < 4 || n > RF_POOL_REQ_MAX || buf[n - 1] != '\0')
        goto bad;
    char *p = buf + 4, *end = buf + n;
    req->tty = (rf_pool_wire_tty){ .term = "" };
    if (!memcmp(buf, MAGIC_PTY, 4)) {
        ssize_t head = parse_pty_head(p, n - 4, &req->tty);
        if (head < 0)
            goto bad;
        p += head;
    } else if (memcmp(buf, MAGIC, 4) != 0) {
        goto bad;
    }
    const char **head[] = { &req->key, &req->cwd };
    for (size_t i = 0; i < 2; i++) {
        if (p >= end)
            goto bad;
        *head[i] = p;
        p += strlen(p) + 1;
    }
    size_t argc = 0;
    while (p < end) {
        if (argc == RF_POOL_REQ_MAX_ARGS)
            goto bad; /* never cut a command short: refuse it */
        req->argv[argc++] = p;
        p += strlen(p) + 1;
    }
    req->argv[argc] = NULL;
    if (argc == 0 || !*req->argv[0])
        goto bad;
    return 0;
bad:
    errno = EPROTO;
    return -1;
}

int rf_pool_wire_nfds(unsigned pty_streams)
{
    int n = 0;
    for (int i = 0; i < 3; i++)
        n += !(pty_streams & (1u << i));
    return n;
}

int rf_pool_wire_take_fds(struct msghdr *mh, unsigned pty_streams, int fds[3])
{
    int count = 0, slot = 0;
    fds[0] = fds[1] = fds[2] = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++, count++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            while (slot < 3 && (pty_streams & (1u << slot)))
                slot++;
            if (slot < 3)
                fds[slot++] = fd;
            else
                close(fd);
        }
    }
    return count;
}
