/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A string vector as a JSON array: what every printed record (the plan, the
 * policy, doctor, the audit trail, the registry) needs, once. */
#pragma once
#include <jansson.h>

/* A new array of v's strings (NULL: an empty one); NULL without memory. */
json_t *rf_strv_json(char *const *v);
