/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec tool: the guard first, then `/bin/sh -c COMMAND` in a fresh
 * sandbox of the server's policy (a plain command's words without the
 * shell, with the meaning it gives them: plan/plain.c), with stdout and
 * stderr captured through pipes, each kept up to a cap (the rest is read
 * and counted, so the command never blocks on a full pipe). When the call
 * carries a progressToken, the captured lines also go out as they come
 * (progress.c). */
#include "backend/backend.h"
#include "mcp/mcp.h"
#include "audit/run.h"
#include "plan/build.h"
#include "pool/pool.h"
#include "proc/proc.h"
#include "tty/tty.h"
#include "model/policy.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An exec may ask for at most a day; the policy's --timeout caps it further. */
#define RF_MCP_MAX_EXEC_TIMEOUT 86400.0
/* The stdin argument is written into a pipe before the command starts, so
 * it must fit one (a pipe holds 64 KiB unless the user's pipes are over
 * pipe-user-pages-soft; see make_stdin). */
#define RF_MCP_MAX_STDIN 65536u
/* tty: the terminal's size; no window to follow, so a usual default. */
#define RF_MCP_TTY_ROWS 24
#define RF_MCP_TTY_COLS 80

/* What one exec asks for besides the command. */
typedef struct exec_input {
    bool tty;          /* a terminal of its own: stdio is the pty's slave */
    const char *stdin; /* NULL: /dev/null (tty: nothing typed, then EOF) */
    size_t stdin_len;
} exec_input;

static void capture_chunk(rf_mcp_capture *c, const char *data, size_t n)
{
    size_t room = c->cap - c->len;
    size_t keep = n < room ? n : room;
    memcpy(c->buf + c->len, data, keep);
    c->len += keep;
    c->dropped += n - keep;
}

/* One read from a pipe that poll found readable or hung up. Returns its
 * fd, or -1 once it reached the end (and was closed). Progress goes out
 * from here, so all of it precedes the answer. */
static int drain_once(rf_mcp_exec_io *io, rf_mcp_capture *c)
{
    char chunk[16384];
    ssize_t r = read(c->fd, chunk, sizeof chunk);
    if (r > 0) {
        capture_chunk(c, chunk, (size_t)r);
        rf_mcp_progress_flush(io, c, false);
    } else if (r == 0 || errno != EINTR) {
        close(c->fd);
        c->fd = -1;
        rf_mcp_progress_flush(io, c, true); /* a last line without its newline */
    }
    return c->fd;
}

/* rf_proc_watch's ready(): the waiting thread reads the pipes itself. */
static int pipe_ready(void *ud, size_t i)
{
    rf_mcp_exec_io *io = ud;
    return drain_once(io, &io->caps[i]);
}

/* The captured bytes as valid UTF-8, with a marker when some were cut. */
static char *capture_text(const rf_mcp_capture *c)
{
    size_t n;
    char *text = rf_mcp_utf8_sanitize(c->buf, c->len, &n);
    if (!text || !c->dropped)
        return text;
    char marker[64];
    int m = snprintf(marker, sizeof marker, "\n[... truncated %zu bytes]", c->dropped);
    char *out = realloc(text, n + (size_t)m + 1);
    if (!out) {
        free(text);
        return NULL;
    }
    memcpy(out + n, marker, (size_t)m + 1);
    return out;
}

json_t *rf_mcp_exec_output_schema(void)
{
    return json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}, s:[s,s,s,s]}",
                     "type", "object", "properties",
                     "exit_code", "type", "integer", "description",
                     "the command's exit code; 128+N if it died of signal N; 124 timed out",
                     "stdout", "type", "string", "description", "standard output (capped, with a truncation marker)",
                     "stderr", "type", "string", "description", "standard error (capped, with a truncation marker)",
                     "timed_out", "type", "boolean", "description",
                     "the timeout expired and the whole process tree was stopped",
                     "status", "type", "object", "description",
                     "ringfence's status record: signal, wall/user/sys seconds, peak memory, setup error",
                     "required", "exit_code", "stdout", "stderr", "timed_out");
}

