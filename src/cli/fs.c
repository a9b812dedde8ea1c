/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence fs: the workspace-confined file tools (read, write, append,
 * edit, list) on the command line. A thin client of rf_fs_*: parse the
 * flags into one struct, turn them into the flags layer of the standard
 * config stack (as run and exec do: --config, --agent, the workspace file,
 * RINGFENCE_*), resolve the policy, open rf_fs for it, run one verb. A verb
 * whose tool the policy disables (tools.disabled) is refused. */
#include "cli.h"
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PATTERNS 256

enum { EXIT_USAGE = RF_EXIT_FAILURE };

enum {
    OPT_WORKSPACE = 0x100, OPT_ALLOW_READ, OPT_ALLOW_WRITE, OPT_READ_OUTSIDE, OPT_NO_RESTRICT,
    OPT_MAX_READ, OPT_OFFSET, OPT_LIMIT, OPT_CONTENT, OPT_OLD, OPT_NEW, OPT_RECURSIVE, OPT_MAX, OPT_HELP,
    OPT_CONFIG, OPT_NO_CONFIG, OPT_AGENT, OPT_CONFIG_FORMAT, OPT_RUNNER, OPT_TRUST_WS,
};

/* One table drives getopt_long and --help. */
static const struct fs_opt {
    const char *name, *arg, *help;
    int val;
    char short_opt; /* or 0 */
} fs_opts[] = {
    { "workspace", "DIR", "the workspace (default: the current directory)", OPT_WORKSPACE },
    { "allow-read", "REGEX", "also read paths outside it whose canonical path matches (repeatable)", OPT_ALLOW_READ },
    { "allow-write", "REGEX", "also write paths outside it whose canonical path matches (repeatable)", OPT_ALLOW_WRITE },
    { "allow-read-outside", NULL, "read (and list) anywhere; writes stay confined", OPT_READ_OUTSIDE },
    { "no-restrict", NULL, "no confinement at all (restrict_to_workspace: false)", OPT_NO_RESTRICT },
    { "max-read-bytes", "N", "read: refuse to return more than N bytes (default 1048576)", OPT_MAX_READ },
    { "offset", "N", "read: start at line N (1-based)", OPT_OFFSET },
    { "limit", "N", "read: at most N lines", OPT_LIMIT },
    { "content", "TEXT", "write/append: TEXT instead of standard input", OPT_CONTENT },
    { "old", "TEXT", "edit: the text to replace; must occur exactly once", OPT_OLD },
    { "new", "TEXT", "edit: its replacement", OPT_NEW },
    { "recursive", NULL, "list: descend into directories (never through symlinks)", OPT_RECURSIVE, 'r' },
    { "max", "N", "list: at most N entries (default 1000, at most 100000)", OPT_MAX },
    { "config", "FILE", "read a config file (JSON or YAML); repeatable", OPT_CONFIG },
    { "no-config", NULL, "ignore all config files; built-in defaults and flags only", OPT_NO_CONFIG },
    { "agent", "NAME", "apply this agent's section of the config (its tools.disabled too)", OPT_AGENT },
    { "config-format", "FMT", "ringfence, picoclaw, mitto or srt (sandbox-runtime; default: detect)", OPT_CONFIG_FORMAT },
    { "runner", "TYPE", "Mitto runner type whose restrictions apply", OPT_RUNNER },
    { "trust-workspace-config", NULL, "let the workspace's .ringfence.* loosen the policy", OPT_TRUST_WS },
    { "help", NULL, "show this help", OPT_HELP, 'h' },
};

