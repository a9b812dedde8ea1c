/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Entries a killed run left behind. A run that makes an entry in a shared
 * directory (a container run's directory, a placeholder journal) holds an
 * flock on it for as long as it lives; the kernel drops that lock when the
 * run dies, however it dies. An entry whose lock can be taken therefore
 * belongs to nobody any more, and the next run undoes it. */
#pragma once

/* For each entry of `dir` whose name starts with `prefix` (any name but a
 * dot-file when prefix is ""), and whose lock is free: undo(path, ud), with
 * the lock held meanwhile. A missing `dir` is nothing to do. */
void rf_orphans_collect(const char *dir, const char *prefix, void (*undo)(const char *path, void *ud), void *ud);
