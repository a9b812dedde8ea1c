/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure path-string helpers. They never touch the filesystem, so confinement
 * decisions are never made with them alone (see fs/, which uses openat2). */
#pragma once
#include <stdbool.h>

/* Normalise an absolute path lexically: collapse "//", drop ".", resolve
 * "..". Returns a malloc'd string, or NULL if path is not absolute. */
char *rf_path_normalize(const char *path);
/* Join base and rel (rel absolute: copy of rel), then normalise. */
char *rf_path_join(const char *base, const char *rel);
/* base immediately followed by suffix, as written (no separator added, not
 * normalised): a malloc'd string, NULL when out of memory. */
char *rf_path_concat(const char *base, const char *suffix);
/* Is `path` equal to `dir` or beneath it? Both must be normalised. */
bool rf_path_is_beneath(const char *path, const char *dir);
/* Does path lie in /proc or /dev (or equal them)? */
bool rf_path_is_kernel_fs(const char *path);
