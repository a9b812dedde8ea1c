/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence changes list | show | diff | apply | discard: review what a
 * command run with --changes overlay did, then keep it or drop it
 * (docs/changes.md). A client of the library's rf_session_* calls. */
#include "cli.h"
#include "options.h"

#include "audit/audit.h"
#include "model/policy.h"
#include "util/strv.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct changes_opts {
    bool json, stat, name_only, force, raw, help;
    int color; /* -1 auto, 0 never, 1 always */
    char **only;
    size_t n_only;
} changes_opts;

enum { C_JSON = 256, C_STAT, C_NAME_ONLY, C_FORCE, C_ONLY, C_COLOR, C_RAW, C_HELP };

static const struct changes_opt {
    const char *name;
    int has_arg, id;
    const char *metavar, *help, *verbs;
} copts[] = {
    { "json", no_argument, C_JSON, NULL, "print JSON", "list show diff apply" },
    { "stat", no_argument, C_STAT, NULL, "per file: lines added and removed, and a total", "diff" },
    { "name-only", no_argument, C_NAME_ONLY, NULL, "only the changed paths, one a line", "diff" },
    { "color", required_argument, C_COLOR, "WHEN", "auto (default: on a terminal, unless NO_COLOR), always, never",
      "diff" },
    { "raw", no_argument, C_RAW, NULL,
      "the files' bytes as they are, control characters included (the default when the output is not a "
      "terminal; on one, they are shown as ^[, ^M, \\u009b, \\xff)", "diff" },
    { "only", required_argument, C_ONLY, "PATH",
      "apply only PATH (relative to the workspace) and what lies beneath it; repeatable, and further PATHs "
      "may follow", "apply" },
    { "force", no_argument, C_FORCE, NULL,
      "overwrite files changed in the workspace since the session began (conflicts)", "apply" },
    { "help", no_argument, C_HELP, NULL, "this help", NULL },
};

static void help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence changes list [--json]\n"
            "       ringfence changes show ID [--json]\n"
            "       ringfence changes diff ID [--stat | --name-only | --json] [--color WHEN]\n"
            "       ringfence changes apply ID [--only PATH...] [--force] [--json]\n"
            "       ringfence changes discard ID\n"
            "\n"
            "A command run with --changes overlay leaves the workspace untouched: what it\n"
            "wrote, deleted and renamed is kept in a session (its id is printed in the\n"
            "status record, --status-json, as \"session\"). Review it, then keep or drop it:\n"
            "\n"
            "  list     the sessions, with the number of changed files and their size\n"
            "  show     one session: its workspace, when it began, its changes (A added,\n"
            "           M modified, D deleted, R renamed, T mode, ! refused)\n"
            "  diff     a unified diff of text files, a line for binary ones, renames and\n"
            "           mode changes; on a terminal, control characters in the files\n"
            "           (escape sequences, carriage returns) are shown, not sent (--raw)\n"
            "  apply    write the changes into the workspace, each file atomically; a file\n"
            "           changed there since the session began is a conflict, listed and\n"
            "           kept (--force overwrites); set-id bits, fifos, sockets and device\n"
            "           nodes are never applied; symlinks are never followed\n"
            "  discard  delete the session; the workspace stays as it is\n"
            "\n"
            "'ringfence run --session ID' continues a session, seeing its earlier changes.\n"
            "\n"
            "Options:\n");
    for (size_t i = 0; i < sizeof copts / sizeof copts[0]; i++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", copts[i].name, copts[i].metavar ? " " : "",
                 copts[i].metavar ? copts[i].metavar : "");
        fprintf(out, "  %-22s %s%s%s%s\n", left, copts[i].verbs ? "(" : "", copts[i].verbs ? copts[i].verbs : "",
                copts[i].verbs ? ") " : "", copts[i].help);
    }
    fprintf(out, "\n"
                 "Examples:\n"
                 "  ringfence run --changes overlay --status-json st.json -- make\n"
                 "  ringfence changes diff $(jq -r .session st.json)\n"
                 "  ringfence changes apply ID --only src/\n"
                 "\n"
                 "Exit status: 0 done; 1 apply left something unapplied (conflicts, refused or\n"
                 "failed files, listed); 125 an error (an unknown session, a bad option).\n");
}

