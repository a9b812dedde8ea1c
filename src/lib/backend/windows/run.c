/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting the command, in the order the guarantees need:
 * directories made and labelled → restricted low token → job → process
 * created suspended → assigned to the job → resumed → waited for. */
#include "backend/windows/winapi.h"
#include "util/error.h"
#include "util/strv.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static int prepare_dirs(const rf_win_plan *p, rf_error **err)
{
    for (size_t i = 0; p->dirs[i]; i++) {
        if (rf_win_mkdir(p->dirs[i], err) < 0)
            return -1;
        /* The user env tree is labelled at its top, before its subfolders
         * are made: they inherit the label. The instance root is not: the
         * command has no business writing beside its own home. */
        if (!strcmp(p->dirs[i], p->user_env) && rf_win_label_low(p->user_env, err) < 0)
            return -1;
    }
    if (rf_win_label_low(p->workspace, err) < 0)
        return -1;
    /* After the workspace: its walk may have labelled them low. */
    for (size_t i = 0; p->protected && p->protected[i]; i++)
        if (rf_win_label_protect(p->protected[i], err) < 0)
            return -1;
    return 0;
}

/* The environment block CreateProcess takes: KEY=VALUE\0...\0\0, UTF-16. */
static wchar_t *env_block(char *const *env)
{
    size_t total = 1, used = 0;
    wchar_t **w = calloc(rf_strv_len(env) + 1, sizeof(*w));
    for (size_t i = 0; w && env[i]; i++) {
        if (!(w[i] = rf_win_wide(env[i])))
            goto fail;
        total += wcslen(w[i]) + 1;
    }
    wchar_t *block = w ? malloc(total * sizeof(wchar_t)) : NULL;
    for (size_t i = 0; block && env[i]; i++) {
        size_t n = wcslen(w[i]) + 1;
        memcpy(block + used, w[i], n * sizeof(wchar_t));
        used += n;
    }
    if (block)
        block[used] = L'\0';
    for (size_t i = 0; w && env[i]; i++)
        free(w[i]);
    free(w);
    return block;
fail:
    for (size_t i = 0; env[i] && w[i]; i++)
        free(w[i]);
    free(w);
    return NULL;
}

/* Only the three standard handles are inherited (seed 002: no inherited
 * descriptors): an explicit handle list, not every inheritable handle. */
static LPPROC_THREAD_ATTRIBUTE_LIST handle_list(HANDLE std[3], size_t *n)
{
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    LPPROC_THREAD_ATTRIBUTE_LIST a = malloc(size);
    if (!a || !InitializeProcThreadAttributeList(a, 1, 0, &size)) {
        free(a);
        return NULL;
    }
    /* Each handle once: a caller may pass one handle as both stdout and
     * stderr, and CreateProcess refuses a list with duplicates. */
    *n = 0;
    for (int i = 0; i < 3; i++) {
        bool seen = false;
        for (size_t j = 0; j < *n; j++)
            seen = seen || std[j] == std[i];
        if (!seen && std[i] && std[i] != INVALID_HANDLE_VALUE &&
            SetHandleInformation(std[i], HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
            std[(*n)++] = std[i];
    }
    if (*n && !UpdateProcThreadAttribute(a, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, std, *n * sizeof(HANDLE),
                                         NULL, NULL)) {
        DeleteProcThreadAttributeList(a);
        free(a);
        return NULL;
    }
    return a;
}

static int start_error(const rf_win_plan *p, DWORD code, rf_error **err)
{
    int exit_code = code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND ? RF_EXIT_NOT_FOUND
                    : code == ERROR_ACCESS_DENIED || code == ERROR_BAD_EXE_FORMAT ? RF_EXIT_CANNOT_EXEC
                                                                                  : RF_EXIT_FAILURE;
    char why[320];
    rf_win_message(code, why, sizeof why);
    return rf_error_set_code(err, exit_code, 0, "%s: %s", p->argv[0], why);
}

/* Suspended, so nothing of the command runs before it is in the job. */
static int create(const rf_win_plan *p, HANDLE token, PROCESS_INFORMATION *pi, rf_error **err)
{
    HANDLE std[3] = { GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                      GetStdHandle(STD_ERROR_HANDLE) };
    STARTUPINFOEXW si = { .StartupInfo = { .cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES,
                                           .hStdInput = std[0], .hStdOutput = std[1], .hStdError = std[2] } };
    size_t n = 0;
    wchar_t *cmd = rf_win_cmdline(p->argv), *env = env_block(p->env), *cwd = rf_win_wide(p->cwd);
    si.lpAttributeList = handle_list(std, &n);
    int r = 0;
    if (!cmd || !env || !cwd || !si.lpAttributeList)
        r = rf_error_set(err, 0, "starting %s: the command line is too long, or out of memory", p->argv[0]);
    else if (!CreateProcessAsUserW(token, NULL, cmd, NULL, NULL, n > 0,
                                   CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT,
                                   env, cwd, &si.StartupInfo, pi))
        r = start_error(p, GetLastError(), err);
    if (si.lpAttributeList) {
        DeleteProcThreadAttributeList(si.lpAttributeList);
        free(si.lpAttributeList);
    }
    free(cmd);
    free(env);
    free(cwd);
    return r;
}

/* The command's status; a timeout terminates the whole job (124). When the
 * command itself ends, what it left running in the job goes with it, as the
 * Linux sandbox's pid namespace does. */
static int wait_for(const rf_win_plan *p, HANDLE job, HANDLE proc, int *exit_code, rf_error **err)
{
    DWORD ms = p->timeout > 0 ? (p->timeout * 1000.0 >= 4e9 ? INFINITE - 1 : (DWORD)(p->timeout * 1000.0))
                              : INFINITE;
    DWORD w = WaitForSingleObject(proc, ms);
    if (w == WAIT_TIMEOUT) {
        TerminateJobObject(job, RF_EXIT_TIMEOUT);
        WaitForSingleObject(proc, INFINITE);
        *exit_code = RF_EXIT_TIMEOUT;
        return 0;
    }
    DWORD code = 0;
    if (w != WAIT_OBJECT_0 || !GetExitCodeProcess(proc, &code))
        return rf_win_error(err, GetLastError(), "waiting for %s", p->argv[0]);
    TerminateJobObject(job, code);
    *exit_code = (int)code;
    return 0;
}

RF_EXPORT int rf_win_run(const rf_win_plan *p, int *exit_code, rf_error **err)
{
    if (prepare_dirs(p, err) < 0)
        return -1;
    HANDLE token = rf_win_token_make(err);
    if (!token)
        return -1;
    HANDLE job = rf_win_job_make(p, err);
    PROCESS_INFORMATION pi = { 0 };
    int r = job ? create(p, token, &pi, err) : -1;
    CloseHandle(token);
    if (r == 0 && !AssignProcessToJobObject(job, pi.hProcess)) {
        r = rf_win_error(err, GetLastError(), "job object: assigning %s", p->argv[0]);
        TerminateProcess(pi.hProcess, RF_EXIT_FAILURE);
    } else if (r == 0 && ResumeThread(pi.hThread) == (DWORD)-1) {
        r = rf_win_error(err, GetLastError(), "resuming %s", p->argv[0]);
        TerminateJobObject(job, RF_EXIT_FAILURE);
    }
    if (r == 0)
        r = wait_for(p, job, pi.hProcess, exit_code, err);
    if (pi.hThread)
        CloseHandle(pi.hThread);
    if (pi.hProcess)
        CloseHandle(pi.hProcess);
    if (job)
        CloseHandle(job); /* kill on close: nothing of the tree outlives this */
    return r;
}
