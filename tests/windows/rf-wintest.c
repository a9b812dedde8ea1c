/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A helper run inside the Windows sandbox by tests/windows/run and
 * scripts/windows-check.ps1, one probe per mode:
 *   tree FILE     start a grandchild (sleeper FILE), then sleep
 *   sleeper FILE  write our process id to FILE, then sleep
 *   alive PID     exit 0 if that process runs, 1 if not
 *   token         print this process's integrity level, privileges, and
 *                 whether BUILTIN\Administrators is deny-only
 *   write PATH    exit 0 if PATH can be created (and is removed), 1 if not
 *   write-in VAR  the same for a file in the directory %VAR% names */
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sleeper(const char *file)
{
    FILE *f = fopen(file, "w");
    if (!f)
        return 2;
    fprintf(f, "%lu\n", (unsigned long)GetCurrentProcessId());
    fclose(f);
    Sleep(120 * 1000);
    return 0;
}

static int tree(const char *self, const char *file)
{
    char cmd[2 * MAX_PATH + 32];
    snprintf(cmd, sizeof cmd, "\"%s\" sleeper \"%s\"", self, file);
    STARTUPINFOA si = { .cb = sizeof si };
    PROCESS_INFORMATION pi;
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return 2;
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    Sleep(120 * 1000);
    return 0;
}

static int alive(const char *pid)
{
    HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)strtoul(pid, NULL, 10));
    if (!h)
        return 1;
    DWORD w = WaitForSingleObject(h, 0);
    CloseHandle(h);
    return w == WAIT_TIMEOUT ? 0 : 1;
}

static int token(void)
{
    HANDLE t;
    BYTE buf[4096];
    DWORD len;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &t))
        return 2;
    if (GetTokenInformation(t, TokenIntegrityLevel, buf, sizeof buf, &len)) {
        PSID sid = ((TOKEN_MANDATORY_LABEL *)buf)->Label.Sid;
        printf("integrity %lu\n", (unsigned long)*GetSidSubAuthority(sid, *GetSidSubAuthorityCount(sid) - 1));
    }
    if (GetTokenInformation(t, TokenPrivileges, buf, sizeof buf, &len))
        printf("privileges %lu\n", (unsigned long)((TOKEN_PRIVILEGES *)buf)->PrivilegeCount);
    BYTE admins[SECURITY_MAX_SID_SIZE];
    DWORD size = sizeof admins;
    CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, admins, &size);
    if (GetTokenInformation(t, TokenGroups, buf, sizeof buf, &len)) {
        TOKEN_GROUPS *g = (TOKEN_GROUPS *)buf;
        for (DWORD i = 0; i < g->GroupCount; i++)
            if (EqualSid(g->Groups[i].Sid, admins))
                printf("administrators %s\n", g->Groups[i].Attributes & SE_GROUP_USE_FOR_DENY_ONLY ? "deny-only"
                                                                                                : "enabled");
    }
    CloseHandle(t);
    return 0;
}

static int try_write(const char *path)
{
    HANDLE h = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_FLAG_DELETE_ON_CLOSE, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        printf("write %s: denied (error %lu)\n", path, (unsigned long)GetLastError());
        return 1;
    }
    CloseHandle(h);
    printf("write %s: allowed\n", path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "tree"))
        return tree(argv[0], argv[2]);
    if (argc == 3 && !strcmp(argv[1], "sleeper"))
        return sleeper(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "alive"))
        return alive(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "token"))
        return token();
    if (argc == 3 && !strcmp(argv[1], "write"))
        return try_write(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "write-in")) {
        char path[MAX_PATH + 32];
        const char *dir = getenv(argv[2]);
        if (!dir)
            return 2;
        snprintf(path, sizeof path, "%s\\rf-probe-%lu.txt", dir, (unsigned long)GetCurrentProcessId());
        return try_write(path);
    }
    fprintf(stderr, "usage: rf-wintest tree FILE | sleeper FILE | alive PID | token | write PATH | write-in VAR\n");
    return 2;
}
