/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "RFP1"

char *rf_pool_wire_encode(const char *key, const char *cwd, char *const argv[], size_t *len)
{
    size_t n = 4 + strlen(key) + 1 + strlen(cwd) + 1, argc = 0;
    for (; argv[argc]; argc++)
        n += strlen(argv[argc]) + 1;
    if (n > RF_POOL_REQ_MAX || argc > RF_POOL_REQ_MAX_ARGS) {
        errno = E2BIG;
        return NULL;
    }
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    memcpy(p, MAGIC, 4);
    p = stpcpy(p + 4, key) + 1;
    p = stpcpy(p, cwd) + 1;
    for (size_t i = 0; i < argc; i++)
        p = stpcpy(p, argv[i]) + 1;
    *len = n;
    return buf;
}

int rf_pool_wire_parse(char *buf, size_t n, rf_pool_wire_request *req)
{
    /* The last byte is a NUL, so every strlen below stops inside buf. */
    if (n < 4 || n > RF_POOL_REQ_MAX || memcmp(buf, MAGIC, 4) != 0 || buf[n - 1] != '\0')
        goto bad;
    char *p = buf + 4, *end = buf + n;
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

int rf_pool_wire_take_fds(struct msghdr *mh, int fds[3])
{
    int count = 0;
    fds[0] = fds[1] = fds[2] = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++, count++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            if (count < 3)
                fds[count] = fd;
            else
                close(fd);
        }
    }
    return count;
}
