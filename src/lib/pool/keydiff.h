/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The settings in which two policy keys (rf_policy_key) differ. */
#pragma once
#include <stddef.h>

/* Writes the differing settings' dotted names into buf ("limits.timeout,
 * network.mode"; the workspace with both paths; at most four, then
 * "..."), cut to `size`. Returns how many differ, 0 when either key is not
 * a JSON object (buf is then empty). */
size_t rf_pool_key_diff(const char *server_key, const char *request_key, char *buf, size_t size);