typedef struct fs_args {
    const char *verb, *path;
    const char *workspace;
    const char *allow_read[MAX_PATTERNS + 1], *allow_write[MAX_PATTERNS + 1];
    size_t n_read, n_write;
    bool read_outside, no_restrict, recursive, help;
    uint64_t max_read_bytes, offset, limit, max;
    const char *content, *old_text, *new_text;
    const char *config[MAX_PATTERNS + 1];
    size_t n_config;
    const char *agent, *config_format, *runner;
    bool no_config, trust_ws;
} fs_args;

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence fs VERB [OPTIONS] PATH\n"
            "\n"
            "File tools for an agent, confined to the workspace by the kernel: '../',\n"
            "absolute paths and symlinks that lead out are refused, outside paths only\n"
            "when --allow-read/--allow-write name them.\n"
            "\n"
            "Verbs:\n"
            "  read PATH [--offset N] [--limit N]   print a text file, or lines N.. of it\n"
            "  write PATH [--content TEXT]          replace PATH with stdin (or TEXT), atomically;\n"
            "                                       missing parent directories are created\n"
            "  append PATH [--content TEXT]         append stdin (or TEXT) to PATH\n"
            "  edit PATH --old TEXT --new TEXT      replace the one occurrence of TEXT\n"
            "  list [PATH] [--recursive] [--max N]  list a directory ('/' marks directories)\n"
            "\n"
            "Options:\n");
    for (size_t i = 0; i < sizeof fs_opts / sizeof fs_opts[0]; i++) {
        char left[64];
        snprintf(left, sizeof left, "%c%c%s--%s%s%s", fs_opts[i].short_opt ? '-' : ' ',
                 fs_opts[i].short_opt ? fs_opts[i].short_opt : ' ', fs_opts[i].short_opt ? ", " : "  ",
                 fs_opts[i].name, fs_opts[i].arg ? " " : "", fs_opts[i].arg ? fs_opts[i].arg : "");
        fprintf(out, "  %-28s %s\n", left, fs_opts[i].help);
    }
    fprintf(out,
            "\n"
            "Examples:\n"
            "  ringfence fs read src/main.c --offset 40 --limit 20\n"
            "  echo 'hello' | ringfence fs write notes/today.txt\n"
            "  ringfence fs edit README.md --old 'teh ' --new 'the '\n"
            "  ringfence fs list --recursive --max 200 src\n"
            "  ringfence fs read /etc/hosts --allow-read '^/etc/hosts$'\n"
            "\n"
            "  ringfence fs write x.txt --config picoclaw.json --agent readonly   refused if\n"
            "                                       that agent's tools.disabled has write_file\n"
            "\n"
            "Protected paths (.git/hooks, .ringfence.json/.yaml/.yml) are never written.\n"
            "The configuration stack is the one of 'ringfence run'; each verb is an agent\n"
            "tool (read_file, write_file, append_file, edit_file, list_dir) and is refused\n"
            "when the policy's tools.disabled names it.\n"
            "\n"
            "Exit status: 0 done; 1 refused or failed (access denied, a disabled tool, not\n"
            "found, edit text not unique, ...), the reason on stderr; 125 bad usage or\n"
            "configuration.\n");
}

static int parse_u64(const char *s, const char *opt, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !end || *end || end == s || s[0] == '-')
        return rf_cli_usage_error("fs", "--%s wants a number, not '%s'", opt, s);
    *out = v;
    return 0;
}

static int push_pattern(const char **v, size_t *n, const char *s, const char *opt)
{
    if (*n >= MAX_PATTERNS)
        return rf_cli_usage_error("fs", "too many --%s (at most %d)", opt, MAX_PATTERNS);
    v[(*n)++] = s;
    v[*n] = NULL;
    return 0;
}

static int take_option(fs_args *a, int c, const char *arg)
{
    switch (c) {
    case OPT_WORKSPACE: a->workspace = arg; return 0;
    case OPT_ALLOW_READ: return push_pattern(a->allow_read, &a->n_read, arg, "allow-read");
    case OPT_ALLOW_WRITE: return push_pattern(a->allow_write, &a->n_write, arg, "allow-write");
    case OPT_READ_OUTSIDE: a->read_outside = true; return 0;
    case OPT_NO_RESTRICT: a->no_restrict = true; return 0;
    case OPT_MAX_READ: return parse_u64(arg, "max-read-bytes", &a->max_read_bytes);
    case OPT_OFFSET: return parse_u64(arg, "offset", &a->offset);
    case OPT_LIMIT: return parse_u64(arg, "limit", &a->limit);
    case OPT_CONTENT: a->content = arg; return 0;
    case OPT_OLD: a->old_text = arg; return 0;
    case OPT_NEW: a->new_text = arg; return 0;
    case OPT_RECURSIVE: a->recursive = true; return 0;
    case OPT_MAX: return parse_u64(arg, "max", &a->max);
    case OPT_HELP: a->help = true; return 0;
    case OPT_CONFIG: return push_pattern(a->config, &a->n_config, arg, "config");
    case OPT_NO_CONFIG: a->no_config = true; return 0;
    case OPT_AGENT: a->agent = arg; return 0;
    case OPT_CONFIG_FORMAT: a->config_format = arg; return 0;
    case OPT_RUNNER: a->runner = arg; return 0;
    case OPT_TRUST_WS: a->trust_ws = true; return 0;
    default: return rf_cli_usage_error("fs", "unknown option");
    }
}

