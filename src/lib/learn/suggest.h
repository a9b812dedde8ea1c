/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rules learn suggests from what the observer saw (learn/suggest.c;
 * the observer itself, observe/, sits below the backends). */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stddef.h>

/* Why host is never suggested (a secret, persistence), or NULL. */
const char *rf_suggest_flag(const char *host, const char *home);
/* The directory (or file) a rule for host would expose. */
void rf_suggest_group(const char *host, const char *home, char *out, size_t len);
/* Why a rule for dir would expose too much (the whole host, a top-level
 * directory, home or a directory holding it, the workspace or a parent of
 * it), or NULL. */
const char *rf_suggest_too_broad(const char *dir, const char *home, const char *workspace);
/* The narrowest source that works for host: its group, or when that is too
 * broad the directory host is in, or host itself; out is "" when even
 * host is too broad. Returns NULL, or why the wider source (in `wider`)
 * was refused. workspace may be NULL. */
const char *rf_suggest_source(const char *host, const char *home, const char *workspace, char *out, size_t len,
                              char *wider, size_t wlen);
