/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command's primary token: the caller's, restricted, at low integrity.
 *
 * Deny-only administrators and power users: even when the caller is an
 * elevated administrator, those groups can then only deny access, never
 * grant it. DISABLE_MAX_PRIVILEGE deletes every privilege but
 * SeChangeNotifyPrivilege (bypass traverse checking, which path lookup
 * needs). Low integrity: the command cannot write anything labelled medium
 * (the default of every file, registry key and process of the user), which
 * is what confines its writes to the directories label.c marks low. */
#include "backend/windows/winapi.h"
#include "util/error.h"

static int deny_only_sids(SID_AND_ATTRIBUTES sids[2], BYTE bufs[2][SECURITY_MAX_SID_SIZE], rf_error **err)
{
    static const WELL_KNOWN_SID_TYPE types[2] = { WinBuiltinAdministratorsSid, WinBuiltinPowerUsersSid };
    for (int i = 0; i < 2; i++) {
        DWORD size = SECURITY_MAX_SID_SIZE;
        if (!CreateWellKnownSid(types[i], NULL, bufs[i], &size))
            return rf_win_error(err, GetLastError(), "restricted token: building the %s SID",
                                i ? "power users" : "administrators");
        sids[i].Sid = bufs[i];
        sids[i].Attributes = 0;
    }
    return 0;
}

static int set_low_integrity(HANDLE token, rf_error **err)
{
    BYTE sid[SECURITY_MAX_SID_SIZE];
    DWORD size = sizeof sid;
    if (!CreateWellKnownSid(WinLowLabelSid, NULL, sid, &size))
        return rf_win_error(err, GetLastError(), "restricted token: building the low integrity SID");
    TOKEN_MANDATORY_LABEL label = { .Label = { .Sid = sid, .Attributes = SE_GROUP_INTEGRITY } };
    if (!SetTokenInformation(token, TokenIntegrityLevel, &label, sizeof label + GetLengthSid(sid)))
        return rf_win_error(err, GetLastError(), "restricted token: setting low integrity");
    return 0;
}

HANDLE rf_win_token_make(rf_error **err)
{
    /* The restricted token gets the access of this handle: enough to start
     * a process with it (assign primary) and to lower its integrity. */
    const DWORD access = TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT;
    HANDLE own = NULL, restricted = NULL;
    if (!OpenProcessToken(GetCurrentProcess(), access, &own)) {
        rf_win_error(err, GetLastError(), "restricted token: opening this process's token");
        return NULL;
    }
    SID_AND_ATTRIBUTES sids[2];
    BYTE bufs[2][SECURITY_MAX_SID_SIZE];
    if (deny_only_sids(sids, bufs, err) < 0)
        goto fail;
    if (!CreateRestrictedToken(own, DISABLE_MAX_PRIVILEGE, 2, sids, 0, NULL, 0, NULL, &restricted)) {
        rf_win_error(err, GetLastError(), "restricted token: CreateRestrictedToken");
        goto fail;
    }
    if (set_low_integrity(restricted, err) < 0)
        goto fail;
    CloseHandle(own);
    return restricted;
fail:
    if (restricted)
        CloseHandle(restricted);
    CloseHandle(own);
    return NULL;
}