static int parse_args(int argc, char **argv, fs_args *a)
{
    struct option longopts[sizeof fs_opts / sizeof fs_opts[0] + 1];
    for (size_t i = 0; i < sizeof fs_opts / sizeof fs_opts[0]; i++)
        longopts[i] = (struct option){ fs_opts[i].name, fs_opts[i].arg ? required_argument : no_argument,
                                       NULL, fs_opts[i].val };
    longopts[sizeof fs_opts / sizeof fs_opts[0]] = (struct option){ 0 };
    char shorts[32] = ":"; /* ":": report a missing value apart from an unknown option */
    for (size_t i = 0, k = 1; i < sizeof fs_opts / sizeof fs_opts[0] && k + 2 < sizeof shorts; i++)
        if (fs_opts[i].short_opt) {
            shorts[k++] = fs_opts[i].short_opt;
            if (fs_opts[i].arg)
                shorts[k++] = ':';
        }
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        for (size_t i = 0; i < sizeof fs_opts / sizeof fs_opts[0]; i++)
            if (c == fs_opts[i].short_opt)
                c = fs_opts[i].val;
        if (c == '?')
            return rf_cli_usage_error("fs", "unknown option '%s'", argv[optind - 1]);
        if (c == ':')
            return rf_cli_usage_error("fs", "option '%s' needs a value", argv[optind - 1]);
        int r = take_option(a, c, optarg);
        if (r != 0)
            return r;
    }
    /* getopt moved the positionals (VERB, PATH) to the end, "--" honoured. */
    if (optind < argc)
        a->verb = argv[optind++];
    if (optind < argc)
        a->path = argv[optind++];
    if (optind < argc)
        return rf_cli_usage_error("fs", "unexpected argument '%s'", argv[optind]);
    return 0;
}

