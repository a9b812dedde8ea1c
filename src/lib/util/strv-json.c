/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/strv-json.h"

#include <stddef.h>

json_t *rf_strv_json(char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; a && v && v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}
