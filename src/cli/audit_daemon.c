/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence audit-daemon: the system audit log's writer (audit/system.h,
 * docs/audit.md "A system-wide log"). */
#include "cli.h"

#include "audit/system.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence audit-daemon [--socket PATH] [--log PATH]\n"
            "\n"
            "Receive every run's audit records over a unix socket and chain them into\n"
            "the system audit log, which only root can read or write. Each record is\n"
            "stamped with the sender's uid, gid and pid as the kernel gives them\n"
            "(whatever the record says) and the time it arrived. Runs as root; started\n"
            "by systemd (ringfence-audit.socket) or by hand. SIGTERM ends it (exit 0)\n"
            "after the record in hand.\n"
            "\n"
            "Options:\n"
            "  --socket PATH  listen here (default: the socket systemd passed, else\n"
            "                 " RF_AUDIT_SYSTEM_SOCKET ")\n"
            "  --log PATH     the log, named audit.log (default " RF_AUDIT_SYSTEM_LOG ");\n"
            "                 its head and rotated files go beside it\n"
            "\n"
            "A managed boundary turns it on for every run: system_audit: {required: true}\n"
            "in /etc/ringfence/managed.yaml (docs/managed.md). Read the log with\n"
            "'ringfence audit show --system', check it with 'ringfence audit verify --system'.\n");
}

int rf_cli_audit_daemon(int argc, char **argv)
{
    static const struct option lo[] = { { "socket", required_argument, NULL, 's' },
                                        { "log", required_argument, NULL, 'l' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
    const char *socket = NULL, *log = NULL;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        switch (c) {
        case 's': socket = optarg; break;
        case 'l': log = optarg; break;
        case 'h': help(stdout); return 0;
        default: return rf_cli_usage_error("audit-daemon", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rf_cli_usage_error("audit-daemon", "takes no argument ('%s')", argv[optind]);
    rf_error *err = NULL;
    if (rf_audit_daemon_run(socket, log, &err) < 0) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    return 0;
}