static double exec_timeout(const rf_mcp_server *s, json_t *args, char **why)
{
    const rf_policy *p = s->policy;
    /* --timeout (limits.timeout) is the default and the ceiling. */
    double t = p->limits.timeout_s > 0 ? p->limits.timeout_s : p->tools.exec.timeout_s;
    json_t *v = json_object_get(args, "timeout_seconds");
    if (v) {
        double asked = json_number_value(v);
        if (!(asked > 0) || asked > RF_MCP_MAX_EXEC_TIMEOUT) {
            *why = strdup("timeout_seconds must be a number of seconds above 0 and at most 86400");
            return -1;
        }
        t = asked;
        if (p->limits.timeout_s > 0 && t > p->limits.timeout_s)
            t = p->limits.timeout_s;
    }
    return t > 0 ? t : 60;
}

/* The guard's verdict; NULL if the command may run, else a tool error. */
static json_t *guard_command(rf_mcp_server *s, const char *command)
{
    rf_guard_verdict v;
    memset(&v, 0, sizeof v);
    rf_error *err = NULL;
    int rc = rf_guard_check(s->guard, command, &v, &err); /* thread-safe */
    json_t *res = NULL;
    if (rc < 0) {
        res = rf_mcp_tool_from_error(err);
    } else if (v.result != RF_GUARD_ALLOWED) {
        rf_mcp_log(s, RF_MCP_LOG_INFO, "exec blocked: %s%s%s", v.message, v.detail ? ": " : "",
                   v.detail ? v.detail : "");
        rf_audit_guard_refused(s->policy, command, &v);
        /* The seed 001 message first (agents match on it), then what tripped it. */
        res = v.detail ? rf_mcp_tool_textf(true, "%s\n%s: %s", v.message,
                                           v.result == RF_GUARD_BLOCKED_PATH ? "path" : "matched", v.detail)
                       : rf_mcp_tool_text(v.message, true);
    }
    rf_guard_verdict_clear(&v);
    rf_error_free(err);
    return res;
}

static rf_plan *exec_plan(rf_mcp_server *s, const char *command, double timeout, rf_error **err)
{
    rf_plan *plan = rf_plan_build_command(s->policy, command, timeout, err);
    /* network.ask: mcp: the client asks its user when it can (elicitation);
     * otherwise refused names are refused, and the result names them. */
    if (plan && plan->net.ask && plan->net.ask_via && !strcmp(plan->net.ask_via, "mcp")) {
        if (s->client_elicits)
            rf_plan_set_ask(plan, rf_mcp_elicit_ask, s);
        else
            plan->net.ask = false;
    }
    /* The same warnings every call: say them once. */
    if (plan && !__atomic_exchange_n(&s->warned_plan, true, __ATOMIC_RELAXED)) {
        char *const *w = rf_plan_warnings(plan);
        for (size_t i = 0; w && w[i]; i++)
            rf_mcp_log(s, RF_MCP_LOG_WARNING, "%s", w[i]);
    }
    return plan;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
}

/* The sandbox for one call: a ready one from the pool, handed argv, or
 * (argv NULL) one built now from the plan, which holds the command. */
static rf_proc *start(rf_mcp_server *s, const rf_plan *plan, char *const *argv, double timeout,
                      const rf_stdio *stdio, rf_error **err)
{
    if (!argv)
        return rf_spawn(plan, stdio, err);
    const char *cwd = s->policy->chdir ? s->policy->chdir : s->policy->workspace;
    /* What /bin/sh exports to a command it runs: the directory it started
     * in. Set for the shell too, so both ways give the same environment. */
    _cleanup_free_ char *pwd = NULL;
    if (asprintf(&pwd, "PWD=%s", cwd) < 0) {
        rf_error_set(err, ENOMEM, "exec");
        return NULL;
    }
    char *env_add[] = { pwd, NULL };
    rf_pool_request req = { .argv = argv, .env_add = env_add, .cwd = cwd, .stdio = *stdio, .timeout_s = timeout };
    return rf_pool_start(s->pool, &req, NULL, err);
}

void rf_mcp_exec_release(rf_mcp_server *s, rf_proc *proc)
{
    if (s->pool)
        rf_pool_retire(s->pool, proc);
    else
        rf_proc_free(proc);
}

/* The command's stdin when the call gives one (or a tty): the stdin
 * argument in a pipe, written whole now and closed, so the reader sees its
 * end. Never blocks: what the pipe cannot hold is refused. */
