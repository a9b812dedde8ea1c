/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "options.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum opt_id {
    OPT_WORKSPACE = 'w', OPT_HELP = 'h',
    OPT_CHDIR = 256, OPT_EXPOSE, OPT_NETWORK, OPT_TIMEOUT, OPT_ENV, OPT_KEEP_ENV,
    OPT_CONFIG, OPT_NO_CONFIG, OPT_AGENT, OPT_CONFIG_FORMAT, OPT_RUNNER, OPT_TRUST_WS,
    OPT_LOG_LEVEL, OPT_MAP_ROOT, OPT_BACKEND,
    OPT_MEMORY, OPT_PIDS, OPT_CPU, OPT_KILL_GRACE, OPT_STATUS_JSON, OPT_STATUS_FD,
    OPT_LANDLOCK, OPT_SECCOMP, OPT_ACCEPT_WEAKER, OPT_EXPLAIN,
    OPT_CHECK, OPT_DENY, OPT_ALLOW, OPT_NO_DENY, OPT_NO_RESTRICT, OPT_MAX_OUTPUT, OPT_MAX_CALLS,
    OPT_IMAGE, OPT_FORMAT, OPT_ALLOW_SENSITIVE,
    OPT_ALLOW_DOMAIN, OPT_DENY_DOMAIN, OPT_ALLOW_PORT, OPT_ADD_HOST, OPT_PUBLISH, OPT_ALLOW_PRIVATE,
    OPT_ASK, OPT_ASK_TIMEOUT,
    OPT_ROUTE, OPT_ROUTE_HEADER, OPT_ROUTE_CA, OPT_ROUTE_ALLOW, OPT_ROUTE_ALLOW_HTTP,
    OPT_INSTANCE, OPT_EPHEMERAL, OPT_PROFILE, OPT_TARGET, OPT_CREDENTIAL, OPT_COPY, OPT_FORCE, OPT_JSON,
    OPT_OWN_IDENTITY,
    OPT_SOCKET, OPT_POOL_SIZE, OPT_VIA, OPT_NO_POOL,
    OPT_SHARE_TMP, OPT_PTY, OPT_NO_PTY, OPT_EXPLAIN_DENIALS, OPT_WRITE, OPT_CHANGES, OPT_SESSION,
};

