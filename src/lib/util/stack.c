/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Giving back the stack pages below the caller's frame: a process that
 * ran deep (a sandbox's setup, the CLI's policy and plan) and then only
 * waits, a thousand of them at once, keeps those pages dirty for nothing.
 * System calls only, no allocation: safe in the setup child. */
#include "util/stack.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static bool contains(uintptr_t start, uintptr_t end, uintptr_t addr)
{
    return addr >= start && addr < end;
}

/* The start of the mapping holding addr, from /proc/self/maps read with
 * raw system calls and a state machine over its bytes (this runs in the
 * setup child: no stdio, no allocation); 0 if it cannot be read. */
static uintptr_t mapping_start(uintptr_t addr)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[1024];
    uintptr_t start = 0, end = 0, found = 0;
    int field = 0; /* 0: the start, 1: the end, 2: the rest of the line */
    ssize_t n;
    while (!found && (n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n && !found; i++) {
            char ch = buf[i];
            int digit = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (ch == '\n') {
                field = 0;
                start = end = 0;
            } else if (field == 0 && digit >= 0) {
                start = start << 4 | (uintptr_t)digit;
            } else if (field == 0 && ch == '-') {
                field = 1;
            } else if (field == 1 && digit >= 0) {
                end = end << 4 | (uintptr_t)digit;
            } else if (field == 1) {
                field = 2;
                if (contains(start, end, addr))
                    found = start;
            }
        }
    close(fd);
    return found;
}


/* Room left below the caller for the calls it still makes (the wait, a
 * signal's handler): those pages are not faulted in again at once. */
#define KEEP 16384

void rf_stack_release_below(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t low = mapping_start(sp), high = (sp - KEEP) & ~(page - 1);
    if (low && high > low)
        (void)madvise((void *)low, high - low, MADV_DONTNEED);
}
