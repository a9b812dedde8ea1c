/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report of an observed run (ringfence learn, run --explain-denials;
 * runner.c calls it once the command has ended): which hidden or
 * read-only paths it looked for and which names the proxy refused, with
 * the rule or flag that would allow each (docs/learn.md). learn --write
 * FILE writes the rules as a YAML policy layer for --config FILE. Flagged
 * places (secrets, shell start-up files, daemon sockets) are named with
 * why, never written. */
#include "cli.h"
#include "options.h"

#include "util/cleanup.h"
#include "util/printable.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

#define EXPLAIN_MAX_LINES 10

/* A path or name for a terminal or a YAML comment: a hostile command
 * chooses these bytes, so no control character (C0, DEL, C1, a bidi
 * override) is written as itself: "^[", "\u009b", "\xff" instead. */
static void put_clean(FILE *out, const char *s)
{
    if (!s)
        return;
    char *v = rf_visible(s, strlen(s), NULL);
    fputs(v ? v : "?", out);
    free(v);
}

/* ~/x for a path in the caller's home. */
static void put_path(FILE *out, const char *path)
{
    const char *home = getenv("HOME");
    size_t n = home ? strlen(home) : 0;
    if (n > 1 && !strncmp(path, home, n) && path[n] == '/') {
        fputc('~', out);
        path += n;
    }
    put_clean(out, path);
}

/* The run option that would add this rule. */
static void put_flag(FILE *out, const json_t *rule)
{
    const char *target = json_string_value(json_object_get(rule, "target"));
    const char *mode = json_string_value(json_object_get(rule, "mode"));
    fputs("--expose ", out);
    put_path(out, json_string_value(json_object_get(rule, "source")));
    if (target) {
        fputc(':', out);
        put_clean(out, target);
    }
    if (mode && !strcmp(mode, "rw"))
        fputs(":rw", out);
}

static void explain_denials(const json_t *s)
{
    size_t n_paths = json_array_size(json_object_get(s, "expose"));
    size_t n_names = json_array_size(json_object_get(s, "allow_domain"));
    if (n_paths + n_names == 0)
        return;
    fprintf(stderr, "ringfence: denials: the command looked for %zu hidden or read-only place%s and %zu refused "
                    "name%s:\n", n_paths, n_paths == 1 ? "" : "s", n_names, n_names == 1 ? "" : "s");
    size_t lines = 0, i;
    json_t *r;
    json_array_foreach(json_object_get(s, "expose"), i, r) {
        if (lines++ >= EXPLAIN_MAX_LINES)
            break;
        const json_t *paths = json_object_get(r, "paths");
        const char *flag = json_string_value(json_object_get(r, "flagged"));
        fputs("  ", stderr);
        put_path(stderr, json_string_value(json_array_get(paths, 0)));
        fprintf(stderr, " (%s%s%s) → ", json_string_value(json_object_get(r, "why")), flag ? "; flagged: " : "",
                flag ? flag : "");
        if (json_is_true(json_object_get(r, "never")))
            fputs("not to be allowed", stderr);
        else
            put_flag(stderr, r);
        fputc('\n', stderr);
    }
    json_array_foreach(json_object_get(s, "allow_domain"), i, r) {
        if (lines++ >= EXPLAIN_MAX_LINES)
            break;
        fputs("  ", stderr);
        put_clean(stderr, json_string_value(json_object_get(r, "name")));
        fputs(" (refused by the proxy) → --allow-domain ", stderr);
        put_clean(stderr, json_string_value(json_object_get(r, "name")));
        fputc('\n', stderr);
    }
    if (lines > EXPLAIN_MAX_LINES)
        fprintf(stderr, "  ... and %zu more: 'ringfence learn' lists them all\n", lines - EXPLAIN_MAX_LINES);
}