static const struct rf_option {
    const char *name;
    int has_arg;
    int id;
    const char *metavar;
    const char *help;
    const char *only; /* a subcommand's own option, or NULL for all */
} options[] = {
    { "workspace", required_argument, OPT_WORKSPACE, "DIR",
      "the directory the command may read and write (default: the current directory)" },
    { "chdir", required_argument, OPT_CHDIR, "DIR",
      "working directory inside; must be in the workspace or an exposed path" },
    { "expose", required_argument, OPT_EXPOSE, "SRC[:DST][:ro|rw]",
      "make a host path visible at DST (default SRC), read-only unless :rw; the last rule for a target wins" },
    { "network", required_argument, OPT_NETWORK, "none|host|allowlist",
      "none (default): own network namespace with loopback only; host: share the host's network; "
      "allowlist: loopback plus a proxy that reaches only the allowed names" },
    { "allow-domain", required_argument, OPT_ALLOW_DOMAIN, "NAME[:PORT]",
      "let the command reach NAME through the sandbox's proxy (*.example.com: its subdomains); repeatable; "
      "implies --network allowlist" },
    { "deny-domain", required_argument, OPT_DENY_DOMAIN, "NAME[:PORT]",
      "never reach NAME, even if allowed; repeatable" },
    { "allow-port", required_argument, OPT_ALLOW_PORT, "PORT",
      "ports the allowed names may be reached on (default 80 and 443); repeatable" },
    { "add-host", required_argument, OPT_ADD_HOST, "NAME:ADDR",
      "resolve NAME to ADDR in the proxy (your own mapping: ADDR may be private or loopback); repeatable" },
    { "allow-private-addresses", no_argument, OPT_ALLOW_PRIVATE, NULL,
      "let allowed names resolve to loopback, private and link-local addresses (refused by default)" },
    { "ask", required_argument, OPT_ASK, "[socket:PATH|tty|mcp]",
      "a name allow_domains does not match is asked about, not refused: socket:PATH: ringfence connects to the "
      "unix socket you listen on at PATH (outside the workspace) and sends one JSON line per question; tty: a "
      "question on your terminal (with --pty), one key answers; mcp (ringfence mcp): elicitation/create to the "
      "client (docs/network.md, Asking); --ask alone: tty (mcp for ringfence mcp); implies --network allowlist" },
    { "ask-timeout", required_argument, OPT_ASK_TIMEOUT, "SECONDS",
      "how long a question waits for its answer (default 30); no answer is a refusal" },
    { "publish", required_argument, OPT_PUBLISH, "[ADDR:]HOSTPORT:PORT",
      "relay the host's ADDR:HOSTPORT (default address 127.0.0.1) to a server on the sandbox's port PORT; "
      "repeatable" },
    { "route", required_argument, OPT_ROUTE, "NAME=URL|PRESET",
      "a credential route: the command reaches URL (https upstream, optionally with a path prefix) at "
      "http://127.0.0.1:3128/route/NAME/ (also in RINGFENCE_ROUTE_<NAME>_URL) and the proxy adds the "
      "route's headers outside; presets: anthropic, openai, gemini, github; implies --network allowlist; "
      "repeatable" },
    { "route-header", required_argument, OPT_ROUTE_HEADER, "NAME:HEADER=SOURCE",
      "set HEADER on route NAME's requests from SOURCE: env:VAR, file:PATH (yours, mode 0600) or "
      "cmd:COMMAND (its output, cached 5 minutes), optionally after bearer: or basic:USER:; the value never "
      "enters the sandbox; repeatable" },
    { "route-ca", required_argument, OPT_ROUTE_CA, "NAME:FILE",
      "trust the CA certificates in FILE (PEM) for route NAME's upstream, besides the system's" },
    { "route-allow", required_argument, OPT_ROUTE_ALLOW, "NAME:METHOD PATH",
      "allow only these requests on route NAME (e.g. 'api:POST /v1/messages*'; '*' matches anything); "
      "others get 403; repeatable" },
    { "route-allow-http", required_argument, OPT_ROUTE_ALLOW_HTTP, "NAME",
      "let route NAME's upstream be http:// (its credential then travels in clear text)" },
    { "changes", required_argument, OPT_CHANGES, "direct|overlay",
      "direct (default): the command writes the workspace; overlay: its writes, deletes and renames land in a "
      "session (an overlayfs upper layer) for 'ringfence changes diff/apply/discard', the workspace untouched" },
    { "session", required_argument, OPT_SESSION, "ID",
      "continue the overlay session ID, seeing its earlier changes (implies --changes overlay)" },
    { "timeout", required_argument, OPT_TIMEOUT, "SECONDS",
      "kill the whole process tree after SECONDS (SIGTERM, grace, SIGKILL); exit 124" },
    { "kill-grace", required_argument, OPT_KILL_GRACE, "SECONDS",
      "time between SIGTERM and SIGKILL when stopping the tree (default 2)" },
    { "env", required_argument, OPT_ENV, "KEY=VALUE", "set a variable in the command's clean environment" },
    { "keep-env", required_argument, OPT_KEEP_ENV, "KEY", "copy a variable from your environment" },
    { "memory", required_argument, OPT_MEMORY, "SIZE", "memory limit, e.g. 256M or 1G" },
    { "pids", required_argument, OPT_PIDS, "N", "limit on processes and threads" },
    { "cpu", required_argument, OPT_CPU, "FRACTION", "CPU limit in CPUs, e.g. 0.25 for a quarter of one" },
    { "backend", required_argument, OPT_BACKEND, "NAME",
      "native (default), landlock (no namespaces: Landlock, seccomp, a subreaper; needs --accept-weaker), "
      "auto (native if it works here, else bwrap, else landlock), bwrap, firejail, container (podman) or none "
      "(no sandbox); 'ringfence doctor' shows which work here" },
    { "landlock", required_argument, OPT_LANDLOCK, "MODE", "best-effort (default), required or off" },
    { "seccomp", required_argument, OPT_SECCOMP, "PROFILE", "default, strict or off" },
    { "accept-weaker", no_argument, OPT_ACCEPT_WEAKER, NULL,
      "accept a backend that cannot enforce every part of the policy" },
    { "share-tmp", no_argument, OPT_SHARE_TMP, NULL,
      "landlock backend: let the command use the host's /tmp (a weakening: other users' files there are in "
      "reach; by default only its private TMPDIR is)" },
    { "allow-sensitive-workspace", no_argument, OPT_ALLOW_SENSITIVE, NULL,
      "let the workspace be your home, a parent of it, /, /etc, /usr or /root (refused by default: "
      "everything there would be in reach)" },
    { "map-root-to", required_argument, OPT_MAP_ROOT, "UID",
      "host uid/gid a root caller runs as inside (default 65534; the landlock backend: the workspace's "
      "owner, or 65534 when root owns it; never 0)" },
    { "config", required_argument, OPT_CONFIG, "FILE", "read a config file (JSON or YAML); repeatable" },
    { "no-config", no_argument, OPT_NO_CONFIG, NULL, "ignore all config files; built-in defaults and flags only" },
    { "agent", required_argument, OPT_AGENT, "NAME", "apply this agent's section of the config" },
    { "config-format", required_argument, OPT_CONFIG_FORMAT, "FMT", "ringfence, picoclaw, mitto or srt (sandbox-runtime; default: detect)" },
    { "runner", required_argument, OPT_RUNNER, "TYPE", "Mitto runner type whose restrictions apply" },
    { "trust-workspace-config", no_argument, OPT_TRUST_WS, NULL,
      "let the workspace's .ringfence.* loosen the policy (by default it may only tighten)" },
    { "pty", no_argument, OPT_PTY, NULL,
      "give the command a terminal of its own, a pseudo-terminal inside the sandbox relayed to yours (the default "
      "when your stdin is a terminal; native backend; see docs/terminal.md)", "run" },
    { "no-pty", no_argument, OPT_NO_PTY, NULL,
      "no terminal inside: pass your stdin, stdout and stderr as they are, the command in a session with no "
      "controlling terminal", "run" },
    { "explain-denials", no_argument, OPT_EXPLAIN_DENIALS, NULL,
      "watch which hidden or read-only paths the command looks for (native backend) and, when it ends, name up to "
      "10 of them and the names the proxy refused on stderr, each with the flag that would allow it "
      "(docs/learn.md)", "run" },
    { "write", required_argument, OPT_WRITE, "FILE",
      "write the suggested rules as a YAML policy layer to FILE (atomically), for --config FILE; secrets are "
      "never written", "learn" },
    { "status-json", required_argument, OPT_STATUS_JSON, "FILE", "write the status record as JSON to FILE" },
    { "status-fd", required_argument, OPT_STATUS_FD, "N", "write JSON lines to fd N: the pid, then the status" },
    { "log-level", required_argument, OPT_LOG_LEVEL, "LEVEL",
      "warning (default) or debug: debug prints the plan on stderr before starting" },
    { "explain", no_argument, OPT_EXPLAIN, NULL, "show, for each setting, the layer it came from", "config" },
    { "check", no_argument, OPT_CHECK, NULL, "check the command with the guard, print the verdict, run nothing",
      "exec" },
    { "deny", required_argument, OPT_DENY, "PATTERN", "also block what matches this PCRE2 pattern; repeatable",
      "exec" },
    { "allow", required_argument, OPT_ALLOW, "PATTERN", "let what matches skip the deny patterns; repeatable",
      "exec" },
    { "no-deny-patterns", no_argument, OPT_NO_DENY, NULL, "no pattern checks (tools.exec.enable_deny_patterns false)",
      "exec" },
    { "no-restrict", no_argument, OPT_NO_RESTRICT, NULL, "no path checks (restrict_to_workspace false)", "exec" },
    { "max-output", required_argument, OPT_MAX_OUTPUT, "BYTES",
      "keep at most BYTES of stdout and of stderr of each exec (default 65536); the rest is counted", "mcp" },
    { "max-calls", required_argument, OPT_MAX_CALLS, "N", "tool calls running at once (default 8)", "mcp" },
    { "image", required_argument, OPT_IMAGE, "IMAGE",
      "container image (container.image, Mitto's docker.image): the userland of export k8s" },
    { "format", required_argument, OPT_FORMAT, "FORMAT",
      "json (default), or sbpl: the plan as a macOS Seatbelt profile for sandbox-exec", "plan" },
    { "instance", required_argument, OPT_INSTANCE, "NAME",
      "run in the instance NAME: its own home, XDG and temporary directories (and, for root, its own uid); "
      "created if missing" },
    { "ephemeral", no_argument, OPT_EPHEMERAL, NULL,
      "remove the instance when its last sandbox ends (delete_on_exit); without --instance, a fresh one" },
    { "profile", required_argument, OPT_PROFILE, "NAME",
      "apply the named profile, a policy layer (node, python, rust, go, java, git, claude-code, codex, "
      "gemini-cli, opencode, chat: 'ringfence profile list'); repeatable, later wins; flags win over profiles" },
    { "own-identity", no_argument, OPT_OWN_IDENTITY, NULL,
      "a new instance of an unprivileged caller gets a uid/gid of its own from your /etc/subuid and /etc/subgid "
      "ranges (newuidmap); root callers' instances always have one" },
    { "target", required_argument, OPT_TARGET, "DIR",
      "put the instance's tree at DIR (default: the instance root's instances/NAME)", "instance" },
    { "credential", required_argument, OPT_CREDENTIAL, "SRC[:DEST]",
      "copy a credential file into the instance (mode 0600, never a link; DEST default data/NAME); repeatable",
      "instance" },
    { "copy", required_argument, OPT_COPY, "SRC[:DEST]",
      "copy a file or directory into the instance (modes kept, set-id bits dropped); repeatable", "instance" },
    { "force", no_argument, OPT_FORCE, NULL, "rm: stop the instance's running sandboxes first", "instance" },
    { "json", no_argument, OPT_JSON, NULL, "list, show: print JSON", "instance" },
    { "socket", required_argument, OPT_SOCKET, "PATH", "the pool's unix socket (created 0600)", "serve" },
    { "pool-size", required_argument, OPT_POOL_SIZE, "N", "sandboxes kept ready (default 4)", "serve" },
    { "via", required_argument, OPT_VIA, "PATH",
      "run the command in a ready sandbox of the pool serving PATH (ringfence serve); same options as the server's; "
      "a terminal on stdin (or --pty) gives it a pty there too",
      "run" },
    { "no-pool", no_argument, OPT_NO_POOL, NULL,
      "build each exec's sandbox on demand instead of keeping some ready", "mcp" },
    { "help", no_argument, OPT_HELP, NULL, "show this help" },
};

