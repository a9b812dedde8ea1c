/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scope-bound cleanup (the bubblewrap/systemd idiom): every owned fd,
 * allocation, FILE and DIR is released on every return path. Ownership is
 * handed over explicitly with steal_ptr() / take_fd(). */
#pragma once
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void rf_freep(void *p) { free(*(void **)p); }
static inline void rf_closep(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}
static inline void rf_fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void rf_closedirp(DIR **d) { if (*d) closedir(*d); }

#define _cleanup_free_ __attribute__((cleanup(rf_freep)))
#define _cleanup_close_ __attribute__((cleanup(rf_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(rf_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(rf_closedirp)))

#define steal_ptr(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
#define take_fd(fdp) ({ int _fd = *(fdp); *(fdp) = -1; _fd; })

#define RF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
