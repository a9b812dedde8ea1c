/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tool table: names and arguments as picoclaw's agents know them. One
 * table drives the JSON Schemas of tools/list and the argument checks of
 * tools/call, so what is advertised is what is enforced. The file tools
 * are thin: the fs module does the confinement. */
#include "mcp/mcp.h"
#include "changes/changes.h"
#include "model/policy.h"
#include "util/error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rf_mcp_arg exec_args[] = {
    { "command", RF_MCP_ARG_STRING, true, "the shell command, run as /bin/sh -c COMMAND in the workspace" },
    { "timeout_seconds", RF_MCP_ARG_NUMBER, false,
      "stop the whole process tree after this many seconds (default: the policy's exec timeout, 60)" },
    { "stdin", RF_MCP_ARG_STRING, false,
      "text for the command's standard input, followed by end of file (at most 65536 bytes; default: "
      "empty, /dev/null)" },
    { "tty", RF_MCP_ARG_BOOLEAN, false,
      "run the command on a terminal of its own (a pseudo-terminal inside the sandbox, 80x24) instead of "
      "pipes, for programs that behave differently on a terminal (prompts, REPLs, colour, npm init): "
      "stdin is typed into it, then end of file (Ctrl-D); the result's stdout is what the terminal showed, "
      "stdout and stderr merged as a terminal merges them, with the echo of the typed text and \\r\\n "
      "line ends; stderr is empty (default false)" },
    { 0 },
};
static const rf_mcp_arg read_args[] = {
    { "path", RF_MCP_ARG_STRING, true, "file path, relative to the workspace or absolute inside it" },
    { "offset", RF_MCP_ARG_INTEGER, false, "first line to return, counting from 1 (default 1)" },
    { "limit", RF_MCP_ARG_INTEGER, false, "number of lines to return (default: to the end)" },
    { 0 },
};
static const rf_mcp_arg write_args[] = {
    { "path", RF_MCP_ARG_STRING, true, "file path, relative to the workspace or absolute inside it" },
    { "content", RF_MCP_ARG_STRING, true, "the complete new content of the file" },
    { 0 },
};
static const rf_mcp_arg append_args[] = {
    { "path", RF_MCP_ARG_STRING, true, "file path, relative to the workspace or absolute inside it" },
    { "content", RF_MCP_ARG_STRING, true, "text to add at the end of the file" },
    { 0 },
};
static const rf_mcp_arg edit_args[] = {
    { "path", RF_MCP_ARG_STRING, true, "file path, relative to the workspace or absolute inside it" },
    { "old_text", RF_MCP_ARG_STRING, true, "the exact text to replace; it must occur exactly once" },
    { "new_text", RF_MCP_ARG_STRING, true, "the text to put in its place" },
    { 0 },
};
static const rf_mcp_arg list_args[] = {
    { "path", RF_MCP_ARG_STRING, true, "directory path, relative to the workspace (\".\" for the workspace)" },
    { "recursive", RF_MCP_ARG_BOOLEAN, false, "list the whole tree below path (default false)" },
    { 0 },
};

static json_t *tool_read(rf_mcp_server *s, rf_mcp_call *c, json_t *args);
static json_t *tool_write(rf_mcp_server *s, rf_mcp_call *c, json_t *args);
static json_t *tool_append(rf_mcp_server *s, rf_mcp_call *c, json_t *args);
static json_t *tool_edit(rf_mcp_server *s, rf_mcp_call *c, json_t *args);
static json_t *tool_list(rf_mcp_server *s, rf_mcp_call *c, json_t *args);

static const rf_mcp_arg changes_args[] = {
    { "stat", RF_MCP_ARG_BOOLEAN, false, "only the changed files with their added and removed line counts" },
    { 0 },
};

/* changes_diff: what this connection's commands changed so far (changes:
 * overlay). Applying or discarding stays with the user (`ringfence changes
 * apply|discard ID`): the agent reviews, it does not accept. */
