/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the low-integrity command may write: directories carrying the low
 * mandatory label, inherited by everything created in them (OICI), with
 * no-write-up (NW), so a process below low could not write them either.
 * Everything else of the user's keeps the implicit medium label, which a
 * low process can read but not write. The label is the only thing changed:
 * the DACL (who may access) stays the user's. */
#include "backend/windows/winapi.h"
#include "util/error.h"

#include <aclapi.h>
#include <sddl.h>
#include <errno.h>
#include <stdlib.h>
#include <wchar.h>

int rf_win_mkdir(const char *path, rf_error **err)
{
    wchar_t *w = rf_win_wide(path);
    if (!w)
        return rf_error_set(err, 0, "directory %s: not valid UTF-8 or out of memory", path);
    DWORD code = CreateDirectoryW(w, NULL) ? 0 : GetLastError();
    DWORD attrs = GetFileAttributesW(w);
    free(w);
    if (code && code != ERROR_ALREADY_EXISTS)
        return rf_win_error(err, code, "making directory %s", path);
    /* A link or junction planted in its place could point the label, and
     * the command's writes, anywhere: refused, never followed. */
    if (attrs == INVALID_FILE_ATTRIBUTES || !(attrs & FILE_ATTRIBUTE_DIRECTORY) ||
        (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) {
        rf_error_set(err, 0, "%s is not a plain directory (a file, link or junction)", path);
        return rf_error_hint_set(err, "remove it; ringfence makes the directory itself");
    }
    return 0;
}

/* Caps on the walk: a workspace is a project, not a disk. */
#define LABEL_MAX_DEPTH 64
#define LABEL_MAX_ENTRIES 200000

typedef struct walk {
    PACL sacl;
    size_t entries;
    rf_error **err;
} walk;

/* One entry, through a handle opened on the entry itself
 * (OPEN_REPARSE_POINT): a link swapped in is labelled as the link, never
 * followed to a file outside. */
static int label_one(walk *w, const wchar_t *path, const char *shown)
{
    HANDLE h = CreateFileW(path, READ_CONTROL | WRITE_OWNER, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return rf_win_error(w->err, GetLastError(), "giving %s the low integrity write label", shown);
    DWORD code = SetSecurityInfo(h, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, NULL, NULL, NULL, w->sacl);
    CloseHandle(h);
    if (code != ERROR_SUCCESS)
        return rf_win_error(w->err, code, "giving %s the low integrity write label", shown);
    return 0;
}

/* Depth first; links and junctions are labelled themselves but not
 * entered: what they point to is not the workspace's. */
static int label_tree(walk *w, const wchar_t *dir, const char *shown, int depth)
{
    if (label_one(w, dir, shown) < 0)
        return -1;
    if (depth >= LABEL_MAX_DEPTH)
        return rf_error_set(w->err, 0, "%s: more than %d directories deep", shown, LABEL_MAX_DEPTH);
    size_t n = wcslen(dir);
    wchar_t *pattern = malloc((n + 3) * sizeof(wchar_t));
    if (!pattern)
        return rf_error_set(w->err, ENOMEM, "labelling %s", shown);
    swprintf(pattern, n + 3, L"%ls\\*", dir);
    WIN32_FIND_DATAW fd;
    HANDLE find = FindFirstFileW(pattern, &fd);
    free(pattern);
    if (find == INVALID_HANDLE_VALUE)
        return 0; /* empty, or unreadable: the directory itself is labelled */
    int r = 0;
    do {
        if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
            continue;
        if (++w->entries > LABEL_MAX_ENTRIES) {
            r = rf_error_set(w->err, 0, "%s: more than %d entries to label", shown, LABEL_MAX_ENTRIES);
            break;
        }
        size_t len = n + wcslen(fd.cFileName) + 2;
        wchar_t *child = malloc(len * sizeof(wchar_t));
        if (!child) {
            r = rf_error_set(w->err, ENOMEM, "labelling %s", shown);
            break;
        }
        swprintf(child, len, L"%ls\\%ls", dir, fd.cFileName);
        bool enter = (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) &&
                     !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT);
        r = enter ? label_tree(w, child, shown, depth + 1) : label_one(w, child, shown);
        free(child);
    } while (r == 0 && FindNextFileW(find, &fd));
    FindClose(find);
    return r;
}

/* Does the directory already carry the inheritable low label? Then what
 * was created in it since inherited the label, and the walk is skipped: a
 * large workspace is walked once, not on every start. */
static bool labelled(const wchar_t *path)
{
    HANDLE h = CreateFileW(path, READ_CONTROL, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return false;
    PACL sacl = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    bool found = false;
    if (GetSecurityInfo(h, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, NULL, NULL, NULL, &sacl, &sd) ==
            ERROR_SUCCESS && sacl) {
        BYTE low[SECURITY_MAX_SID_SIZE];
        DWORD size = sizeof low;
        CreateWellKnownSid(WinLowLabelSid, NULL, low, &size);
        for (DWORD i = 0; i < sacl->AceCount && !found; i++) {
            SYSTEM_MANDATORY_LABEL_ACE *ace = NULL;
            if (!GetAce(sacl, i, (void **)&ace) || ace->Header.AceType != SYSTEM_MANDATORY_LABEL_ACE_TYPE)
                continue;
            found = EqualSid((PSID)&ace->SidStart, low) &&
                    (ace->Header.AceFlags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE)) ==
                        (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE) &&
                    (ace->Mask & SYSTEM_MANDATORY_LABEL_NO_WRITE_UP);
        }
    }
    if (sd)
        LocalFree(sd);
    CloseHandle(h);
    return found;
}

/* Give a tree the label an SDDL string holds. */
static int label_with(const char *path, const wchar_t *wpath, const wchar_t *sddl, rf_error **err)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    walk w = { .err = err };
    BOOL present = FALSE, defaulted = FALSE;
    int r;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
        r = rf_win_error(err, GetLastError(), "integrity label for %s", path);
    else if (!GetSecurityDescriptorSacl(sd, &present, &w.sacl, &defaulted) || !present)
        r = rf_win_error(err, GetLastError(), "integrity label for %s", path);
    else
        r = label_tree(&w, wpath, path, 0);
    if (sd)
        LocalFree(sd);
    return r;
}

/* The directory and what already exists below it (a workspace's files)
 * get the low label, unless it has it already; what is created later
 * inherits it (OICI). */
int rf_win_label_low(const char *path, rf_error **err)
{
    wchar_t *wpath = rf_win_wide(path);
    if (!wpath)
        return rf_error_set(err, 0, "%s: not valid UTF-8 or out of memory", path);
    int r = labelled(wpath) ? 0 : label_with(path, wpath, L"S:(ML;OICI;NW;;;LW)", err);
    free(wpath);
    return r;
}

/* A protected path inside the workspace (git hooks, the workspace's own
 * policy) back to medium, explicitly and inherited, so the low command
 * cannot change it: every start, since the workspace's walk may have
 * labelled it low. Absent: nothing to do (the plan's cannot says so). */
int rf_win_label_protect(const char *path, rf_error **err)
{
    wchar_t *wpath = rf_win_wide(path);
    if (!wpath)
        return rf_error_set(err, 0, "%s: not valid UTF-8 or out of memory", path);
    DWORD attrs = GetFileAttributesW(wpath);
    int r = attrs == INVALID_FILE_ATTRIBUTES ? 0 : label_with(path, wpath, L"S:(ML;OICI;NW;;;ME)", err);
    free(wpath);
    return r;
}
