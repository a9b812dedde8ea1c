/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/unix.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rf_unix_addr(const char *path, struct sockaddr_un *sa)
{
    size_t len = strlen(path);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (len >= sizeof sa->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(sa->sun_path, path, len + 1);
    return 0;
}

int rf_unix_connect(const char *path, int type)
{
    struct sockaddr_un sa;
    if (rf_unix_addr(path, &sa) < 0)
        return -1;
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