static int make_stdin(const exec_input *in, rf_error **err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        return rf_error_set(err, errno, "exec: stdin: create a pipe");
    if (in->stdin_len > 0)
        (void)fcntl(p[1], F_SETPIPE_SZ, (int)in->stdin_len); /* may fail: the write tells */
    ssize_t n = in->stdin_len > 0 ? write(p[1], in->stdin, in->stdin_len) : 0;
    close(p[1]);
    if (n < 0 || (size_t)n != in->stdin_len) {
        close(p[0]);
        return rf_error_set(err, n < 0 ? errno : ENOBUFS,
                            "exec: stdin: %zu bytes do not fit a pipe (too many pipes open by this user?)",
                            in->stdin_len);
    }
    /* The command's side blocks as a pipe's reader does. */
    (void)fcntl(p[0], F_SETFL, 0);
    return p[0];
}

/* tty: what the terminal showed, relayed from the pty's master (tty/),
 * kept as stdout is. */
static void tty_output(void *ud, const char *buf, size_t n)
{
    rf_mcp_exec_io *io = ud;
    capture_chunk(&io->caps[0], buf, n);
    rf_mcp_progress_flush(io, &io->caps[0], false);
}

/* tty: always a sandbox built now (a warm pool's cannot make a pty), whose
 * relay reads the stdin pipe into the pty (then the end-of-file character)
 * and hands what the terminal shows to tty_output: the server's own stdio,
 * the MCP stream, is never the relay's. */
static int run_tty(rf_mcp_server *s, rf_mcp_call *call, const rf_plan *plan, int input, rf_mcp_exec_io *io,
                   rf_status *st, rf_error **err)
{
    rf_tty_sink sink = { .in = input, .out = tty_output, .ud = io,
                         .size = { .ws_row = RF_MCP_TTY_ROWS, .ws_col = RF_MCP_TTY_COLS } };
    rf_stdio stdio = { RF_STDIO_PTY, RF_STDIO_PTY, RF_STDIO_PTY };
    /* sink lives on this stack until the wait below is over; the proc is
     * freed later (call->finished), but its relay is done with the sink
     * once rf_proc_wait has finished it. */
    rf_proc *proc = rf_spawn_with_sink(plan, &stdio, &sink, err);
    if (!proc)
        return -1;
    rf_mcp_call_attach(call, proc);
    /* The relay runs in the wait loop and ends when the whole tree is gone,
     * having handed over the terminal's last output. */
    int rc = rf_proc_wait_watching(proc, NULL, st, err);
    rf_mcp_call_detach(call);
    call->finished = proc;
    rf_mcp_progress_flush(io, &io->caps[0], true);
    return rc;
}

/* Spawn, capture and wait; fills st. Returns < 0 if the sandbox could not
 * be started or waited for. */
static int run_captured(rf_mcp_server *s, rf_mcp_call *call, const rf_plan *plan, char *const *argv,
                        const exec_input *in, double timeout, rf_mcp_exec_io *io, rf_status *st, rf_error **err)
{
    int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
    /* Without one, the server's /dev/null: opened once, not on every call. */
    bool own_input = in->stdin || in->tty;
    _cleanup_close_ int input = own_input ? make_stdin(in, err) : -1;
    if (own_input && input < 0)
        return -1;
    if (in->tty) /* no pipes: the relay hands the pty's output to tty_output */
        return run_tty(s, call, plan, input, io, st, err);
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
        close_pair(out);
        return rf_error_set(err, errno, "exec: create pipes");
    }
    rf_stdio stdio = { own_input ? input : s->devnull, out[1], errp[1] };
    rf_proc *proc = start(s, plan, argv, timeout, &stdio, err);
    rf_mcp_capture *caps = io->caps;
    caps[0].fd = out[0];
    caps[1].fd = errp[0];
    if (!proc) {
        close_pair(out);
        close_pair(errp);
        return -1;
    }
    rf_mcp_call_attach(call, proc);
    /* This thread reads the pipes while it waits: a full pipe never
     * blocks the command, and no second thread is started per call. Our
     * copies of the write ends stay open until the status is in: the
     * pipes then never hang up during the wait, and the command's exit
     * wakes this thread once (init's status), not twice (the hang-up,
     * then the status) while init still needs a CPU to report. */
    rf_proc_watch watch = { .fd = { caps[0].fd, caps[1].fd }, .ready = pipe_ready, .ud = io };
    int rc = rf_proc_wait_watching(proc, &watch, st, err);
    rf_mcp_call_detach(call);
    call->finished = proc; /* freed once the answer is out (calls.c) */
    /* The tree is gone (init reports only then): with ours closed, the
     * pipes end once what is left in them is read. */
    close(out[1]);
    close(errp[1]);
    rf_proc_watch_finish(&watch);
    return rc;
}