/* The full report of learn, on stderr (stdout is the command's). */
static void report(const json_t *s)
{
    size_t i;
    json_t *r;
    const char *k;
    fprintf(stderr, "ringfence: learn: what the command looked for, and the rules that would allow it:\n");
    json_array_foreach(json_object_get(s, "expose"), i, r) {
        const char *flag = json_string_value(json_object_get(r, "flagged"));
        fputs(flag ? "  FLAGGED, not suggested: " : "  ", stderr);
        put_path(stderr, json_string_value(json_object_get(r, "source")));
        fprintf(stderr, " (%s): %s; %lld path%s, e.g. ", json_string_value(json_object_get(r, "mode")),
                flag ? flag : json_string_value(json_object_get(r, "why")),
                (long long)json_integer_value(json_object_get(r, "count")),
                json_integer_value(json_object_get(r, "count")) == 1 ? "" : "s");
        put_path(stderr, json_string_value(json_array_get(json_object_get(r, "paths"), 0)));
        if (!json_is_true(json_object_get(r, "never"))) {
            fputs("\n    ", stderr);
            put_flag(stderr, r);
        }
        fputc('\n', stderr);
    }
    json_object_foreach(json_object_get(s, "keep_env"), k, r) {
        fprintf(stderr, "  keep_env %s: ", k);
        put_clean(stderr, json_string_value(r));
        fprintf(stderr, "\n    --keep-env %s\n", k);
    }
    json_array_foreach(json_object_get(s, "allow_domain"), i, r) {
        fputs("  allow_domain ", stderr);
        put_clean(stderr, json_string_value(json_object_get(r, "name")));
        fputs(": refused by the proxy\n    --allow-domain ", stderr);
        put_clean(stderr, json_string_value(json_object_get(r, "name")));
        fputc('\n', stderr);
    }
    if (!json_array_size(json_object_get(s, "expose")) && !json_object_size(json_object_get(s, "keep_env")) &&
        !json_array_size(json_object_get(s, "allow_domain")))
        fprintf(stderr, "  nothing: the command found everything it looked for\n");
    fprintf(stderr, "  (%lld calls observed, %lld with an unreadable path, %lld distinct paths past the limit; "
                    "variables read with getenv are not system calls: only the ones named above are known)\n",
            (long long)json_integer_value(json_object_get(s, "notifications")),
            (long long)json_integer_value(json_object_get(s, "unreadable")),
            (long long)json_integer_value(json_object_get(s, "dropped")));
}

/* A YAML scalar: JSON's quoting, which YAML's double-quoted style reads. */
static void put_scalar(FILE *out, const char *s)
{
    json_t *j = json_string(s ? s : "");
    char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(q ? q : "\"\"", out);
    free(q);
    json_decref(j);
}

/* A path as the config loader reads it, portable where it can be: ~/ for
 * the caller's home, $RINGFENCE_HOME for the instance root (so the layer
 * still fits when that root moves). */
static void put_config_path(FILE *f, const char *path, const char *root)
{
    const char *home = getenv("HOME");
    size_t hl = home ? strlen(home) : 0, rl = root ? strlen(root) : 0;
    const char *prefix = "", *rest = path;
    if (rl > 1 && !strncmp(path, root, rl) && path[rl] == '/')
        prefix = "$RINGFENCE_HOME", rest = path + rl;
    else if (hl > 1 && !strncmp(path, home, hl) && path[hl] == '/')
        prefix = "~", rest = path + hl;
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (!m)
        return;
    fputs(prefix, m);
    for (; *rest; rest++) /* a literal '$' would read as a variable: "$$" is one */
        fputs(*rest == '$' ? "$$" : (char[2]){ *rest, 0 }, m);
    if (fclose(m) == 0)
        put_scalar(f, out);
    free(out);
}

static void yaml_expose(FILE *f, const json_t *s, const char *root)
{
    size_t i, n = 0;
    json_t *r;
    json_array_foreach(json_object_get(s, "expose"), i, r) {
        if (json_object_get(r, "flagged"))
            continue;
        if (n++ == 0)
            fputs("expose:\n", f);
        fprintf(f, "  # %s; e.g. ", json_string_value(json_object_get(r, "why")));
        put_clean(f, json_string_value(json_array_get(json_object_get(r, "paths"), 0)));
        fprintf(f, " (%lld seen)\n  - { source: ", (long long)json_integer_value(json_object_get(r, "count")));
        put_config_path(f, json_string_value(json_object_get(r, "source")), root);
        if (json_object_get(r, "target")) {
            fputs(", target: ", f);
            put_config_path(f, json_string_value(json_object_get(r, "target")), root);
        }
        fprintf(f, ", mode: %s }\n", json_string_value(json_object_get(r, "mode")));
    }
}

static void yaml_rest(FILE *f, const json_t *s)
{
    const char *k;
    json_t *r;
    size_t i;
    if (json_object_size(json_object_get(s, "keep_env")))
        fputs("env:\n  keep:\n", f);
    json_object_foreach(json_object_get(s, "keep_env"), k, r) {
        fputs("    # ", f);
        put_clean(f, json_string_value(r));
        fprintf(f, "\n    - %s\n", k);
    }
    if (json_array_size(json_object_get(s, "allow_domain")))
        fputs("network:\n  mode: allowlist\n  allow_domains:\n", f);
    json_array_foreach(json_object_get(s, "allow_domain"), i, r) {
        fputs("    # refused by the proxy: ", f);
        put_clean(f, json_string_value(json_object_get(r, "why")));
        fputs("\n    - ", f);
        put_scalar(f, json_string_value(json_object_get(r, "name")));
        fputc('\n', f);
    }
    bool head = false;
    json_array_foreach(json_object_get(s, "expose"), i, r) {
        const char *flag = json_string_value(json_object_get(r, "flagged"));
        if (!flag)
            continue;
        if (!head)
            fputs("# Flagged, NOT written (add one by hand only if you mean it):\n", f);
        head = true;
        fputs("#   ", f);
        put_clean(f, json_string_value(json_object_get(r, "source")));
        fprintf(f, ": %s\n", flag);
    }
}

