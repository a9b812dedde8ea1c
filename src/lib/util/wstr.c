/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Wide strings, Windows error messages and command-line quoting. */
#include "util/wstr.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wchar_t *rf_win_wide(const char *utf8)
{
    /* MB_ERR_INVALID_CHARS: bad UTF-8 is refused, never silently replaced
     * by a path that is not the one the user wrote. */
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, NULL, 0);
    if (n <= 0)
        return NULL;
    wchar_t *w = malloc((size_t)n * sizeof(wchar_t));
    if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, w, n) != n) {
        free(w);
        return NULL;
    }
    return w;
}

char *rf_win_utf8(const wchar_t *wide)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, wide, -1, NULL, 0, NULL, NULL);
    if (n <= 0)
        return NULL;
    char *s = malloc((size_t)n);
    if (s && WideCharToMultiByte(CP_UTF8, 0, wide, -1, s, n, NULL, NULL) != n) {
        free(s);
        return NULL;
    }
    return s;
}

void rf_win_message(DWORD code, char *buf, size_t size)
{
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, buf,
                             (DWORD)size, NULL);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '.'))
        buf[--n] = '\0';
    snprintf(buf + n, size - n, "%s(Windows error %lu)", n ? " " : "unknown error ", (unsigned long)code);
}

int rf_win_error(rf_error **err, DWORD code, const char *fmt, ...)
{
    char what[512], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    rf_win_message(code, why, sizeof why);
    return rf_error_set(err, 0, "%s: %s", what, why);
}

/* Append c to the buffer, refusing to pass the cap. */
static bool put(wchar_t *buf, size_t *len, wchar_t c)
{
    if (*len + 1 >= RF_WIN_MAX_CMDLINE)
        return false;
    buf[(*len)++] = c;
    return true;
}

/* One word, quoted the way CommandLineToArgvW reads it back: backslashes
 * are literal unless they precede a quote, then they are doubled. */
static bool put_word(wchar_t *buf, size_t *len, const wchar_t *w)
{
    if (*w && !wcspbrk(w, L" \t\n\v\"")) {
        for (; *w; w++)
            if (!put(buf, len, *w))
                return false;
        return true;
    }
    if (!put(buf, len, L'"'))
        return false;
    for (;; w++) {
        size_t slashes = 0;
        while (*w == L'\\') {
            w++;
            slashes++;
        }
        /* Before a quote or the closing quote: double them. */
        size_t times = (*w == L'"' || !*w) ? slashes * 2 : slashes;
        for (size_t i = 0; i < times; i++)
            if (!put(buf, len, L'\\'))
                return false;
        if (!*w)
            break;
        if ((*w == L'"' && !put(buf, len, L'\\')) || !put(buf, len, *w))
            return false;
    }
    return put(buf, len, L'"');
}

wchar_t *rf_win_cmdline(char *const argv[])
{
    wchar_t *buf = malloc(RF_WIN_MAX_CMDLINE * sizeof(wchar_t));
    size_t len = 0;
    if (!buf)
        return NULL;
    for (size_t i = 0; argv[i]; i++) {
        wchar_t *w = rf_win_wide(argv[i]);
        bool ok = w && (i == 0 || put(buf, &len, L' ')) && put_word(buf, &len, w);
        free(w);
        if (!ok) {
            free(buf);
            return NULL;
        }
    }
    buf[len] = L'\0';
    return buf;
}