/* Without the pool, the plan holds the command (rf_plan_build_command
 * chose its words or the shell). With it, a plain command goes to a
 * sandbox as its words; if its program could not be executed (not found,
 * not executable, no #! line) nothing ran, and the shell then runs the
 * command in a fresh sandbox, so the message and exit code (127, 126) are
 * the shell's own, exactly as if it had gone to /bin/sh -c at first. */
static int run_command(rf_mcp_server *s, rf_mcp_call *call, const rf_plan *plan, const char *command,
                       const exec_input *in, double timeout, rf_mcp_exec_io *io, rf_status *st, rf_error **err)
{
    if (!s->pool || in->tty)
        return run_captured(s, call, plan, NULL, in, timeout, io, st, err);
    _cleanup_free_ char **words = rf_plan_plain_argv(command);
    if (words) {
        int rc = run_captured(s, call, plan, words, in, timeout, io, st, err);
        bool nothing_ran = call->finished && call->finished->exec_errno && !io->caps[0].len && !io->caps[1].len;
        if (rc < 0 || !nothing_ran)
            return rc;
        rf_mcp_exec_release(s, call->finished);
        call->finished = NULL;
        rf_status_clear(st);
        memset(st, 0, sizeof *st);
    }
    char *shell[] = { (char *)"/bin/sh", (char *)"-c", (char *)command, NULL };
    return run_captured(s, call, plan, shell, in, timeout, io, st, err);
}

/* "[network: refused a.example:443 (not in allow_domains), ...]\n" from
 * the status record, so the agent can tell its user which host the
 * command needed (malloc'd; "" or NULL when nothing was refused). */
static char *refused_hosts(const rf_status *st)
{
    if (!st->network_json) /* no proxy: nothing to say (and no stream to open) */
        return NULL;
    json_t *net = json_loads(st->network_json, 0, NULL);
    json_t *list = json_object_get(net, "blocked_destinations");
    char *text = NULL;
    size_t len = 0, i;
    json_t *d;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        json_decref(net);
        return NULL;
    }
    json_array_foreach(list, i, d) {
        if (i == 5) {
            fprintf(f, ", and %zu more (see the status record)", json_array_size(list) - 5);
            break;
        }
        fprintf(f, "%s%s:%lld (%s)", i ? ", " : "[network: refused ", json_string_value(json_object_get(d, "host")),
                (long long)json_integer_value(json_object_get(d, "port")),
                json_string_value(json_object_get(d, "reason")));
    }
    if (json_array_size(list))
        fputs("]\n", f);
    fclose(f);
    json_decref(net);
    return text;
}

static json_t *exec_result(const rf_mcp_server *s, const rf_status *st, const rf_mcp_capture caps[2])
{
    _cleanup_free_ char *out = capture_text(&caps[0]);
    _cleanup_free_ char *errt = capture_text(&caps[1]);
    char tail[256];
    if (st->setup_error)
        snprintf(tail, sizeof tail, "[ringfence: %s%s%s]", st->setup_error, st->setup_hint ? "; hint: " : "",
                 st->setup_hint ? st->setup_hint : "");
    else if (st->timed_out)
        snprintf(tail, sizeof tail, "[timed out after %.1f s; the whole process tree was stopped; exit code %d]",
                 st->wall_seconds, st->exit_code);
    else if (st->signal)
        snprintf(tail, sizeof tail, "[killed by signal %d; exit code %d]", st->signal, st->exit_code);
    else
        snprintf(tail, sizeof tail, "[exit code %d]", st->exit_code);
    char *text = NULL;
    _cleanup_free_ char *refused = refused_hosts(st);
    bool err_nl = errt && errt[0] && errt[strlen(errt) - 1] != '\n';
    bool out_nl = out && out[0] && out[strlen(out) - 1] != '\n';
    if (asprintf(&text, "%s%s%s%s%s%s%s", out ? out : "", out_nl ? "\n" : "", errt && errt[0] ? "[stderr]\n" : "",
                 errt ? errt : "", err_nl ? "\n" : "", refused ? refused : "", tail) < 0)
        return NULL;
    bool failed = st->setup_error || st->timed_out;
    json_t *res = rf_mcp_tool_text(text, failed);
    free(text);
    if (res && rf_mcp_has_structured_output(s)) {
        json_t *record = rf_status_json(st);
        json_object_set_new(res, "structuredContent",
                            json_pack("{s:i, s:s, s:s, s:b, s:o}", "exit_code", st->exit_code, "stdout",
                                      out ? out : "", "stderr", errt ? errt : "", "timed_out", st->timed_out,
                                      "status", record ? record : json_object()));
    }
    return res;
}

