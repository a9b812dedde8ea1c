/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "channel/report.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* No stdio here: this runs in the child between clone and exec. */
static void copy_bounded(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

int rf_msg_send(int fd, int type, int errnum, const char *step, const char *detail)
{
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.errnum = errnum;
    copy_bounded(m.step, sizeof m.step, step);
    copy_bounded(m.detail, sizeof m.detail, detail);
    ssize_t n;
    do
        n = send(fd, &m, sizeof m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof m ? 0 : -1;
}

int rf_msg_send_status(int fd, int status, const struct rusage *ru)
{
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = RF_MSG_EXIT;
    m.status = status;
    if (ru) {
        m.utime_us = (long long)ru->ru_utime.tv_sec * 1000000 + ru->ru_utime.tv_usec;
        m.stime_us = (long long)ru->ru_stime.tv_sec * 1000000 + ru->ru_stime.tv_usec;
        m.maxrss_kb = ru->ru_maxrss;
    }
    ssize_t n;
    do
        n = send(fd, &m, sizeof m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof m ? 0 : -1;
}

int rf_msg_recv(int fd, struct rf_msg *msg)
{
    return rf_msg_recv_with_fd(fd, msg, NULL);
}

/* A message may carry one descriptor (RF_MSG_PTY: the pty's master). Any
 * other, or one nobody asked for, is closed: it must not leak into the
 * caller. */
int rf_msg_recv_with_fd(int fd, struct rf_msg *msg, int *ret_fd)
{
    struct iovec iov = { .iov_base = msg, .iov_len = sizeof *msg };
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    int passed = -1;
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfds; i++) {
            int one;
            memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
            if (passed < 0 && ret_fd)
                passed = one;
            else
                close(one);
        }
    }
    if (n == 0)
        return 0;
    if (n != (ssize_t)sizeof *msg) {
        if (passed >= 0)
            close(passed);
        return -1;
    }
    msg->step[sizeof msg->step - 1] = '\0';
    msg->detail[sizeof msg->detail - 1] = '\0';
    if (ret_fd)
        *ret_fd = passed;
    return 1;
}

/* data plus up to 3 descriptors (SCM_RIGHTS) in one message; no
 * allocation, so the sandbox's child may call it. Returns 0 or -1. */
int rf_msg_send_with_fds(int sock, const void *data, size_t len, const int *fds, size_t nfds)
{
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    if (nfds > 3) {
        errno = EINVAL;
        return -1;
    }
    memset(&u, 0, sizeof u);
    struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = nfds ? u.buf : NULL,
                         .msg_controllen = nfds ? CMSG_SPACE(nfds * sizeof(int)) : 0 };
    if (nfds) {
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

/* One descriptor over a SOCK_SEQPACKET channel, with a one-byte body. */
int rf_msg_send_fd(int chan, int fd)
{
    return rf_msg_send_with_fds(chan, "F", 1, &fd, 1);
}

int rf_msg_recv_fd(int chan)
{
    char byte;
    struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    ssize_t n;
    do
        n = recvmsg(chan, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)) ||
        (mh.msg_flags & MSG_CTRUNC)) {
        errno = EPROTO;
        return -1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}
