/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence doctor` on Windows: each mechanism of the backend tried for
 * real, nothing assumed from the version number. */
#include "backend/windows/winapi.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct report {
    char *text;
    size_t len;
    bool all_ok;
} report;

static void add(report *r, const char *what, const char *result)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "  %-44s %s\n", what, result);
    char *t = n > 0 ? realloc(r->text, r->len + (size_t)n + 1) : NULL;
    if (t) {
        memcpy(t + r->len, buf, (size_t)n + 1);
        r->text = t;
        r->len += (size_t)n;
    }
}

/* One mechanism's line: yes, or no and why; takes err. */
static void line(report *r, const char *what, rf_error *err)
{
    char why[900];
    snprintf(why, sizeof why, "no: %s", err ? rf_error_message(err) : "");
    add(r, what, err ? why : "yes");
    r->all_ok = r->all_ok && !err;
    rf_error_free(err);
}

static void try_token(report *r)
{
    rf_error *err = NULL;
    HANDLE t = rf_win_token_make(&err);
    if (t)
        CloseHandle(t);
    line(r, "restricted token at low integrity", err);
}

static void try_job(report *r)
{
    rf_error *err = NULL;
    rf_win_plan limits = { .pids = 64, .memory = 256u << 20 };
    HANDLE j = rf_win_job_make(&limits, &err);
    if (j)
        CloseHandle(j);
    line(r, "job object (kill on close, pids, memory)", err);
}

/* A directory of our own under %TEMP%, labelled and removed. */
static void try_label(report *r)
{
    rf_error *err = NULL;
    char dir[MAX_PATH + 64];
    DWORD n = GetTempPathA(MAX_PATH, dir);
    if (n == 0 || n > MAX_PATH)
        rf_win_error(&err, GetLastError(), "the temporary directory");
    else {
        snprintf(dir + n, sizeof dir - n, "ringfence-doctor-%lu", (unsigned long)GetCurrentProcessId());
        if (rf_win_mkdir(dir, &err) == 0) {
            rf_win_label_low(dir, &err);
            RemoveDirectoryA(dir);
        }
    }
    line(r, "low-integrity write label on a directory", err);
}

RF_EXPORT char *rf_win_doctor_text(bool *all_ok)
{
    report r = { .text = strdup("backend windows:\n"), .all_ok = true };
    if (!r.text)
        return NULL;
    r.len = strlen(r.text);
    try_token(&r);
    try_job(&r);
    try_label(&r);
    add(&r, "expose (source -> target)", "no: not supported on Windows (refused)");
    add(&r, "network isolation", "no: the command has the host's network");
    *all_ok = r.all_ok;
    return r.text;
}