#define N_OPTIONS (sizeof options / sizeof options[0])

/* scdoc markup characters in help text must be escaped. */
static void put_scdoc(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '*' || *s == '_')
            fputc('\\', out);
        fputc(*s, out);
    }
}

void rf_cli_print_options(FILE *out, const char *sub, bool man)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const struct rf_option *o = &options[i];
        if (o->only && sub && strcmp(o->only, sub) != 0 && !(!strcmp(sub, "learn") && !strcmp(o->only, "run")))
            continue;
        if (man) {
            fprintf(out, "*--%s*", o->name);
            if (o->metavar) {
                fputs(" _", out);
                put_scdoc(out, o->metavar);
                fputc('_', out);
            }
            fputs("\n\t", out);
            if (o->only)
                fprintf(out, "(%s) ", o->only);
            put_scdoc(out, o->help);
            fputs(".\n\n", out);
            continue;
        }
        char head[96];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        if (strlen(head) <= 28)
            fprintf(out, "  %-28s %s\n", head, o->help);
        else
            fprintf(out, "  %s\n  %-28s %s\n", head, "", o->help);
    }
}

void rf_cli_each_option(void (*fn)(void *ud, const char *name, bool has_arg, const char *only, const char *help),
                        void *ud)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        fn(ud, options[i].name, options[i].has_arg != no_argument, options[i].only, options[i].help);
}

