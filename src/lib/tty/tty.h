/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A terminal of the command's own: a pseudo-terminal made inside the
 * sandbox (pty.c, in the setup child and the command's process) and the
 * relay between its master and the caller's terminal (relay.c, in the
 * caller, driven by rf_proc_wait). The command never holds a descriptor of
 * the caller's terminal, so TIOCSTI and TIOCLINUX into it are impossible
 * by construction, whatever the seccomp profile. Internal to libringfence. */
#pragma once
#include "ringfence.h"

#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>

/* Which of the command's streams are the pty: bit i for stream i (0 when
 * stdio is NULL or has no RF_STDIO_PTY). */
unsigned rf_tty_streams(const rf_stdio *stdio);

/* ── Inside (pty.c): no allocation, async-signal-safe ── */
/* A pty pair from the devpts of the current root (/dev/ptmx, after
 * pivot_root), window size ws (NULL: left at 0x0). The slave is opened
 * through the master (TIOCGPTPEER), never by a path the sandbox could
 * swap. Both close-on-exec. 0, or -1 with errno. */
int rf_pty_open(const struct winsize *ws, int *ret_master, int *ret_slave);
/* In the command's process, before exec: a session of its own with the
 * slave as its controlling terminal, the slave on the streams of `streams`
 * (the other streams keep what they have). 0, or -1 with errno. */
int rf_pty_take(int slave, unsigned streams);

/* ── Outside (relay.c) ── */
typedef struct rf_tty rf_tty;
/* The relay for `streams`: input from the caller's fd 0 (when stream 0 is
 * the pty), output to fd 1 (stream 1 is the pty), else fd 2 (stream 2),
 * else dropped. Nothing is changed until rf_tty_attach. */
rf_tty *rf_tty_new(unsigned streams, rf_error **err);
/* Instead of the caller's fd 0 and 1 (rf_tty_new): input read from `in`
 * (a pipe; -1: none), output handed to out(ud, bytes, n), which takes all
 * of it at once (it keeps or counts it), window size `size`. For a caller
 * whose own stdio is not the user's (the MCP server: its stdio is the MCP
 * stream). No raw mode, no SIGWINCH; `in` stays the caller's to close. */
typedef struct rf_tty_sink {
    int in;
    void (*out)(void *ud, const char *buf, size_t n);
    void *ud;
    struct winsize size;
} rf_tty_sink;
rf_tty *rf_tty_new_sink(unsigned streams, const rf_tty_sink *sink, rf_error **err);
/* The caller's window size for the pty's start (0x0 without a terminal). */
void rf_tty_size(const rf_tty *t, struct winsize *ws);
/* The master arrived: take it, put the caller's terminal in raw mode, follow
 * SIGWINCH. 0, or -1 with errno (master closed). */
int rf_tty_attach(rf_tty *t, int master);
bool rf_tty_attached(const rf_tty *t);
/* Poll entries for the relay, RF_TTY_NFDS of them (fd -1: none). */
#define RF_TTY_NFDS 4
void rf_tty_pollfds(const rf_tty *t, struct pollfd *pfd);
void rf_tty_serve(rf_tty *t, const struct pollfd *pfd);
/* While held, no relay reads the caller's terminal (a question of the
 * proxy is reading it: net/ask_tty.c). Calls nest. */
void rf_tty_hold_input(bool hold);
/* Is `t` relaying the caller's own terminal (not a sink, not a pipe)? */
bool rf_tty_on_callers_terminal(const rf_tty *t);
/* The command's tree is gone: relay what is left of its output, flush,
 * and give the caller's terminal back as it was. */
void rf_tty_finish(rf_tty *t);
/* rf_tty_finish's restore without the relay (errors, rf_proc_free), and
 * free. NULL is fine. */
void rf_tty_free(rf_tty *t);
