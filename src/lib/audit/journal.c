/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Each audit record, also to the systemd journal where there is one: a
 * copy the log's owner cannot rewrite (journal files belong to
 * systemd-journal), for `journalctl -t ringfence`. journald's native
 * protocol, one datagram a record, sent without waiting: a slow or absent
 * journal never holds a run up, and a record it drops is still in the log. */
#include "audit/audit.h"
#include "util/unix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static const char *socket_path(void)
{
#ifdef RF_TEST_HOOKS
    const char *t = getenv("RINGFENCE_TEST_JOURNAL_SOCKET"); /* tests/security/audit.sh */
    if (t && *t)
        return t;
#endif
    return JOURNAL_SOCKET;
}

/* Refusals and limits are warnings (PRIORITY 4); the rest information (6). */
static int priority(const char *event)
{
    return !strcmp(event, "net.refused") || !strncmp(event, "limit.", 6) || !strncmp(event, "guard.", 6) ? 4 : 6;
}

void rf_audit_journal(const char *event, const char *sandbox, const char *line, size_t len, const char *hash)
{
    struct sockaddr_un sa;
    const char *path = socket_path();
    if (rf_unix_addr(path, &sa) < 0 || access(path, W_OK) < 0)
        return;
    char *msg = NULL;
    /* The line is JSON: no newline in it, so the simple KEY=value form. */
    int n = asprintf(&msg, "SYSLOG_IDENTIFIER=ringfence\nPRIORITY=%d\nRINGFENCE_EVENT=%s\nRINGFENCE_SANDBOX=%s\n"
                           "RINGFENCE_AUDIT_HASH=%s\nMESSAGE=%.*s\n", priority(event), event, sandbox ? sandbox : "",
                     hash, (int)len, line);
    int fd = n < 0 ? -1 : socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0) {
        (void)sendto(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof sa);
        close(fd);
    }
    if (n >= 0)
        free(msg);
}