__attribute__((format(printf, 2, 3))) static int usage(const char *sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ringfence %s: ", sub);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "hint: see 'ringfence %s --help'\n", sub);
    return -1;
}

static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    char *out = NULL;
    return asprintf(&out, "%s/%s", cwd, path) < 0 ? NULL : out;
}

json_t *rf_cli_json_obj_at(json_t *root, const char *key)
{
    json_t *o = json_object_get(root, key);
    if (!o) {
        o = json_object();
        json_object_set_new(root, key, o);
    }
    return o;
}

static json_t *arr_at(json_t *root, const char *key)
{
    json_t *a = json_object_get(root, key);
    if (!a) {
        a = json_array();
        json_object_set_new(root, key, a);
    }
    return a;
}

/* SRC[:DST][:ro|rw] — paths cannot contain ':'; DST must be absolute. */
static int parse_expose(const char *sub, const char *arg, json_t *flags)
{
    char *copy = strdup(arg), *save = NULL;
    char *parts[4] = { 0 };
    int n = 0;
    for (char *t = strtok_r(copy, ":", &save); t && n < 4; t = strtok_r(NULL, ":", &save))
        parts[n++] = t;
    const char *src = parts[0], *dst = NULL, *mode = "ro";
    int rc = 0;
    if (n == 0 || n > 3) {
        rc = usage(sub, "--expose %s: expected SRC[:DST][:ro|rw]", arg);
    } else if (n == 2 && parts[1][0] != '/') {
        mode = parts[1];
    } else if (n >= 2) {
        dst = parts[1];
        if (n == 3)
            mode = parts[2];
    }
    if (rc == 0 && strcmp(mode, "ro") && strcmp(mode, "rw"))
        rc = usage(sub, "--expose %s: mode '%s' must be ro or rw", arg, mode);
    if (rc == 0 && dst && dst[0] != '/')
        rc = usage(sub, "--expose %s: target '%s' must be an absolute path", arg, dst);
    if (rc == 0) {
        char *abs = absolute(src);
        json_t *rule = json_pack("{s:s, s:s}", "source", abs ? abs : src, "mode", mode);
        if (dst)
            json_object_set_new(rule, "target", json_string(dst));
        json_array_append_new(arr_at(flags, "expose"), rule);
        free(abs);
    }
    free(copy);
    return rc;
}