static json_t *tool_changes_diff(rf_mcp_server *s, rf_mcp_call *call, json_t *args)
{
    (void)call;
    bool stat = json_is_true(json_object_get(args, "stat"));
    rf_error *err = NULL;
    rf_session *ses = rf_session_open(s->policy->instance_root, s->policy->session, &err);
    rf_changeset *cs = ses ? rf_session_diff(ses, &err) : NULL;
    char *out = NULL;
    size_t len = 0;
    int rc = cs ? rf_changes_appendf(&out, &len, "session %s: %zu change(s)\n", s->policy->session,
                                     rf_changeset_count(cs)) : -1;
    for (size_t i = 0; rc == 0 && i < rf_changeset_count(cs); i++) {
        const rf_change *c = rf_changeset_get(cs, i);
        size_t ins = 0, del = 0;
        char *d = rf_change_diff(ses, c, false, &ins, &del, &err);
        char *q = rf_change_quote_path(c->path);
        rc = !d || !q ? -1 : stat ? rf_changes_appendf(&out, &len, "%s | +%zu -%zu\n", q, ins, del)
                                 : rf_changes_appendf(&out, &len, "%s", d);
        free(d);
        free(q);
    }
    json_t *r = rc == 0 ? rf_mcp_tool_text(out, false)
                : err  ? rf_mcp_tool_from_error(err)
                       : rf_mcp_tool_text("changes_diff: out of memory", true);
    free(out);
    rf_error_free(err);
    rf_changeset_free(cs);
    rf_session_free(ses);
    return r;
}

static const rf_mcp_tool tools[] = {
    { "exec", "Run a shell command",
      "Run a shell command with /bin/sh -c in a fresh sandbox: the workspace is the working directory "
      "and is writable, system directories are read-only, nothing else of the user's is visible, no "
      "network unless the policy allows it. Commands with dangerous patterns (rm -rf, sudo, curl | sh, "
      "...) or absolute paths outside the workspace are refused. Returns stdout, stderr (each capped) "
      "and the exit code; the whole process tree is stopped at the timeout.",
      exec_args, false, true, false, rf_mcp_tool_exec, rf_mcp_exec_output_schema },
    { "read_file", "Read a file",
      "Read a text file in the workspace, optionally a range of lines (offset, limit). Binary files and "
      "paths outside the workspace are refused.",
      read_args, true, false, true, tool_read, NULL },
    { "write_file", "Write a file",
      "Create or replace a file in the workspace with the given content (parent directories are "
      "created). The replacement is atomic.",
      write_args, false, true, true, tool_write, NULL },
    { "edit_file", "Edit a file",
      "Replace one exact occurrence of old_text with new_text in a file in the workspace. Fails, "
      "changing nothing, if old_text occurs zero or several times: include more context to make it unique.",
      edit_args, false, true, false, tool_edit, NULL },
    { "append_file", "Append to a file",
      "Append content to the end of a file in the workspace (created if missing).",
      append_args, false, false, false, tool_append, NULL },
    { "list_dir", "List a directory",
      "List a directory in the workspace: sorted names, directories end with '/'. With recursive, the "
      "whole tree below it as relative paths.",
      list_args, true, false, true, tool_list, NULL },
    { "changes_diff", "Show the session's changes",
      "Show what the commands of this connection changed in the workspace so far, as a unified diff "
      "(stat: per file line counts). The workspace itself is untouched until the user applies them.",
      changes_args, true, false, true, tool_changes_diff, NULL },
};

/* policy/tools.c decides, for every entry point alike. */
static bool disabled(const rf_mcp_server *s, const char *name)
{
    return !rf_policy_tool_enabled(s->policy, name);
}

/* changes: overlay: the file tools act on the real workspace from out
 * here, which would write past the session (and read what the commands
 * no longer see), so only exec and changes_diff are offered; changes_diff
 * only then. */
static bool offered(const rf_mcp_server *s, const char *name)
{
    bool overlay = s->policy->changes == RF_CHANGES_OVERLAY && s->policy->session;
    bool changes = !strcmp(name, "changes_diff");
    return overlay ? changes || !strcmp(name, "exec") : !changes;
}

const rf_mcp_tool *rf_mcp_tool_find(const rf_mcp_server *s, const char *name)
{
    if (!s->policy || !offered(s, name)) /* the fuzz target's bare server offers nothing */
        return NULL;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (!strcmp(tools[i].name, name))
            return disabled(s, name) ? NULL : &tools[i];
    return NULL;
}

static const char *type_name(rf_mcp_arg_type t)
{
    static const char *const names[] = { "string", "integer", "number", "boolean" };
    return names[t];
}

static json_t *input_schema(const rf_mcp_tool *t)
{
    json_t *props = json_object(), *required = json_array();
    for (const rf_mcp_arg *a = t->args; a->name; a++) {
        json_t *p = json_pack("{s:s, s:s}", "type", type_name(a->type), "description", a->description);
        if (a->type == RF_MCP_ARG_INTEGER)
            json_object_set_new(p, "minimum", json_integer(!strcmp(a->name, "offset") ? 1 : 0));
        if (a->type == RF_MCP_ARG_NUMBER)
            json_object_set_new(p, "exclusiveMinimum", json_integer(0));
        json_object_set_new(props, a->name, p);
        if (a->required)
            json_array_append_new(required, json_string(a->name));
    }
    return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required", required,
                     "additionalProperties", 0);
}

