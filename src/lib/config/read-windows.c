/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading one configuration file into memory, Windows side (read-posix.c
 * is the POSIX one): the same cap and the same refusal of a link in place
 * of a workspace file. */
#include "config/config.h"
#include "util/wstr.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>

static int read_all(HANDLE h, const char *path, char **out, size_t *len, rf_error **err)
{
    char *buf = malloc(RF_CONFIG_MAX_FILE_BYTES + 2);
    if (!buf)
        return rf_error_set(err, ENOMEM, "reading %s", path);
    size_t n = 0;
    DWORD got = 0;
    /* Read to EOF, not to the size: the file may grow; the cap still holds. */
    while (n <= RF_CONFIG_MAX_FILE_BYTES &&
           ReadFile(h, buf + n, (DWORD)(RF_CONFIG_MAX_FILE_BYTES + 1 - n), &got, NULL) && got > 0)
        n += got;
    if (n > RF_CONFIG_MAX_FILE_BYTES) {
        free(buf);
        rf_error_set(err, 0, "configuration file %s is larger than 1 MiB", path);
        return rf_error_hint_set(err, "keep configuration files small; split large rule lists");
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int rf_config_read_file(const char *path, bool nofollow, char **out, size_t *len, rf_error **err)
{
    wchar_t *w = rf_win_wide(path);
    if (!w)
        return rf_error_set(err, 0, "configuration file %s: not valid UTF-8", path);
    /* With OPEN_REPARSE_POINT a link is opened as itself, so it can be
     * seen and refused instead of followed. */
    HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL | (nofollow ? FILE_FLAG_OPEN_REPARSE_POINT : 0), NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return rf_win_error(err, GetLastError(), "cannot read configuration file %s", path);
    BY_HANDLE_FILE_INFORMATION info;
    int r = 0;
    if (!GetFileInformationByHandle(h, &info))
        r = rf_win_error(err, GetLastError(), "cannot read configuration file %s", path);
    else if (nofollow && (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
        rf_error_set(err, 0, "workspace configuration file %s is a symbolic link", path);
        r = rf_error_hint_set(err, "replace the link with a regular file");
    } else if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
        r = rf_error_set(err, 0, "configuration file %s is not a regular file", path);
    else
        r = read_all(h, path, out, len, err);
    CloseHandle(h);
    return r;
}