static int parse(int argc, char **argv, changes_opts *co)
{
    struct option lo[sizeof copts / sizeof copts[0] + 1];
    memset(lo, 0, sizeof lo);
    for (size_t i = 0; i < sizeof copts / sizeof copts[0]; i++)
        lo[i] = (struct option){ copts[i].name, copts[i].has_arg, NULL, copts[i].id };
    co->color = -1;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        switch (c) {
        case C_JSON: co->json = true; break;
        case C_STAT: co->stat = true; break;
        case C_NAME_ONLY: co->name_only = true; break;
        case C_FORCE: co->force = true; break;
        case C_RAW: co->raw = true; break;
        case 'h':
        case C_HELP: co->help = true; break;
        case C_COLOR:
            co->color = !strcmp(optarg, "always") ? 1
                        : !strcmp(optarg, "never") ? 0
                        : !strcmp(optarg, "auto")  ? -1
                                                   : -2;
            if (co->color == -2)
                return rf_cli_usage_error("changes", "--color %s: expected auto, always or never", optarg), -1;
            break;
        case C_ONLY: {
            char **v = realloc(co->only, (co->n_only + 2) * sizeof *v);
            if (!v)
                return -1;
            co->only = v;
            co->only[co->n_only++] = optarg;
            co->only[co->n_only] = NULL;
            break;
        }
        default:
            rf_cli_usage_error("changes", "unknown option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    return optind;
}

/* The instance root as `run` finds it (RINGFENCE_HOME, config files), and
 * whether its policy keeps the audit trail. */
static char *instance_root(bool *audit, int *code)
{
    rf_cli_opts o;
    char *argv[] = { (char *)"changes", NULL };
    if (rf_cli_parse_sandbox_options("changes", 1, argv, &o) < 0) {
        *code = RF_EXIT_FAILURE;
        return NULL;
    }
    json_object_set_new(o.flags, "allow_sensitive_workspace", json_true());
    rf_policy *policy = rf_cli_policy(&o, code);
    char *root = policy ? strdup(rf_policy_instance_root(policy)) : NULL;
    *audit = policy && policy->audit;
    rf_policy_free(policy);
    rf_cli_opts_clear(&o);
    return root;
}

static int fail(rf_error *err)
{
    int code = rf_cli_report(err);
    rf_error_free(err);
    return code;
}

static char kind_letter(const rf_change *c)
{
    static const char letters[] = { [RF_CHANGE_ADDED] = 'A', [RF_CHANGE_MODIFIED] = 'M', [RF_CHANGE_MODE] = 'T',
                                    [RF_CHANGE_DELETED] = 'D', [RF_CHANGE_RENAMED] = 'R', [RF_CHANGE_REFUSED] = '!' };
    return letters[c->kind];
}

static const char *kind_name(const rf_change *c)
{
    static const char *const names[] = { [RF_CHANGE_ADDED] = "added",     [RF_CHANGE_MODIFIED] = "modified",
                                         [RF_CHANGE_MODE] = "mode",       [RF_CHANGE_DELETED] = "deleted",
                                         [RF_CHANGE_RENAMED] = "renamed", [RF_CHANGE_REFUSED] = "refused" };
    return names[c->kind];
}

/* A path for JSON: as it is when it is valid UTF-8, else git-quoted. */
static json_t *path_json(const char *path)
{
    json_t *s = path ? json_string(path) : json_null();
    if (s)
        return s;
    char *q = rf_change_quote_path(path);
    s = json_string(q ? q : "");
    free(q);
    return s;
}

static json_t *change_json(rf_session *s, const rf_change *c, bool with_diff)
{
    json_t *o = json_pack("{s:o, s:s, s:s#}", "path", path_json(c->path), "kind", kind_name(c), "type", &c->type, 1);
    if (!o)
        return NULL;
    if (c->old_path)
        json_object_set_new(o, "old_path", path_json(c->old_path));
    if (c->old_mode)
        json_object_set_new(o, "old_mode", json_sprintf("%06o", c->old_mode));
    if (c->new_mode)
        json_object_set_new(o, "new_mode", json_sprintf("%06o", c->new_mode));
    if (c->kind != RF_CHANGE_ADDED)
        json_object_set_new(o, "old_size", json_integer(c->old_size));
    if (c->kind != RF_CHANGE_DELETED)
        json_object_set_new(o, "new_size", json_integer(c->new_size));
    if (c->refused)
        json_object_set_new(o, "refused", json_string(c->refused));
    if (with_diff && c->kind != RF_CHANGE_REFUSED && c->type != 'd') {
        size_t ins = 0, del = 0;
        char *d = rf_change_diff(s, c, false, &ins, &del, NULL);
        json_object_set_new(o, "insertions", json_integer((json_int_t)ins));
        json_object_set_new(o, "deletions", json_integer((json_int_t)del));
        json_t *dj = d ? json_string(d) : NULL; /* NULL: not UTF-8 */
        json_object_set_new(o, "diff", dj ? dj : json_null());
        free(d);
    }
    return o;
}

static size_t files_in(const rf_changeset *cs)
{
    size_t n = 0;
    for (size_t i = 0; i < rf_changeset_count(cs); i++)
        n += rf_changeset_get(cs, i)->type != 'd';
    return n;
}

static json_t *session_json(rf_session *s, const rf_changeset *cs)
{
    return json_pack("{s:s, s:s, s:s?, s:f, s:I, s:I}", "id", rf_session_id(s), "workspace", rf_session_workspace(s),
                     "instance", rf_session_instance(s), "created", rf_session_created(s), "files",
                     (json_int_t)files_in(cs), "bytes", (json_int_t)rf_changeset_bytes(cs));
}

static void print_json(json_t *j)
{
    char *out = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (out)
        puts(out);
    free(out);
    json_decref(j);
}

static void format_time(double t, char *out, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(out, size, "?");
}

static int cmd_list(const char *root, const changes_opts *co)
{
    rf_error *err = NULL;
    char **ids = rf_session_list(root, &err);
    if (!ids)
        return fail(err);
    json_t *arr = json_array();
    if (!co->json && ids[0])
        printf("%-14s %-19s %6s %10s  %s\n", "SESSION", "BEGAN", "FILES", "BYTES", "WORKSPACE");
    for (size_t i = 0; ids[i]; i++) {
        rf_session *s = rf_session_open(root, ids[i], NULL);
        rf_changeset *cs = s ? rf_session_diff(s, NULL) : NULL;
        if (s && co->json) {
            json_array_append_new(arr, session_json(s, cs));
        } else if (s) {
            char when[32];
            format_time(rf_session_created(s), when, sizeof when);
            char *ws = rf_change_quote_path(rf_session_workspace(s));
            printf("%-14s %-19s %6zu %10lld  %s\n", ids[i], when, files_in(cs), rf_changeset_bytes(cs), ws ? ws : "");
            free(ws);
        }
        rf_changeset_free(cs);
        rf_session_free(s);
    }
    if (co->json)
        print_json(arr);
    else
        json_decref(arr);
    if (!co->json && !ids[0])
        printf("no sessions (run a command with --changes overlay to make one)\n");
    rf_session_list_free(ids);
    return 0;
}

static void print_status_line(const rf_change *c)
{
    char *q = rf_change_quote_path(c->path), *oq = c->old_path ? rf_change_quote_path(c->old_path) : NULL;
    if (c->kind == RF_CHANGE_RENAMED)
        printf("%c %s -> %s\n", kind_letter(c), oq ? oq : "", q ? q : "");
    else
        printf("%c %s%s%s%s%s\n", kind_letter(c), q ? q : "", c->type == 'd' ? "/" : "",
               c->refused ? "  (refused: " : "", c->refused ? c->refused : "", c->refused ? ")" : "");
    free(q);
    free(oq);
}

static int cmd_show(rf_session *s, rf_changeset *cs, const changes_opts *co)
{
    if (co->json) {
        json_t *o = session_json(s, cs), *arr = json_array();
        for (size_t i = 0; i < rf_changeset_count(cs); i++)
            json_array_append_new(arr, change_json(s, rf_changeset_get(cs, i), false));
        json_object_set_new(o, "changes", arr);
        print_json(o);
        return 0;
    }
    char when[32];
    format_time(rf_session_created(s), when, sizeof when);
    char *ws = rf_change_quote_path(rf_session_workspace(s));
    char *inst = rf_session_instance(s) ? rf_change_quote_path(rf_session_instance(s)) : NULL;
    printf("session    %s\nworkspace  %s\nbegan      %s\n", rf_session_id(s), ws ? ws : "", when);
    if (inst)
        printf("instance   %s\n", inst);
    free(ws);
    free(inst);
    printf("changes    %zu files, %lld bytes\n\n", files_in(cs), rf_changeset_bytes(cs));
    for (size_t i = 0; i < rf_changeset_count(cs); i++)
        print_status_line(rf_changeset_get(cs, i));
    return 0;
}

static void print_stat(rf_session *s, const rf_changeset *cs)
{
    size_t files = 0, tins = 0, tdel = 0;
    for (size_t i = 0; i < rf_changeset_count(cs); i++) {
        const rf_change *c = rf_changeset_get(cs, i);
        if (c->type == 'd')
            continue;
        size_t ins = 0, del = 0;
        char *d = c->kind == RF_CHANGE_REFUSED ? NULL : rf_change_diff(s, c, false, &ins, &del, NULL);
        bool bin = d && strstr(d, "\nBinary files ");
        free(d);
        char *q = rf_change_quote_path(c->path);
        size_t n = ins + del, scale = n > 50 ? n / 50 + 1 : 1;
        printf(" %-40s | ", q ? q : "");
        if (c->kind == RF_CHANGE_REFUSED)
            printf("refused: %s\n", c->refused);
        else if (bin)
            printf("Bin\n");
        else {
            printf("%5zu ", n);
            for (size_t k = 0; k < ins / scale; k++)
                putchar('+');
            for (size_t k = 0; k < del / scale; k++)
                putchar('-');
            putchar('\n');
        }
        free(q);
        files++;
        tins += ins;
        tdel += del;
    }
    printf(" %zu file%s changed, %zu insertion%s(+), %zu deletion%s(-)\n", files, files == 1 ? "" : "s", tins,
           tins == 1 ? "" : "s", tdel, tdel == 1 ? "" : "s");
}

static int cmd_diff(rf_session *s, rf_changeset *cs, const changes_opts *co)
{
    if (co->json) {
        json_t *o = session_json(s, cs), *arr = json_array();
        for (size_t i = 0; i < rf_changeset_count(cs); i++)
            json_array_append_new(arr, change_json(s, rf_changeset_get(cs, i), true));
        json_object_set_new(o, "changes", arr);
        print_json(o);
        return 0;
    }
    if (co->stat) {
        print_stat(s, cs);
        return 0;
    }
    bool color = co->color == 1 || (co->color == -1 && isatty(1) && !getenv("NO_COLOR"));
    /* A terminal acts on what a command wrote into a file (cursor moves,
     * erased lines, OSC 52 clipboard writes): shown, never sent. */
    unsigned flags = (color ? RF_DIFF_COLOR : 0) | (!co->raw && isatty(1) ? RF_DIFF_VISIBLE : 0);
    for (size_t i = 0; i < rf_changeset_count(cs); i++) {
        const rf_change *c = rf_changeset_get(cs, i);
        if (co->name_only) {
            char *q = rf_change_quote_path(c->path);
            if (c->type != 'd')
                printf("%s\n", q ? q : "");
            free(q);
            continue;
        }
        rf_error *err = NULL;
        char *d = rf_change_diff_flags(s, c, flags, NULL, NULL, NULL, &err);
        if (!d)
            return fail(err);
        fputs(d, stdout);
        free(d);
    }
    return 0;
}

static void print_list(FILE *out, const char *label, char *const *paths, const char *why)
{
    for (size_t i = 0; paths && paths[i]; i++) {
        char *q = rf_change_quote_path(paths[i]);
        fprintf(out, "%s: %s%s\n", label, q ? q : "", why ? why : "");
        free(q);
    }
}

static json_t *paths_json(char *const *paths)
{
    json_t *a = json_array();
    for (size_t i = 0; paths && paths[i]; i++)
        json_array_append_new(a, path_json(paths[i]));
    return a;
}

/* On the trail (docs/audit.md): a failure to record is said, not fatal:
 * the workspace has already changed. */
static void record(const char *root, const char *event, rf_session *s, const rf_apply_report *r)
{
    rf_error *err = NULL;
    if (rf_audit_session(root, event, rf_session_id(s), rf_session_workspace(s), r, &err) < 0) {
        fprintf(stderr, "ringfence: warning: %s of session %s is not on the audit trail: %s\n", event,
                rf_session_id(s), rf_error_message(err));
        rf_error_free(err);
    }
}

static int cmd_apply(const char *root, bool audit, rf_session *s, const changes_opts *co)
{
    rf_error *err = NULL;
    rf_apply_report r;
    int rc = rf_session_apply(s, co->only, co->force, &r, &err);
    if (rc < 0)
        return fail(err);
    if (audit)
        record(root, "changes.applied", s, &r);
    if (co->json) {
        print_json(json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "session", rf_session_id(s), "workspace",
                             rf_session_workspace(s), "applied", paths_json(r.applied), "conflicts",
                             paths_json(r.conflicts), "refused", paths_json(r.refused), "failed",
                             paths_json(r.failed)));
    } else {
        print_list(stdout, "applied", r.applied, NULL);
        print_list(stderr, "conflict", r.conflicts, " (changed in the workspace since the session began; kept)");
        print_list(stderr, "refused", r.refused, " (a fifo, socket or device node, or not made by ringfence)");
        print_list(stderr, "failed", r.failed, " (could not be written; the workspace's file is as it was)");
        printf("%zu change%s applied to %s\n", rf_strv_len(r.applied), rf_strv_len(r.applied) == 1 ? "" : "s",
               rf_session_workspace(s));
        if (r.conflicts)
            fprintf(stderr, "hint: review them with 'ringfence changes diff %s', then 'ringfence changes apply %s "
                            "--force' to overwrite\n", rf_session_id(s), rf_session_id(s));
        else if (rc == 1)
            fprintf(stderr, "hint: what was not applied stays in session %s\n", rf_session_id(s));
    }
    rf_apply_report_clear(&r);
    return rc;
}

static const char *const verbs[] = { "list", "show", "diff", "apply", "discard", NULL };

/* Options that belong to another verb are refused, not ignored. */
static int check_verb_options(const char *verb, const changes_opts *co)
{
    if ((co->stat || co->name_only || co->color != -1 || co->raw) && strcmp(verb, "diff"))
        return rf_cli_usage_error("changes", "--stat, --name-only, --color and --raw are for 'changes diff'");
    if ((co->only || co->force) && strcmp(verb, "apply"))
        return rf_cli_usage_error("changes", "--only and --force are for 'changes apply'");
    if (co->json && !strcmp(verb, "discard"))
        return rf_cli_usage_error("changes", "--json: discard prints nothing");
    if (co->stat + co->name_only + co->json > 1)
        return rf_cli_usage_error("changes", "choose one of --stat, --name-only and --json");
    return 0;
}

static int run_verb(const char *root, bool audit, const char *verb, const char *id, changes_opts *co)
{
    if (!strcmp(verb, "list"))
        return cmd_list(root, co);
    rf_error *err = NULL;
    rf_session *s = rf_session_open(root, id, &err);
    if (!s)
        return fail(err);
    int code = 0;
    if (!strcmp(verb, "apply")) {
        code = cmd_apply(root, audit, s, co);
    } else if (!strcmp(verb, "discard")) {
        code = rf_session_discard(s, &err) < 0 ? fail(err) : (printf("session %s discarded\n", id), 0);
        if (code == 0 && audit)
            record(root, "changes.discarded", s, NULL);
    } else {
        rf_changeset *cs = rf_session_diff(s, &err);
        code = !cs ? fail(err) : !strcmp(verb, "show") ? cmd_show(s, cs, co) : cmd_diff(s, cs, co);
        rf_changeset_free(cs);
    }
    rf_session_free(s);
    return code;
}

int rf_cli_changes(int argc, char **argv)
{
    changes_opts co = { 0 };
    int idx = parse(argc, argv, &co), code = RF_EXIT_FAILURE;
    if (idx < 0)
        goto out;
    const char *verb = idx < argc ? argv[idx] : NULL;
    if (co.help || !verb) {
        help(co.help ? stdout : stderr);
        code = co.help ? 0 : RF_EXIT_FAILURE;
        goto out;
    }
    size_t v = 0;
    while (verbs[v] && strcmp(verbs[v], verb))
        v++;
    if (!verbs[v]) {
        code = rf_cli_usage_error("changes", "unknown action '%s': expected list, show, diff, apply or discard", verb);
        goto out;
    }
    int rest = argc - idx - 1;
    bool needs_id = strcmp(verb, "list") != 0;
    /* apply ID --only a b c: the PATHs after the first --only's */
    bool extra_only = !strcmp(verb, "apply") && co.only && rest > 1;
    if ((needs_id && rest < 1) || (!needs_id && rest > 0) || (rest > 1 && !extra_only)) {
        code = rf_cli_usage_error("changes", "%s %s", verb, needs_id ? "needs one session ID" : "takes no ID");
        goto out;
    }
    for (int i = idx + 2; extra_only && i < argc; i++) {
        char **nv = realloc(co.only, (co.n_only + 2) * sizeof *nv);
        if (!nv)
            goto out;
        co.only = nv;
        co.only[co.n_only++] = argv[i];
        co.only[co.n_only] = NULL;
    }
    if (check_verb_options(verb, &co) != 0)
        goto out;
    bool audit = false;
    char *root = instance_root(&audit, &code);
    if (root)
        code = run_verb(root, audit, verb, needs_id ? argv[idx + 1] : NULL, &co);
    free(root);
out:
    free(co.only);
    return code;
}