static json_t *strings(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* Flags → the command-line layer of the standard config stack, so a flag
 * and a config file fill the same policy through the same checks. */
static int fs_build_opts(const fs_args *a, rf_cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->status_fd = -1;
    json_t *f = o->flags = json_object();
    if (a->workspace) {
        char *cwd = a->workspace[0] == '/' ? NULL : getcwd(NULL, 0), *abs = NULL;
        if (cwd && asprintf(&abs, "%s/%s", cwd, a->workspace) < 0)
            abs = NULL;
        json_object_set_new(f, "workspace", json_string(abs ? abs : a->workspace));
        free(cwd);
        free(abs);
    }
    if (a->no_restrict)
        json_object_set_new(f, "restrict_to_workspace", json_false());
    if (a->read_outside)
        json_object_set_new(f, "allow_read_outside_workspace", json_true());
    if (a->n_read)
        json_object_set_new(rf_cli_json_obj_at(f, "tools"), "allow_read_paths", strings(a->allow_read, a->n_read));
    if (a->n_write)
        json_object_set_new(rf_cli_json_obj_at(f, "tools"), "allow_write_paths", strings(a->allow_write, a->n_write));
    if (a->max_read_bytes)
        json_object_set_new(rf_cli_json_obj_at(f, "tools"), "max_read_bytes", json_integer((json_int_t)a->max_read_bytes));
    o->config_files = calloc(a->n_config + 1, sizeof(char *));
    for (size_t i = 0; o->config_files && i < a->n_config; i++)
        if (!(o->config_files[i] = strdup(a->config[i])))
            return -1;
    o->agent = a->agent;
    o->config_format = a->config_format;
    o->runner = a->runner;
    o->no_config = a->no_config;
    o->trust_workspace_config = a->trust_ws;
    return o->config_files ? 0 : -1;
}

/* Content for write/append: --content, else all of stdin (bounded). */
static int read_content(const fs_args *a, char **out, size_t *len)
{
    if (a->content) {
        *out = strdup(a->content);
        *len = strlen(a->content);
        return *out ? 0 : -1;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return -1;
        if (n == cap) {
            if (cap > RF_FS_MAX_WRITE) {
                free(buf);
                fprintf(stderr, "ringfence: content too large: more than %d bytes on stdin\n", RF_FS_MAX_WRITE);
                return -2;
            }
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
            continue;
        }
        size_t r = fread(buf + n, 1, cap - n, stdin);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(stdin)) {
        free(buf);
        fprintf(stderr, "ringfence: cannot read standard input\n");
        return -2;
    }
    *out = buf;
    *len = n;
    return 0;
}

static int report(rf_error *err)
{
    int code = rf_cli_report(err);
    rf_error_free(err);
    return code;
}

static int verb_read(rf_fs *fs, const fs_args *a)
{
    rf_error *err = NULL;
    char *text = NULL;
    size_t len = 0;
    if (rf_fs_read(fs, a->path, a->offset, a->limit, &text, &len, &err) < 0)
        return report(err);
    size_t w = fwrite(text, 1, len, stdout);
    free(text);
    if (w != len || fflush(stdout) != 0) {
        fprintf(stderr, "ringfence: cannot write to standard output: %s\n", strerror(errno));
        return RF_FS_EXIT_FAILED;
    }
    return 0;
}

static int verb_write(rf_fs *fs, const fs_args *a, bool append)
{
    char *data = NULL;
    size_t len = 0;
    int r = read_content(a, &data, &len);
    if (r == -1)
        fprintf(stderr, "ringfence: out of memory\n");
    if (r < 0)
        return RF_FS_EXIT_FAILED;
    rf_error *err = NULL;
    r = append ? rf_fs_append(fs, a->path, data, len, &err) : rf_fs_write(fs, a->path, data, len, &err);
    free(data);
    return r < 0 ? report(err) : 0;
}

static int verb_edit(rf_fs *fs, const fs_args *a)
{
    rf_error *err = NULL;
    if (rf_fs_edit(fs, a->path, a->old_text, a->new_text, &err) < 0)
        return report(err);
    return 0;
}

static int verb_list(rf_fs *fs, const fs_args *a)
{
    rf_error *err = NULL;
    char **entries = NULL;
    int r = rf_fs_list(fs, a->path ? a->path : ".", a->recursive, a->max, &entries, &err);
    if (r < 0)
        return report(err);
    size_t n = 0;
    for (; entries[n]; n++)
        printf("%s\n", entries[n]);
    rf_fs_entries_free(entries);
    if (r == 1)
        fprintf(stderr, "ringfence: note: listing stopped after %zu entries (raise --max, at most %d)\n", n,
                RF_FS_MAX_LIST);
    return fflush(stdout) == 0 ? 0 : RF_FS_EXIT_FAILED;
}

/* Verb-specific usage checks, before anything is opened. Like the parsing
 * helpers above: 0, or the usage exit code (already reported). */
static int check_usage(const fs_args *a)
{
    static const char *const verbs[] = { "read", "write", "append", "edit", "list" };
    bool known = false;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        known |= !strcmp(a->verb, verbs[i]);
    if (!known)
        return rf_cli_usage_error("fs", "unknown verb '%s' (read, write, append, edit or list)", a->verb);
    if (!a->path && strcmp(a->verb, "list"))
        return rf_cli_usage_error("fs", "%s needs a PATH", a->verb);
    if (!strcmp(a->verb, "edit") && (!a->old_text || !a->new_text))
        return rf_cli_usage_error("fs", "edit needs --old TEXT and --new TEXT");
    bool reading = !strcmp(a->verb, "read");
    if (!reading && (a->offset || a->limit))
        return rf_cli_usage_error("fs", "--offset and --limit are for read");
    if (a->content && strcmp(a->verb, "write") && strcmp(a->verb, "append"))
        return rf_cli_usage_error("fs", "--content is for write and append");
    return 0;
}

int rf_cli_fs(int argc, char **argv)
{
    fs_args a = { 0 };
    if (parse_args(argc, argv, &a) != 0)
        return EXIT_USAGE;
    if (a.help) {
        print_help(stdout);
        return 0;
    }
    if (!a.verb) {
        print_help(stderr);
        return EXIT_USAGE;
    }
    if (check_usage(&a) != 0)
        return EXIT_USAGE;
    rf_cli_opts o;
    int code = EXIT_USAGE;
    rf_policy *policy = NULL;
    if (fs_build_opts(&a, &o) < 0)
        fprintf(stderr, "ringfence: out of memory\n");
    else
        policy = rf_cli_policy(&o, &code);
    rf_cli_opts_clear(&o);
    if (!policy)
        return code;
    if (a.no_restrict)
        fprintf(stderr, "ringfence: warning: restrict_to_workspace is off (--no-restrict): the file "
                        "tools can reach any path this user can\n");
    rf_error *err = NULL;
    rf_fs *fs = rf_fs_open_for_policy(policy, &err);
    rf_policy_free(policy);
    if (!fs) {
        rf_cli_report(err);
        rf_error_free(err);
        return EXIT_USAGE; /* configuration, not the operation */
    }
    if (!strcmp(a.verb, "read"))
        code = verb_read(fs, &a);
    else if (!strcmp(a.verb, "write") || !strcmp(a.verb, "append"))
        code = verb_write(fs, &a, !strcmp(a.verb, "append"));
    else if (!strcmp(a.verb, "edit"))
        code = verb_edit(fs, &a);
    else
        code = verb_list(fs, &a);
    rf_fs_close(fs);
    return code;
}
