/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A warm pool's idle init gives back the caller's memory it was forked
 * with. The setup child is a copy of the caller (the MCP server, `ringfence
 * serve`, an agent linking libringfence): every private page the caller
 * owns is shared copy-on-write with each idle sandbox. While one waits,
 * each page a thread of the caller writes is copied first (a fault, a page
 * allocated and copied, a TLB shootdown on every CPU the caller runs on):
 * about a dozen per thread per command measured in the MCP server, on the
 * path of every call. Once setup is done, init needs none of the caller's
 * heap, malloc arenas or other threads' stacks, so it unmaps them; the
 * caller's next write finds the page its own again.
 *
 * The caller lists the ranges before clone (it may allocate: it reads
 * /proc/self/maps); the child unmaps them as its last step before init
 * runs, never to touch them again. Kept: the mapping of our own stack,
 * those holding our thread's control block (the stack protector's canary)
 * and static TLS (errno), and an anonymous mapping right after a file's
 * (an object's .bss). An access to anything unmapped is a fault, never a
 * silently zeroed page. Not in sanitizer builds: their shadow memory is
 * anonymous too. */
#include "backend/native/sandbox.h"
#include "util/stack.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static bool contains(uintptr_t start, uintptr_t end, uintptr_t addr)
{
    return addr >= start && addr < end;
}

void rf_shed_plan(rf_native_ctx *c)
{
    c->n_shed = 0;
    if (!RF_SHARED_VM_CLONE)
        return;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return; /* nothing listed: the pages stay shared, which is only slower */
    char line[512];
    /* Our stack, our thread's control block and its static TLS (errno is
     * there, below the control block on x86-64: maybe another mapping). */
    uintptr_t sp = (uintptr_t)&line, tp = (uintptr_t)__builtin_thread_pointer(), tls = (uintptr_t)&errno;
    uintptr_t prev_end = 0;
    bool prev_file = false;
    while (fgets(line, sizeof line, f) && c->n_shed < RF_SHED_MAX) {
        uintptr_t start, end;
        char perms[5];
        unsigned long long inode;
        int path_at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %llu %n", &start, &end, perms, &inode, &path_at) < 4)
            break;
        const char *path = line + path_at;
        bool anon = inode == 0 && (path[0] == '\n' || path[0] == '\0' || !strncmp(path, "[heap]", 6) ||
                                   !strncmp(path, "[stack]", 7)); /* the main thread's, when it is not ours */
        bool after_file = prev_file && prev_end == start;
        if (anon && !strcmp(perms, "rw-p") && !after_file && !contains(start, end, sp) && !contains(start, end, tp) &&
            !contains(start, end, tls))
            c->shed[c->n_shed++] = (rf_shed_range){ start, end };
        prev_end = end;
        prev_file = inode != 0;
    }
    fclose(f);
}

void rf_shed_release(const rf_native_ctx *c)
{
    /* The list is in c, on our stack: read before each unmap, never from
     * what was unmapped. */
    for (size_t i = 0; i < c->n_shed; i++)
        (void)munmap((void *)c->shed[i].start, c->shed[i].end - c->shed[i].start);
}

/* Setup ran deep on this stack (mounts, the filter, Landlock, the command
 * process's stack in set_up's frame): tens of KiB that every idle
 * sandbox's init kept dirty while it only waits. Called from init's wait
 * once it has been idle a while; below our frame nothing is live (init
 * uses a signalfd: no handler runs on it). A copy of the
 * caller's address space (clone3 without CLONE_VM): the caller's stack is
 * not affected. */
void rf_shed_stack(void)
{
    rf_stack_release_below();
}
