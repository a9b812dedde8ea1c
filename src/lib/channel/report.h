/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The channel between the caller and the sandbox: one SOCK_SEQPACKET pair.
 * Child → caller: a setup failure as {step, errno, detail}, an exec
 * failure, and at the end the command's wait status (so the caller can
 * tell "exited 130" from "killed by SIGINT"). Caller → child: "go" once
 * the id maps are written, "terminate" to stop the whole tree, and "kill"
 * to end it at once (landlock and none backends). */
#pragma once
#include <stddef.h>

enum rf_msg_type {
    RF_MSG_GO = 1,          /* caller → child: maps written, start */
    RF_MSG_TERMINATE,       /* caller → init: SIGTERM every process */
    RF_MSG_SETUP_ERROR,     /* child → caller: a setup step failed */
    RF_MSG_EXEC_ERROR,      /* command → caller: execve failed */
    RF_MSG_EXIT,            /* init → caller: the command's wait status */
    RF_MSG_KILL,            /* caller → init: SIGKILL the whole tree (subreaper
                               backends, where killing init alone would not) */
    RF_MSG_RUN,             /* caller → init of a deferred sandbox: the command
                               (backend/native/deferred.c; its own format) */
    RF_MSG_PTY,             /* child → caller: the master of the command's pty,
                               made in the sandbox's devpts (SCM_RIGHTS; tty/) */
    RF_MSG_OBSERVE,         /* child → caller: the observer's seccomp listener
                               (SCM_RIGHTS; observe/) */
};

struct rf_msg {
    int type;
    int errnum;
    int status;          /* RF_MSG_EXIT: wait status */
    long long utime_us, stime_us, maxrss_kb; /* RF_MSG_EXIT: the tree's rusage */
    char step[48];       /* e.g. "mount", "pivot_root" */
    char detail[400];    /* the path, setting or value involved */
};

/* Async-signal-safe: used after clone. Return 0 or -1. */
int rf_msg_send(int fd, int type, int errnum, const char *step, const char *detail);
/* RF_MSG_EXIT, sent by init once every process of the tree is gone: the
 * command's wait status and the tree's resource usage (ru may be NULL). */
struct rusage;
int rf_msg_send_status(int fd, int status, const struct rusage *ru);
/* Blocking receive of one message; returns 1, 0 on EOF, -1 on error. */
int rf_msg_recv(int fd, struct rf_msg *msg);
/* The same, and the descriptor the message carried in *ret_fd (-1: none;
 * close-on-exec). */
int rf_msg_recv_with_fd(int fd, struct rf_msg *msg, int *ret_fd);
/* Pass one descriptor (SCM_RIGHTS). recv returns it (close-on-exec) or -1
 * (EOF: errno untouched... check the return). Async-signal-safe send. */
int rf_msg_send_fd(int chan, int fd);
/* data plus 0..3 descriptors in one message (no allocation). */
int rf_msg_send_with_fds(int sock, const void *data, size_t len, const int *fds, size_t nfds);
int rf_msg_recv_fd(int chan);
