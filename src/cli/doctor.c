/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence doctor: what this host supports, per backend. Exit 0 when the
 * default backend (native) works here, 1 when it does not, 125 on error. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void doctor_help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence doctor [--json]\n"
            "\n"
            "Probe this host: kernel, unprivileged user namespaces (tried for real, with\n"
            "the reason when they fail), Landlock ABI, seccomp, cgroups and delegation,\n"
            "bwrap/firejail/podman/docker on PATH; then, per backend (native, landlock,\n"
            "none), whether it can run and what it protects.\n"
            "\n"
            "Options:\n"
            "  --json      print the report as JSON (fields in docs/doctor.md)\n"
            "  -h, --help  show this help\n"
            "\n"
            "Exit status: 0 the native backend works here; 1 it does not; 125 error.\n");
}

int rf_cli_doctor(int argc, char **argv)
{
    static const struct option options[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'h':
            doctor_help(stdout);
            return 0;
        default:
            return rf_cli_usage_error("doctor", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return rf_cli_usage_error("doctor", "unexpected argument '%s'", argv[optind]);

    rf_error *err = NULL;
    rf_doctor_report *report = rf_doctor_probe(&err);
    if (!report) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    char *out = json ? rf_doctor_to_json(report) : rf_doctor_to_text(report);
    bool native = rf_doctor_backend_usable(report, "native");
    rf_doctor_free(report);
    if (!out) {
        fprintf(stderr, "ringfence: doctor: out of memory\n");
        return RF_EXIT_FAILURE;
    }
    fputs(out, stdout);
    if (json)
        fputc('\n', stdout);
    free(out);
    return native ? 0 : 1;
}
