/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NULL-terminated string vectors (char **), the shape execve() wants. */
#pragma once
#include "util/format.h"

#include <stdbool.h>
#include <stddef.h>

size_t rf_strv_len(char *const *v);
/* Append a copy of s. Returns 0, or -1 with errno = ENOMEM. */
int rf_strv_push(char ***v, const char *s);
/* Append a copy of s unless an equal string is already there. */
int rf_strv_push_unique(char ***v, const char *s);
/* Append, taking ownership of s (freed on failure). */
int rf_strv_push_take(char ***v, char *s);
/* Append a printf-formatted string. */
int rf_strv_pushf(char ***v, const char *fmt, ...) RF_PRINTF(2, 3);
bool rf_strv_contains(char *const *v, const char *s);
char **rf_strv_copy(char *const *v);
void rf_strv_free(char **v);
/* Find "KEY=..." in an environment-shaped vector; returns the entry. */
char *rf_strv_env_get(char *const *v, const char *key);
/* Set or replace "KEY=VALUE". */
int rf_strv_env_set(char ***v, const char *key, const char *value);
