/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the terminal-safe forms (src/lib/util/printable.c) and the path
 * quoting built on them (changes/changeset.c): the bytes are a sandboxed
 * command's file contents or file names. Checks what matters: the
 * visible form and the quoted path hold no byte a terminal acts on (C0
 * but tab, DEL, a C1 control as UTF-8 or as a lone byte), are valid UTF-8,
 * and rf_printable ends within its buffer with printable ASCII only. */
#include "ringfence.h"
#include "util/printable.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Nothing a terminal would act on, and all of it valid UTF-8 without a
 * control or a bidi override. */
static void check_shown(const char *s, bool tab_ok)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = rf_utf8_len(p + i, n - i);
        if (len == 0 || (rf_utf8_is_control(p + i, len)) || (!tab_ok && p[i] == '\t'))
            abort();
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    size_t k = 0;
    char *v = rf_visible((const char *)data, size, &k);
    if (!v)
        return 0;
    check_shown(v, true);
    if ((k == 0) != (strlen(v) == size && !memcmp(v, data, size)))
        abort(); /* nothing escaped exactly when the text is unchanged */
    free(v);
    char *z = malloc(size + 1);
    if (!z)
        return 0;
    memcpy(z, data, size);
    z[size] = '\0';
    char *q = rf_change_quote_path(z);
    if (q)
        check_shown(q, false);
    free(q);
    char small[16];
    memset(small, 'x', sizeof small);
    rf_printable(small, sizeof small, z);
    if (!memchr(small, '\0', sizeof small))
        abort();
    for (size_t i = 0; small[i]; i++)
        if (small[i] < 0x20 || small[i] > 0x7e)
            abort();
    free(z);
    return 0;
}