/* The tty and stdin arguments; NULL if fine, else a tool error. */
static json_t *exec_input_parse(json_t *args, exec_input *in)
{
    json_t *t = json_object_get(args, "tty");
    json_t *text = json_object_get(args, "stdin");
    in->tty = json_is_true(t);
    in->stdin = json_string_value(text);
    in->stdin_len = json_string_length(text);
    if (in->stdin_len > RF_MCP_MAX_STDIN)
        return rf_mcp_tool_textf(true, "exec: stdin is %zu bytes; at most %u are accepted", in->stdin_len,
                                 RF_MCP_MAX_STDIN);
    return NULL;
}

/* tty needs the native backend's devpts; fail the call, not the server. */
static json_t *tty_refused(const rf_plan *plan)
{
    if (plan->backend == RF_BACKEND_NATIVE)
        return NULL;
    return rf_mcp_tool_textf(true,
                             "exec: tty: backend %s cannot give the command a terminal of its own\n"
                             "hint: call exec without tty (its stdin, stdout and stderr are then pipes), or "
                             "start ringfence mcp with --backend native (see docs/terminal.md)",
                             rf_backend_name(plan->backend));
}

json_t *rf_mcp_tool_exec(rf_mcp_server *s, rf_mcp_call *call, json_t *args)
{
    json_t *cmd = json_object_get(args, "command");
    const char *command = json_string_value(cmd);
    if (json_string_length(cmd) != strlen(command))
        return rf_mcp_tool_text("exec: command contains a NUL byte", true);
    if (!command[0])
        return rf_mcp_tool_text("exec: command is empty", true);
    char *why = NULL;
    double timeout = exec_timeout(s, args, &why);
    if (why) {
        json_t *r = rf_mcp_tool_textf(true, "exec: %s", why);
        free(why);
        return r;
    }
    exec_input in = { 0 };
    json_t *denied = exec_input_parse(args, &in);
    if (!denied)
        denied = guard_command(s, command);
    if (denied)
        return denied;

    rf_error *err = NULL;
    rf_plan *plan = s->pool && !in.tty ? NULL : exec_plan(s, command, timeout, &err);
    if (plan && in.tty && (denied = tty_refused(plan))) {
        rf_plan_free(plan);
        return denied;
    }
    rf_mcp_exec_io io = { .server = s, .call = call, .caps = { { .fd = -1 }, { .fd = -1, .is_stderr = true } } };
    rf_mcp_capture *caps = io.caps;
    rf_status st;
    memset(&st, 0, sizeof st);
    json_t *res = NULL;
    caps[0].cap = caps[1].cap = s->opts.max_output_bytes;
    caps[0].buf = malloc(caps[0].cap ? caps[0].cap : 1);
    caps[1].buf = malloc(caps[1].cap ? caps[1].cap : 1);
    if (!caps[0].buf || !caps[1].buf)
        rf_error_set(&err, ENOMEM, "exec");
    else if ((plan || (s->pool && !in.tty)) && run_command(s, call, plan, command, &in, timeout, &io, &st, &err) == 0)
        res = exec_result(s, &st, caps);
    if (!res)
        res = rf_mcp_tool_from_error(err);
    else
        rf_mcp_log(s, RF_MCP_LOG_DEBUG, "exec: exit %d in %.3f s: %.200s", st.exit_code, st.wall_seconds, command);
    rf_status_clear(&st);
    rf_plan_free(plan);
    rf_error_free(err);
    free(caps[0].buf);
    free(caps[1].buf);
    return res;
}
