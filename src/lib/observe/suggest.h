/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rules learn suggests from what the observer saw (suggest.c). */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stddef.h>

/* Why host is never suggested (a secret, persistence), or NULL. */
const char *rf_suggest_flag(const char *host, const char *home);
/* The directory (or file) a rule for host would expose. */
void rf_suggest_group(const char *host, const char *home, char *out, size_t len);
