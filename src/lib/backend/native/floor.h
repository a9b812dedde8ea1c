/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The oldest kernel the native backend runs on: the system calls it builds
 * a sandbox with, each with the Linux release that brought it. Checked
 * before anything is made, so a kernel below the floor is refused at once
 * with the missing call's name, not midway through setup. */
#pragma once
#include "util/error.h"

#include <stdbool.h>

typedef struct rf_kernel_call {
    const char *name;   /* "mount_setattr" */
    long nr;            /* its number on this architecture */
    unsigned major, minor; /* the release that has it */
    const char *why;    /* what the native backend does with it */
} rf_kernel_call;

/* probe(call): does the running kernel answer it with anything but ENOSYS? */
typedef bool (*rf_kernel_probe_fn)(const rf_kernel_call *call);

/* The first of the native backend's calls that probe finds missing, or
 * NULL; the table runs from the oldest release to the newest. */
const rf_kernel_call *rf_native_floor_missing(rf_kernel_probe_fn probe);

/* Fill *err for `call` missing on a kernel of `release` (uname -r): a kernel
 * below the call's release lacks it; one at or above it has it, so a
 * seccomp filter around ringfence refuses it (a container's). Returns -1. */
int rf_native_floor_error(const rf_kernel_call *call, const char *release, rf_error **err);

/* rf_native_floor_missing with the real kernel, then rf_native_floor_error. */
int rf_native_floor_check(rf_error **err);
