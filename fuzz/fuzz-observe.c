/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's path handling and learn's rule builder: the paths come
 * from a sandboxed (possibly hostile) command. First byte selects: path
 * normalisation, grouping and flagging of one path, or the suggestion
 * builder on arbitrary observation JSON. */
#include "observe/observe.h"
#include "learn/suggest.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 1) {
        char path[PATH_MAX + 1], out[PATH_MAX];
        snprintf(path, sizeof path, "%s", text);
        if (rf_view_normalise(path)) {
            rf_suggest_group(path, "/home/fuzz", out, sizeof out);
            (void)rf_suggest_flag(path, "/home/fuzz");
        }
    } else {
        static char *const envp[] = { "PATH=/home/fuzz/.pyenv/shims:/usr/bin", "PYENV_ROOT=/home/fuzz/.pyenv", NULL };
        free(rf_observe_suggest(text, text, "/home/fuzz", envp, NULL));
    }
    free(text);
    return 0;
}