json_t *rf_mcp_tools_list(const rf_mcp_server *s)
{
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        const rf_mcp_tool *t = &tools[i];
        if (!rf_mcp_tool_find(s, t->name))
            continue;
        json_t *o = json_pack("{s:s, s:s, s:o}", "name", t->name, "description", t->description, "inputSchema",
                              input_schema(t));
        if (rf_mcp_has_structured_output(s)) {
            json_object_set_new(o, "title", json_string(t->title));
            if (t->output_schema)
                json_object_set_new(o, "outputSchema", t->output_schema());
        }
        if (rf_mcp_has_tool_annotations(s))
            json_object_set_new(o, "annotations",
                                json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint",
                                          t->read_only, "destructiveHint", t->destructive, "idempotentHint",
                                          t->idempotent, "openWorldHint",
                                          t->run == rf_mcp_tool_exec && s->policy->network != RF_NET_NONE));
        json_array_append_new(list, o);
    }
    return json_pack("{s:o}", "tools", list);
}

static char *why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *why(const char *fmt, ...)
{
    char *out = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&out, fmt, ap) < 0)
        out = NULL;
    va_end(ap);
    return out ? out : strdup("invalid arguments");
}

static bool type_ok(const rf_mcp_arg *a, json_t *v)
{
    switch (a->type) {
    case RF_MCP_ARG_STRING: return json_is_string(v);
    case RF_MCP_ARG_BOOLEAN: return json_is_boolean(v);
    case RF_MCP_ARG_NUMBER: return json_is_number(v) && isfinite(json_number_value(v));
    case RF_MCP_ARG_INTEGER:
        /* JSON has one number type: 5.0 is an integer too. */
        if (json_is_integer(v))
            return true;
        return json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) && fabs(json_real_value(v)) < 9e15;
    }
    return false;
}

char *rf_mcp_tool_check_args(const rf_mcp_tool *t, json_t *args)
{
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v) {
        const rf_mcp_arg *a = t->args;
        while (a->name && strcmp(a->name, key))
            a++;
        if (!a->name)
            return why("unknown argument \"%.64s\"", key);
        if (!type_ok(a, v))
            return why("argument \"%s\" must be a%s %s", key, a->type == RF_MCP_ARG_INTEGER ? "n" : "",
                       type_name(a->type));
        if (a->type == RF_MCP_ARG_INTEGER && json_number_value(v) < 0)
            return why("argument \"%s\" must not be negative", key);
    }
    for (const rf_mcp_arg *a = t->args; a->name; a++)
        if (a->required && !json_object_get(args, a->name))
            return why("missing required argument \"%s\"", a->name);
    return NULL;
}

/* ── Results ─────────────────────────────────────────────────────────── */

json_t *rf_mcp_tool_text(const char *text, bool is_error)
{
    size_t n;
    char *clean = rf_mcp_utf8_sanitize(text, strlen(text), &n);
    if (!clean)
        return NULL;
    json_t *res = json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type", "text", "text", clean, n, "isError",
                            is_error);
    free(clean);
    return res;
}

json_t *rf_mcp_tool_textf(bool is_error, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (r < 0)
        return NULL;
    json_t *res = rf_mcp_tool_text(text, is_error);
    free(text);
    return res;
}

json_t *rf_mcp_tool_from_error(const rf_error *err)
{
    const char *msg = err ? rf_error_message(err) : "failed";
    const char *hint = err ? rf_error_hint(err) : NULL;
    if (hint)
        return rf_mcp_tool_textf(true, "%s\nhint: %s", msg, hint);
    return rf_mcp_tool_text(msg, true);
}

/* ── File tools ──────────────────────────────────────────────────────── */

static const char *str_arg(json_t *args, const char *key)
{
    return json_string_value(json_object_get(args, key));
}

static uint64_t uint_arg(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return v ? (uint64_t)json_number_value(v) : 0;
}

/* A path or text argument with a NUL inside would be cut short by C. */
static bool has_nul(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return v && json_string_length(v) != strlen(json_string_value(v));
}

/* The answer of a file tool: the error, or "<done> <path>". */
static json_t *fs_result(rf_mcp_server *s, const char *tool, int rc, rf_error *err, const char *done,
                         const char *path)
{
    json_t *res;
    if (rc < 0) {
        rf_mcp_log(s, RF_MCP_LOG_INFO, "%s %.200s: %s", tool, path, rf_error_message(err));
        res = rf_mcp_tool_from_error(err);
    } else {
        res = rf_mcp_tool_textf(false, "%s %s", done, path);
    }
    rf_error_free(err);
    return res;
}