/* network.routes.NAME, for "NAME<sep>REST" arguments; NULL after usage(). */
static json_t *route_at(const char *sub, json_t *flags, const char *opt, const char *arg, char sep,
                        const char **rest)
{
    const char *cut = strchr(arg, sep);
    if (!cut || cut == arg || !cut[1]) {
        usage(sub, "--%s %s: expected NAME%c...", opt, arg, sep);
        return NULL;
    }
    char *name = strndup(arg, (size_t)(cut - arg));
    json_t *routes = rf_cli_json_obj_at(rf_cli_json_obj_at(flags, "network"), "routes");
    json_t *r = name ? rf_cli_json_obj_at(routes, name) : NULL;
    free(name);
    *rest = cut + 1;
    return r;
}

/* --route NAME=URL, or --route PRESET. Two routes of one name are refused
 * here; the name's and URL's checks are the resolver's (same as a file). */
static int parse_route(const char *sub, const char *arg, json_t *flags)
{
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    char *name = strndup(arg, nlen);
    json_t *routes = rf_cli_json_obj_at(rf_cli_json_obj_at(flags, "network"), "routes");
    json_t *r = name ? json_object_get(routes, name) : NULL;
    int rc = 0;
    if (!name || nlen == 0)
        rc = usage(sub, "--route %s: expected NAME=URL or a preset (anthropic, openai, gemini, github)", arg);
    else if (r && (json_object_get(r, "url") || json_object_get(r, "preset")))
        rc = usage(sub, "--route %s: a route named '%s' was given already", arg, name);
    else
        json_object_set_new(rf_cli_json_obj_at(routes, name), eq ? "url" : "preset", json_string(eq ? eq + 1 : name));
    free(name);
    return rc;
}

static int parse_route_option(const char *sub, int id, const char *arg, json_t *flags)
{
    const char *rest = NULL;
    if (id == OPT_ROUTE)
        return parse_route(sub, arg, flags);
    if (id == OPT_ROUTE_ALLOW_HTTP) {
        json_object_set_new(rf_cli_json_obj_at(rf_cli_json_obj_at(rf_cli_json_obj_at(flags, "network"), "routes"),
                                               arg),
                            "allow_http", json_true());
        return 0;
    }
    json_t *r = route_at(sub, flags, id == OPT_ROUTE_HEADER ? "route-header" : id == OPT_ROUTE_CA ? "route-ca"
                                                                                              : "route-allow",
                         arg, ':', &rest);
    if (!r)
        return -1;
    if (id == OPT_ROUTE_ALLOW) {
        json_array_append_new(arr_at(r, "allow"), json_string(rest));
        return 0;
    }
    if (id == OPT_ROUTE_CA) {
        char *abs = absolute(rest);
        json_object_set_new(r, "ca", json_string(abs ? abs : rest));
        free(abs);
        return 0;
    }
    const char *eq = strchr(rest, '=');
    if (!eq || eq == rest || !eq[1])
        return usage(sub, "--route-header %s: expected NAME:HEADER=SOURCE, e.g. api:x-api-key=env:API_KEY", arg);
    char *header = strndup(rest, (size_t)(eq - rest));
    json_t *headers = rf_cli_json_obj_at(r, "headers");
    int rc = json_object_get(headers, header)
                 ? usage(sub, "--route-header %s: header '%s' was given already for this route", arg, header)
                 : 0;
    if (rc == 0)
        json_object_set_new(headers, header, json_string(eq + 1));
    free(header);
    return rc;
}

static int parse_number(const char *sub, const char *opt, const char *arg, double min, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || !end || *end || end == arg || v < min || v != v)
        return usage(sub, "--%s %s: expected a number >= %g", opt, arg, min);
    *out = v;
    return 0;
}

static int set_number(const char *sub, json_t *obj, const char *key, const char *opt, const char *arg, double min,
                      bool integer)
{
    double v;
    if (parse_number(sub, opt, arg, min, &v) < 0)
        return -1;
    if (integer && v != (double)(long long)v)
        return usage(sub, "--%s %s: expected a whole number", opt, arg);
    json_object_set_new(obj, key, integer ? json_integer((json_int_t)v) : json_real(v));
    return 0;
}

/* --profile NAME: found now, so a typo fails before anything starts, with
 * the closest name as the hint. */
