/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/memfd.h"
#include "util/io.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int rf_memfd_with(const char *name, const void *data, size_t len)
{
    int fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (rf_write_all(fd, data, len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (lseek(fd, 0, SEEK_SET) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