static json_t *tool_read(rf_mcp_server *s, rf_mcp_call *c, json_t *args)
{
    (void)c;
    if (has_nul(args, "path"))
        return rf_mcp_tool_text("read_file: path contains a NUL byte", true);
    char *out = NULL;
    size_t len = 0;
    rf_error *err = NULL;
    pthread_mutex_lock(&s->fs_lock);
    int rc = rf_fs_read(s->fs, str_arg(args, "path"), uint_arg(args, "offset"), uint_arg(args, "limit"), &out, &len,
                        &err);
    pthread_mutex_unlock(&s->fs_lock);
    if (rc < 0)
        return fs_result(s, "read_file", rc, err, NULL, str_arg(args, "path"));
    size_t n;
    char *clean = rf_mcp_utf8_sanitize(out, len, &n);
    free(out);
    json_t *res = clean ? json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type", "text", "text", clean, n, "isError",
                                    0)
                        : NULL;
    free(clean);
    return res;
}

static json_t *tool_write(rf_mcp_server *s, rf_mcp_call *c, json_t *args)
{
    (void)c;
    if (has_nul(args, "path"))
        return rf_mcp_tool_text("write_file: path contains a NUL byte", true);
    json_t *content = json_object_get(args, "content");
    rf_error *err = NULL;
    pthread_mutex_lock(&s->fs_lock);
    int rc = rf_fs_write(s->fs, str_arg(args, "path"), json_string_value(content), json_string_length(content), &err);
    pthread_mutex_unlock(&s->fs_lock);
    return fs_result(s, "write_file", rc, err, "wrote", str_arg(args, "path"));
}

static json_t *tool_append(rf_mcp_server *s, rf_mcp_call *c, json_t *args)
{
    (void)c;
    if (has_nul(args, "path"))
        return rf_mcp_tool_text("append_file: path contains a NUL byte", true);
    json_t *content = json_object_get(args, "content");
    rf_error *err = NULL;
    pthread_mutex_lock(&s->fs_lock);
    int rc = rf_fs_append(s->fs, str_arg(args, "path"), json_string_value(content), json_string_length(content),
                          &err);
    pthread_mutex_unlock(&s->fs_lock);
    return fs_result(s, "append_file", rc, err, "appended to", str_arg(args, "path"));
}

static json_t *tool_edit(rf_mcp_server *s, rf_mcp_call *c, json_t *args)
{
    (void)c;
    if (has_nul(args, "path") || has_nul(args, "old_text") || has_nul(args, "new_text"))
        return rf_mcp_tool_text("edit_file: arguments must not contain NUL bytes", true);
    rf_error *err = NULL;
    pthread_mutex_lock(&s->fs_lock);
    int rc = rf_fs_edit(s->fs, str_arg(args, "path"), str_arg(args, "old_text"), str_arg(args, "new_text"), &err);
    pthread_mutex_unlock(&s->fs_lock);
    return fs_result(s, "edit_file", rc, err, "edited", str_arg(args, "path"));
}

static json_t *tool_list(rf_mcp_server *s, rf_mcp_call *c, json_t *args)
{
    (void)c;
    if (has_nul(args, "path"))
        return rf_mcp_tool_text("list_dir: path contains a NUL byte", true);
    char **entries = NULL;
    rf_error *err = NULL;
    bool recursive = json_is_true(json_object_get(args, "recursive"));
    pthread_mutex_lock(&s->fs_lock);
    int rc = rf_fs_list(s->fs, str_arg(args, "path"), recursive, 0, &entries, &err);
    pthread_mutex_unlock(&s->fs_lock);
    if (rc < 0)
        return fs_result(s, "list_dir", rc, err, NULL, str_arg(args, "path"));
    size_t total = 64, n = 0;
    for (size_t i = 0; entries && entries[i]; i++, n++)
        total += strlen(entries[i]) + 1;
    char *text = malloc(total), *p = text;
    if (text) {
        for (size_t i = 0; i < n; i++)
            p += sprintf(p, "%s\n", entries[i]);
        if (rc == 1)
            p += sprintf(p, "[... listing stopped after %zu entries]\n", n);
        else if (n == 0)
            p += sprintf(p, "(empty directory)\n");
    }
    rf_fs_entries_free(entries);
    json_t *res = text ? rf_mcp_tool_text(text, false) : NULL;
    free(text);
    return res;
}