static int add_profile(const char *sub, const char *name, rf_cli_opts *o)
{
    rf_error *err = NULL;
    char *path = rf_profile_find(name, &err);
    if (!path) {
        fprintf(stderr, "ringfence %s: --profile %s: %s\n", sub, name, rf_error_message(err));
        if (rf_error_hint(err))
            fprintf(stderr, "hint: %s\n", rf_error_hint(err));
        rf_error_free(err);
        return -1;
    }
    free(path);
    size_t n = 0;
    while (o->profiles && o->profiles[n])
        n++;
    if (n >= 32)
        return usage(sub, "--profile %s: at most 32 profiles", name);
    char **v = realloc(o->profiles, (n + 2) * sizeof(char *));
    if (!v)
        return -1;
    v[n] = strdup(name);
    v[n + 1] = NULL;
    o->profiles = v;
    return v[n] ? 0 : -1;
}

static int apply_option(const char *sub, int id, const char *arg, rf_cli_opts *o)
{
    json_t *f = o->flags;
    switch (id) {
    case OPT_WORKSPACE: {
        char *abs = absolute(arg);
        json_object_set_new(f, "workspace", json_string(abs ? abs : arg));
        free(abs);
        return 0;
    }
    case OPT_CHDIR: {
        char *abs = absolute(arg);
        json_object_set_new(f, "chdir", json_string(abs ? abs : arg));
        free(abs);
        return 0;
    }
    case OPT_EXPOSE: return parse_expose(sub, arg, f);
    case OPT_NETWORK:
        if (strcmp(arg, "none") && strcmp(arg, "host") && strcmp(arg, "allowlist"))
            return usage(sub, "--network %s: expected none, host or allowlist", arg);
        json_object_set_new(rf_cli_json_obj_at(f, "network"), "mode", json_string(arg));
        return 0;
    case OPT_ALLOW_DOMAIN:
    case OPT_DENY_DOMAIN:
    case OPT_ALLOW_PORT:
    case OPT_PUBLISH: {
        const char *key = id == OPT_ALLOW_DOMAIN ? "allow_domains"
                          : id == OPT_DENY_DOMAIN ? "deny_domains"
                          : id == OPT_ALLOW_PORT  ? "allow_ports"
                                                  : "publish";
        json_array_append_new(arr_at(rf_cli_json_obj_at(f, "network"), key), json_string(arg));
        return 0;
    }
    case OPT_ADD_HOST: {
        const char *colon = strchr(arg, ':');
        if (!colon || colon == arg || !colon[1])
            return usage(sub, "--add-host %s: expected NAME:ADDRESS, e.g. api.test:127.0.0.1", arg);
        char *name = strndup(arg, (size_t)(colon - arg));
        json_object_set_new(rf_cli_json_obj_at(rf_cli_json_obj_at(f, "network"), "hosts"), name,
                            json_string(colon + 1));
        free(name);
        return 0;
    }
    case OPT_ROUTE:
    case OPT_ROUTE_HEADER:
    case OPT_ROUTE_CA:
    case OPT_ROUTE_ALLOW:
    case OPT_ROUTE_ALLOW_HTTP: return parse_route_option(sub, id, arg, f);
    case OPT_INSTANCE: json_object_set_new(f, "instance", json_string(arg)); return 0;
    case OPT_EPHEMERAL: json_object_set_new(f, "delete_on_exit", json_true()); return 0;
    case OPT_PROFILE: return add_profile(sub, arg, o);
    case OPT_TARGET: o->target = arg; return 0;
    case OPT_OWN_IDENTITY: o->own_identity = true; return 0;
    case OPT_CREDENTIAL:
    case OPT_COPY:
        json_array_append_new(arr_at(o->instance_files, id == OPT_CREDENTIAL ? "credentials" : "copies"),
                              json_string(arg));
        return 0;
    case OPT_FORCE: o->force = true; return 0;
    case OPT_SOCKET: o->socket = arg; return 0;
    case OPT_VIA: o->via = arg; return 0;
    case OPT_PTY:
    case OPT_NO_PTY: o->pty = id == OPT_PTY ? RF_CLI_PTY_ON : RF_CLI_PTY_OFF; return 0;
    case OPT_NO_POOL: o->no_pool = true; return 0;
    case OPT_EXPLAIN_DENIALS: o->explain_denials = true; return 0;
    case OPT_WRITE: o->write_file = arg; return 0;
    case OPT_POOL_SIZE: {
        double v;
        if (parse_number(sub, "pool-size", arg, 1, &v) < 0)
            return -1;
        if (v != (double)(long)v || v > 256)
            return usage(sub, "--pool-size %s: expected a whole number from 1 to 256", arg);
        o->pool_size = (size_t)v;
        return 0;
    }
    case OPT_JSON: o->json = true; return 0;
    case OPT_ALLOW_PRIVATE:
        json_object_set_new(rf_cli_json_obj_at(f, "network"), "allow_private_addresses", json_true());
        return 0;
    case OPT_ASK: {
        json_t *net = rf_cli_json_obj_at(f, "network");
        json_object_set_new(net, "on_blocked", json_string("ask"));
        json_object_set_new(net, "ask", json_string(arg));
        return 0;
    }
    case OPT_ASK_TIMEOUT:
        return set_number(sub, rf_cli_json_obj_at(f, "network"), "ask_timeout", "ask-timeout", arg, 0.001, false);
    case OPT_TIMEOUT: return set_number(sub, rf_cli_json_obj_at(f, "limits"), "timeout", "timeout", arg, 0, false);
    case OPT_KILL_GRACE: return set_number(sub, rf_cli_json_obj_at(f, "limits"), "kill_grace", "kill-grace", arg, 0, false);
    case OPT_PIDS: return set_number(sub, rf_cli_json_obj_at(f, "limits"), "pids", "pids", arg, 1, true);
    case OPT_CPU: return set_number(sub, rf_cli_json_obj_at(f, "limits"), "cpu", "cpu", arg, 0.001, false);
    case OPT_MEMORY: json_object_set_new(rf_cli_json_obj_at(f, "limits"), "memory", json_string(arg)); return 0;
    case OPT_MAP_ROOT: return set_number(sub, f, "map_root_to", "map-root-to", arg, 1, true);
    case OPT_ENV: {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg)
            return usage(sub, "--env %s: expected KEY=VALUE", arg);
        char *key = strndup(arg, (size_t)(eq - arg));
        json_object_set_new(rf_cli_json_obj_at(rf_cli_json_obj_at(f, "env"), "set"), key, json_string(eq + 1));
        free(key);
        return 0;
    }
    case OPT_KEEP_ENV: json_array_append_new(arr_at(rf_cli_json_obj_at(f, "env"), "keep"), json_string(arg)); return 0;
    case OPT_BACKEND: json_object_set_new(f, "backend", json_string(arg)); return 0;
    case OPT_LANDLOCK: json_object_set_new(f, "landlock", json_string(arg)); return 0;
    case OPT_SECCOMP: json_object_set_new(rf_cli_json_obj_at(f, "seccomp"), "profile", json_string(arg)); return 0;
    case OPT_ACCEPT_WEAKER: json_object_set_new(f, "accept_weaker", json_true()); return 0;
    case OPT_SHARE_TMP: json_object_set_new(f, "share_tmp", json_true()); return 0;
    case OPT_CHANGES:
        if (strcmp(arg, "direct") && strcmp(arg, "overlay"))
            return usage(sub, "--changes %s: expected direct or overlay", arg);
        json_object_set_new(f, "changes", json_string(arg));
        return 0;
    case OPT_SESSION: json_object_set_new(f, "session", json_string(arg)); return 0;
    case OPT_ALLOW_SENSITIVE: json_object_set_new(f, "allow_sensitive_workspace", json_true()); return 0;
    case OPT_CONFIG: {
        size_t n = 0;
        while (o->config_files && o->config_files[n])
            n++;
        char **v = realloc(o->config_files, (n + 2) * sizeof(char *));
        if (!v)
            return -1;
        v[n] = strdup(arg);
        v[n + 1] = NULL;
        o->config_files = v;
        return 0;
    }
    case OPT_NO_CONFIG: o->no_config = true; return 0;
    case OPT_AGENT: o->agent = arg; return 0;
    case OPT_CONFIG_FORMAT: o->config_format = arg; return 0;
    case OPT_RUNNER: o->runner = arg; return 0;
    case OPT_TRUST_WS: o->trust_workspace_config = true; return 0;
    case OPT_STATUS_JSON: o->status_json_file = arg; return 0;
    case OPT_STATUS_FD: {
        double v;
        if (parse_number(sub, "status-fd", arg, 0, &v) < 0)
            return -1;
        o->status_fd = (int)v;
        return 0;
    }
    case OPT_LOG_LEVEL:
        if (strcmp(arg, "debug") && strcmp(arg, "warning") && strcmp(arg, "info") && strcmp(arg, "error"))
            return usage(sub, "--log-level %s: expected debug, info, warning or error", arg);
        o->log_level = arg;
        return 0;
    case OPT_EXPLAIN: o->explain = true; return 0;
    case OPT_CHECK: o->check = true; return 0;
    case OPT_DENY:
    case OPT_ALLOW:
        json_array_append_new(arr_at(rf_cli_json_obj_at(rf_cli_json_obj_at(f, "tools"), "exec"),
                                     id == OPT_DENY ? "custom_deny_patterns" : "custom_allow_patterns"),
                              json_string(arg));
        return 0;
    case OPT_NO_DENY:
        json_object_set_new(rf_cli_json_obj_at(rf_cli_json_obj_at(f, "tools"), "exec"), "enable_deny_patterns", json_false());
        return 0;
    case OPT_NO_RESTRICT: json_object_set_new(f, "restrict_to_workspace", json_false()); return 0;
    case OPT_MAX_OUTPUT:
    case OPT_MAX_CALLS: {
        double v;
        bool out = id == OPT_MAX_OUTPUT;
        double max = out ? 64.0 * 1024 * 1024 : 256;
        if (parse_number(sub, out ? "max-output" : "max-calls", arg, 1, &v) < 0)
            return -1;
        if (v != (double)(long long)v || v > max)
            return usage(sub, "--%s %s: expected a whole number from 1 to %.0f", out ? "max-output" : "max-calls",
                         arg, max);
        if (out)
            o->max_output = (size_t)v;
        else
            o->max_calls = (unsigned)v;
        return 0;
    }
    case OPT_IMAGE: json_object_set_new(rf_cli_json_obj_at(f, "container"), "image", json_string(arg)); return 0;
    case OPT_FORMAT:
        if (strcmp(arg, "json") && strcmp(arg, "sbpl"))
            return usage(sub, "--format %s: expected json or sbpl", arg);
        o->format = arg;
        return 0;
    case OPT_HELP: o->help = true; return 0;
    }
    return usage(sub, "unknown option");
}

