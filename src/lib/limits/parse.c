/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsing the limit settings as users write them (flags and config files):
 * "256M", "0.25", "200", "90s". Errors name the setting and quote the
 * input (printable bytes only, cut short), with a hint showing the form. */
#include "limits/limits.h"

#include "util/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_INPUT 64
#define MEMORY_MIN 4096ull     /* one page; the kernel counts in pages */
#define MEMORY_MAX (1ull << 60)
#define PIDS_MAX 4194304ull      /* the kernel's PID_MAX_LIMIT */
#define CPU_MIN 0.01             /* cgroup quota minimum: 1 ms per 100 ms */
#define CPU_MAX 4096.0
#define SECONDS_MAX (366.0 * 86400)

/* Copy for messages: printable ASCII only, at most MAX_INPUT bytes. */
static const char *shown(const char *s, char buf[MAX_INPUT + 4])
{
    size_t i = 0;
    for (; s[i] && i < MAX_INPUT; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i])
        buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
    buf[i] = '\0';
    return buf;
}

static int bad(rf_error **err, const char *setting, const char *s, const char *why,
               const char *hint)
{
    char b[MAX_INPUT + 4];
    rf_error_set(err, 0, "%s: \"%s\" %s", setting, shown(s, b), why);
    return rf_error_hint_set(err, "%s", hint);
}

static bool is_none(const char *s)
{
    return strcasecmp(s, "none") == 0 || strcasecmp(s, "unlimited") == 0;
}

/* A plain decimal "123" or "1.5": digits and at most one dot, nothing else
 * (strtod alone would also take "inf", "nan", hex and exponents). Returns
 * the length of the number. */
static size_t decimal_len(const char *s, bool allow_dot)
{
    size_t i = 0, digits = 0;
    bool dot = false;
    for (; s[i]; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && allow_dot && !dot)
            dot = true;
        else
            break;
    }
    return digits && i <= 24 ? i : 0;
}

/* Split a decimal into its whole part (saturating) and its fraction. */
static void parse_decimal(const char *s, size_t len, uint64_t *whole, double *frac)
{
    uint64_t w = 0;
    double f = 0, scale = 1;
    bool after_dot = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.')
            after_dot = true;
        else if (after_dot)
            f += (s[i] - '0') * (scale /= 10);
        else
            w = w > UINT64_MAX / 10 - 10 ? UINT64_MAX : w * 10 + (uint64_t)(s[i] - '0');
    }
    *whole = w;
    *frac = f;
}