static int write_layer(const rf_cli_opts *o, const rf_plan *plan, const json_t *s)
{
    /* The instance root, for targets in the sandbox's own home. */
    char *plan_json = rf_plan_to_json(plan);
    json_t *pj = plan_json ? json_loads(plan_json, 0, NULL) : NULL;
    free(plan_json);
    const char *root = json_string_value(json_object_get(pj, "instance_root"));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# Written by 'ringfence learn' on %s for:", when);
    for (size_t i = 0; o->command && o->command[i] && i < 16; i++) {
        fputc(' ', f);
        put_clean(f, o->command[i]);
    }
    fputs("\n# Use: ringfence run --config THIS-FILE -- COMMAND. Each rule says why; review before use.\n", f);
    fputs("merge_strategy: extend\n", f);
    yaml_expose(f, s, root);
    yaml_rest(f, s);
    json_decref(pj);
    if (fclose(f) != 0) {
        free(text);
        return -1;
    }
    int rc = rf_cli_write_atomic(o->write_file, text, len);
    free(text);
    return rc;
}

/* The workspace's host path (its mount's source), or NULL: no rule
 * learn suggests holds it. */
static char *plan_workspace(const rf_plan *plan)
{
    _cleanup_free_ char *text = rf_plan_to_json(plan);
    json_t *pj = text ? json_loads(text, 0, NULL) : NULL, *m;
    char *ws = NULL;
    size_t i;
    json_array_foreach(json_object_get(pj, "mounts"), i, m) {
        const char *why = json_string_value(json_object_get(m, "why"));
        const char *src = json_string_value(json_object_get(m, "source"));
        if (!ws && why && src && !strcmp(why, "workspace"))
            ws = strdup(src);
    }
    json_decref(pj);
    return ws;
}

/* Every path unreadable: the command's memory was out of our reach. */
static void warn_unreadable(const json_t *s)
{
    json_int_t seen = json_integer_value(json_object_get(s, "notifications"));
    json_int_t bad = json_integer_value(json_object_get(s, "unreadable"));
    if (seen > 0 && bad * 2 > seen) {
        fprintf(stderr, "ringfence: warning: the paths of %lld of %lld observed calls could not be read from the "
                        "command's memory\n", (long long)bad, (long long)seen);
        fprintf(stderr, "hint: process_vm_readv needs ptrace access: check /proc/sys/kernel/yama/ptrace_scope "
                        "(0 or 1 work)\n");
    }
}

int rf_cli_observed(const rf_cli_opts *o, const rf_plan *plan, rf_proc *proc, const rf_status *st)
{
    if (st->setup_error) { /* already said; nothing ran, so nothing was seen */
        if (o->learn)
            fprintf(stderr, "ringfence: learn: the sandbox did not start: nothing observed%s\n",
                    o->write_file ? ", nothing written" : "");
        return 0;
    }
    _cleanup_free_ char *obs = rf_proc_observations(proc);
    _cleanup_free_ char *ws = plan_workspace(plan);
    rf_error *err = NULL;
    _cleanup_free_ char *text = rf_observe_suggest_in(obs, st->network_json, getenv("HOME"), ws, environ, &err);
    json_t *s = text ? json_loads(text, 0, NULL) : NULL;
    if (!s) {
        fprintf(stderr, "ringfence: cannot make the report: %s\n", err ? rf_error_message(err) : "out of memory");
        rf_error_free(err);
        return o->learn ? -1 : 0;
    }
    if (o->learn)
        report(s);
    else
        explain_denials(s);
    warn_unreadable(s);
    int rc = 0;
    if (o->learn && o->write_file) {
        if (write_layer(o, plan, s) < 0) {
            fprintf(stderr, "ringfence: cannot write %s: %s\n", o->write_file, strerror(errno));
            rc = -1;
        } else {
            fprintf(stderr, "ringfence: learn: wrote %s; use it with --config %s\n", o->write_file, o->write_file);
        }
    }
    json_decref(s);
    return rc;
}
