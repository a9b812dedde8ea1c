/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence profile list | show NAME: the named policy layers there are
 * (docs/profiles.md). A profile's first comment line is its summary. */
#include "cli.h"

#include "util/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence profile list\n"
           "       ringfence profile show NAME\n"
           "\n"
           "Profiles are named policy layers shipped with ringfence (toolchains: node,\n"
           "python, rust, go, java, git; agent CLIs: claude-code, codex, gemini-cli,\n"
           "opencode; chat's limits) or written by you in ~/.config/ringfence/profiles/\n"
           "NAME.yaml, which replaces a shipped one of the same name. Apply them with\n"
           "--profile NAME (repeatable; a later one wins, flags win over all).\n"
           "\n"
           "Examples:\n"
           "  ringfence run --profile node --profile claude-code -- claude\n"
           "  ringfence config --explain --profile python   where each value came from\n");
}

/* The first "# name: summary" line of the file, after the "name: ". */
static void print_summary(const char *name, const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[512] = "";
    if (f && fgets(line, sizeof line, f) && line[0] == '#') {
        line[strcspn(line, "\n")] = '\0';
        const char *s = line + 1 + strspn(line + 1, " ");
        size_t n = strlen(name);
        if (!strncmp(s, name, n) && s[n] == ':')
            s += n + 1 + strspn(s + n + 1, " ");
        printf("%-12s %s\n", name, s);
    } else {
        printf("%-12s\n", name);
    }
}

static int list(void)
{
    rf_error *err = NULL;
    char **names = rf_profile_list(&err);
    if (!names) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    for (size_t i = 0; names[i]; i++) {
        _cleanup_free_ char *path = rf_profile_find(names[i], NULL);
        if (path)
            print_summary(names[i], path);
        free(names[i]);
    }
    free(names);
    return 0;
}

static int show(const char *name)
{
    rf_error *err = NULL;
    _cleanup_free_ char *path = rf_profile_find(name, &err);
    if (!path) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "ringfence: cannot read profile %s: %s\n", path, strerror(errno));
        return RF_EXIT_FAILURE;
    }
    printf("# %s\n", path);
    char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && total < 1024 * 1024) {
        fwrite(buf, 1, n, stdout);
        total += n;
    }
    return 0;
}

int rf_cli_profile(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        help();
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "list"))
        return list();
    if (argc == 3 && !strcmp(argv[1], "show"))
        return show(argv[2]);
    return rf_cli_usage_error("profile", "expected 'list' or 'show NAME'");
}