/* --ask[=WHERE]: --ask followed by another option, "--" or nothing asks
 * where this subcommand's caller is (the MCP client for `ringfence mcp`,
 * the terminal otherwise); getopt took the next word as its value, so it
 * is given back. Returns getopt's answer, OPT_ASK for a bare --ask. */
static int ask_alone(const char *sub, int argc, char **argv, int c)
{
    const char *where = strcmp(sub, "mcp") ? "tty" : "mcp";
    bool missing = c == ':' && optopt == OPT_ASK;
    bool took_option = c == OPT_ASK && optind - 1 < argc && optarg == argv[optind - 1] && optarg[0] == '-';
    if (took_option)
        optind--;
    if (missing || took_option) {
        optarg = (char *)where;
        return OPT_ASK;
    }
    return c;
}

int rf_cli_parse_sandbox_options(const char *sub, int argc, char **argv, rf_cli_opts *o)
{
    struct option longopts[N_OPTIONS + 1];
    for (size_t i = 0; i < N_OPTIONS; i++)
        longopts[i] = (struct option){ options[i].name, options[i].has_arg, NULL, options[i].id };
    longopts[N_OPTIONS] = (struct option){ 0 };
    memset(o, 0, sizeof *o);
    o->flags = json_object();
    o->instance_files = json_object();
    o->status_fd = -1;
    optind = 1;
    opterr = 0;
    int c;
    /* "+": stop at the first non-option, which is the command; `instance`
     * has no command, so its options may follow its NAME. */
    const char *optstring = strcmp(sub, "instance") ? "+:w:h" : ":w:h";
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        c = ask_alone(sub, argc, argv, c);
        if (c == '?')
            return usage(sub, "unknown option '%s'", argv[optind - 1]);
        if (c == ':')
            return usage(sub, "option '%s' needs a value", argv[optind - 1]);
        const struct rf_option *def = NULL;
        for (size_t i = 0; i < N_OPTIONS && !def; i++)
            if (options[i].id == c)
                def = &options[i];
        /* learn takes run's options too: it is a run, observed. */
        if (def && def->only && strcmp(def->only, sub) != 0 && !(!strcmp(sub, "learn") && !strcmp(def->only, "run")))
            return usage(sub, "option '--%s' is for 'ringfence %s'", def->name, def->only);
        if (apply_option(sub, c, optarg, o) < 0)
            return -1;
    }
    /* --allow-domain means "this and nothing else": the allowlist mode,
     * unless --network says otherwise. */
    json_t *net = json_object_get(o->flags, "network");
    if ((json_object_get(net, "allow_domains") || json_object_get(net, "routes")) && !json_object_get(net, "mode"))
        json_object_set_new(net, "mode", json_string("allowlist"));
    if (!o->log_level)
        o->log_level = getenv("RINGFENCE_LOG_LEVEL");
    return optind;
}

void rf_cli_opts_clear(rf_cli_opts *o)
{
    rf_instance_close(o->instance); /* an ephemeral instance goes now */
    json_decref(o->flags);
    json_decref(o->instance_files);
    for (size_t i = 0; o->config_files && o->config_files[i]; i++)
        free(o->config_files[i]);
    free(o->config_files);
    for (size_t i = 0; o->profiles && o->profiles[i]; i++)
        free(o->profiles[i]);
    free(o->profiles);
    memset(o, 0, sizeof *o);
}

bool rf_cli_debug(const rf_cli_opts *o)
{
    return o->log_level && !strcmp(o->log_level, "debug");
}
