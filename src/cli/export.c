/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence export oci|k8s DIR [OPTIONS] -- COMMAND [ARG...]: write the
 * plan for another runtime (src/lib/export). */
#include "cli.h"
#include "options.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence export oci DIR [OPTIONS] -- COMMAND [ARG...]\n"
           "       ringfence export k8s DIR [OPTIONS] -- COMMAND [ARG...]\n"
           "\n"
           "Write the sandbox plan for COMMAND for another runtime; run nothing.\n"
           "\n"
           "  oci  an OCI runtime bundle in DIR (new or empty): config.json and rootfs/.\n"
           "       'crun run --bundle DIR NAME' runs COMMAND with the same namespaces,\n"
           "       mounts, identity, no capabilities, no_new_privs, seccomp profile,\n"
           "       limits and rlimits. Landlock has no OCI field: the bundle's\n"
           "       annotations say so and list the rules ringfence would add.\n"
           "  k8s  Kubernetes objects in DIR: ringfence.k8s.json (a RuntimeClass for\n"
           "       crun, a NetworkPolicy for network none, the Pod) and the Pod's\n"
           "       Localhost seccomp profile under DIR/seccomp/ (copy it into the\n"
           "       kubelet's seccomp root). The image (--image) supplies the system.\n"
           "\n"
           "Takes the options of 'run'. See docs/scale.md.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "export", false);
    printf("\nExamples:\n"
           "  ringfence export oci /tmp/bundle -- make test && crun run --bundle /tmp/bundle job1\n"
           "  ringfence export k8s ./k8s --image debian:bookworm-slim --memory 256M -- ./job.sh\n");
}

int rf_cli_export(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        help();
        return 0;
    }
    if (argc < 3 || (strcmp(argv[1], "oci") && strcmp(argv[1], "k8s")))
        return rf_cli_usage_error("export", "expected 'oci DIR' or 'k8s DIR', then options, -- and the command");
    const char *format = argv[1], *dir = argv[2];
    /* The sandbox options follow the target; argv[2] stands in as argv[0]. */
    rf_cli_opts o;
    rf_plan *plan;
    int code;
    if (!rf_cli_prepare("export", argc - 2, argv + 2, help, &o, &plan, &code)) {
        rf_cli_opts_clear(&o);
        return code;
    }
    bool weaker = json_is_true(json_object_get(o.flags, "accept_weaker"));
    rf_error *err = NULL;
    int r = !strcmp(format, "oci") ? rf_export_oci_bundle(plan, dir, weaker, &err)
                                   : rf_export_k8s(plan, dir, weaker, &err);
    code = r < 0 ? rf_cli_report(err) : 0;
    if (r == 0)
        fprintf(stderr, "ringfence: wrote %s %s\n", !strcmp(format, "oci") ? "an OCI bundle to" : "Kubernetes objects to",
                dir);
    rf_error_free(err);
    rf_plan_free(plan);
    rf_cli_opts_clear(&o);
    return code;
}
