/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading one configuration file into memory, POSIX side (the Windows
 * build has its own in read-windows.c): the only part of the config stage
 * that touches the file system. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int rf_config_read_file(const char *path, bool nofollow, char **out, size_t *len, rf_error **err)
{
    /* A workspace file is the confined agent's: it must not be a symlink
     * that points ringfence (maybe root) at a file the agent cannot read. */
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                                            (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0 && errno == ELOOP && nofollow) {
        rf_error_set(err, 0, "workspace configuration file %s is a symbolic link", path);
        return rf_error_hint_set(err, "replace the link with a regular file");
    }
    if (fd < 0)
        return rf_error_set(err, errno, "cannot read configuration file %s", path);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return rf_error_set(err, errno, "cannot read configuration file %s", path);
    if (!S_ISREG(st.st_mode))
        return rf_error_set(err, 0, "configuration file %s is not a regular file", path);
    if (st.st_size > RF_CONFIG_MAX_FILE_BYTES) {
        rf_error_set(err, 0, "configuration file %s is larger than 1 MiB", path);
        return rf_error_hint_set(err, "keep configuration files small; split large rule lists");
    }
    /* Read to EOF, not to st_size: the file may grow; the cap still holds. */
    _cleanup_free_ char *buf = malloc(RF_CONFIG_MAX_FILE_BYTES + 2);
    if (!buf)
        return rf_error_set(err, ENOMEM, "reading %s", path);
    size_t n = 0;
    while (n <= RF_CONFIG_MAX_FILE_BYTES) {
        ssize_t r = read(fd, buf + n, RF_CONFIG_MAX_FILE_BYTES + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return rf_error_set(err, errno, "cannot read configuration file %s", path);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > RF_CONFIG_MAX_FILE_BYTES)
        return rf_error_set(err, 0, "configuration file %s is larger than 1 MiB", path);
    buf[n] = '\0';
    *out = steal_ptr(&buf);
    *len = n;
    return 0;
}
