/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include <stdbool.h>

/* Give the pages of the caller's stack below its frame (and a margin for
 * the calls it still makes) back to the kernel: they read as zeros when
 * next used. Only the mapping holding the caller's stack, found in
 * /proc/self/maps; where that cannot be read, nothing is given back. Call
 * it only where nothing below the caller's frame is live: no handler on
 * this stack running, no pointer into a callee's frame kept.
 * Never inlined, so its frame is right below its caller's. */
__attribute__((noinline)) void rf_stack_release_below(void);
