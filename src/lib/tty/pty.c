/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pty inside: made in the setup child, after pivot_root, from the
 * sandbox's own devpts instance (plan_mounts.c mounts /dev/pts with
 * newinstance and links /dev/ptmx to pts/ptmx), so its slave is one of the
 * sandbox's /dev/pts/N and the host's devpts is never touched. */
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

unsigned rf_tty_streams(const rf_stdio *stdio)
{
    if (!stdio)
        return 0;
    return (stdio->in_fd == RF_STDIO_PTY ? 1u : 0u) | (stdio->out_fd == RF_STDIO_PTY ? 2u : 0u) |
           (stdio->err_fd == RF_STDIO_PTY ? 4u : 0u);
}

int rf_pty_open(const struct winsize *ws, int *ret_master, int *ret_slave)
{
    int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        return -1;
    int unlock = 0;
    int slave = -1;
    if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || (ws && ioctl(master, TIOCSWINSZ, ws) < 0) ||
        (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
        int e = errno;
        close(master);
        errno = e;
        return -1;
    }
    *ret_master = master;
    *ret_slave = slave;
    return 0;
}

int rf_pty_take(int slave, unsigned streams)
{
    /* The command's process is init's child, not a group leader: setsid
     * works, and the slave becomes the new session's terminal. */
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if ((streams & (1u << i)) && dup2(slave, i) < 0)
            return -1;
    return 0;
}