static const struct unit {
    const char *name;
    uint64_t mult;
} memory_units[] = {
    { "", 1 },          { "b", 1 },           { "k", 1ull << 10 }, { "kb", 1ull << 10 },
    { "kib", 1ull << 10 }, { "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
    { "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 }, { "t", 1ull << 40 },
    { "tb", 1ull << 40 }, { "tib", 1ull << 40 },
};

RF_EXPORT int rf_limits_parse_memory(const char *s, uint64_t *out, rf_error **err)
{
    const char *hint = "write a size with an optional binary unit: 512k, 256M, 1.5G "
                       "(or 0 / none for no limit)";
    if (!s || !*s)
        return bad(err, "limits.memory", "", "is empty", hint);
    if (strcmp(s, "0") == 0 || is_none(s)) {
        *out = 0;
        return 0;
    }
    size_t len = decimal_len(s, true);
    if (!len)
        return bad(err, "limits.memory", s, "is not a size", hint);
    uint64_t mult = 0;
    for (size_t i = 0; i < sizeof memory_units / sizeof memory_units[0]; i++)
        if (strcasecmp(s + len, memory_units[i].name) == 0)
            mult = memory_units[i].mult;
    if (!mult)
        return bad(err, "limits.memory", s, "has an unknown unit", hint);
    uint64_t whole;
    double frac;
    parse_decimal(s, len, &whole, &frac);
    if (mult == 1 && memchr(s, '.', len))
        return bad(err, "limits.memory", s, "is a fraction of a byte", hint);
    if (whole > MEMORY_MAX / mult || whole * mult + (uint64_t)(frac * (double)mult) > MEMORY_MAX)
        return bad(err, "limits.memory", s, "is too large", hint);
    uint64_t v = whole * mult + (uint64_t)(frac * (double)mult);
    if (v < MEMORY_MIN)
        return bad(err, "limits.memory", s, "is below the minimum of 4k", hint);
    *out = v;
    return 0;
}

RF_EXPORT int rf_limits_parse_cpu(const char *s, double *out, rf_error **err)
{
    const char *hint = "write a number of CPUs: 0.25 is a quarter of one CPU, 2 is two "
                       "(or 0 / none for no limit)";
    if (!s || !*s)
        return bad(err, "limits.cpu", "", "is empty", hint);
    if (is_none(s)) {
        *out = 0;
        return 0;
    }
    size_t len = decimal_len(s, true);
    if (!len || s[len])
        return bad(err, "limits.cpu", s, "is not a number of CPUs", hint);
    uint64_t whole;
    double frac;
    parse_decimal(s, len, &whole, &frac);
    double v = (double)whole + frac;
    if (v > CPU_MAX)
        return bad(err, "limits.cpu", s, "is too large", hint);
    if (v > 0 && v < CPU_MIN)
        return bad(err, "limits.cpu", s, "is below the minimum of 0.01", hint);
    *out = v;
    return 0;
}

RF_EXPORT int rf_limits_parse_pids(const char *s, uint64_t *out, rf_error **err)
{
    const char *hint = "write a whole number of processes, e.g. 200 (or 0 / none for no limit)";
    if (!s || !*s)
        return bad(err, "limits.pids", "", "is empty", hint);
    if (is_none(s)) {
        *out = 0;
        return 0;
    }
    size_t len = decimal_len(s, false);
    if (!len || s[len])
        return bad(err, "limits.pids", s, "is not a whole number", hint);
    uint64_t v;
    double frac;
    parse_decimal(s, len, &v, &frac);
    if (v > PIDS_MAX)
        return bad(err, "limits.pids", s, "is above the kernel's maximum of 4194304", hint);
    *out = v;
    return 0;
}

RF_EXPORT int rf_limits_parse_seconds(const char *s, double *out, rf_error **err)
{
    const char *hint = "write seconds, optionally with a unit: 90, 1.5, 500ms, 2m, 1h "
                       "(or 0 / none for no limit)";
    if (!s || !*s)
        return bad(err, "limits.timeout", "", "is empty", hint);
    if (is_none(s)) {
        *out = 0;
        return 0;
    }
    size_t len = decimal_len(s, true);
    if (!len)
        return bad(err, "limits.timeout", s, "is not a duration", hint);
    const char *u = s + len;
    double mult = !*u || strcmp(u, "s") == 0 ? 1
                  : strcmp(u, "ms") == 0     ? 0.001
                  : strcmp(u, "m") == 0      ? 60
                  : strcmp(u, "h") == 0      ? 3600
                                             : 0;
    if (!mult)
        return bad(err, "limits.timeout", s, "has an unknown unit", hint);
    uint64_t whole;
    double frac;
    parse_decimal(s, len, &whole, &frac);
    double v = ((double)whole + frac) * mult;
    if (v > SECONDS_MAX)
        return bad(err, "limits.timeout", s, "is longer than a year", hint);
    *out = v;
    return 0;
}

RF_EXPORT int rf_limits_format_memory(uint64_t bytes, char *buf, size_t size)
{
    static const char units[] = "KMGT";
    int u = -1;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    int n = u < 0 ? snprintf(buf, size, "%" PRIu64, bytes)
                  : snprintf(buf, size, "%" PRIu64 "%c", bytes, units[u]);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

RF_EXPORT const char *rf_limit_how_name(rf_limit_how how)
{
    switch (how) {
    case RF_LIMIT_CGROUP_V2:
        return "cgroup-v2";
    case RF_LIMIT_CGROUP_V1:
        return "cgroup-v1";
    case RF_LIMIT_RLIMIT:
        return "rlimit";
    default:
        return "none";
    }
}
