/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libringfence — run the processes an AI agent starts inside a Linux sandbox
 * built from one policy.
 *
 * The one path:  config ──▶ policy ──▶ plan ──▶ spawn ──▶ proc ──▶ status
 *
 * Conventions (every function below follows them):
 *  - Fallible calls take `rf_error **err` last, return < 0 (or NULL) on
 *    failure and then set *err, which the caller frees with rf_error_free().
 *    Passing err = NULL is allowed and discards the details.
 *  - The library never prints, never calls exit(), never reads the
 *    environment after rf_policy_resolve().
 *  - Every returned pointer is owned by the caller unless stated otherwise;
 *    free it with the matching *_free().
 *  - Not thread-safe per handle; distinct handles may be used from distinct
 *    threads. rf_spawn() sets the sandbox to die with the *thread* that
 *    called it (PR_SET_PDEATHSIG), so call it from a thread that outlives
 *    the sandbox.
 */
#ifndef RINGFENCE_H
#define RINGFENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RF_BUILDING_LIBRARY)
#define RF_EXPORT __attribute__((visibility("default")))
#else
#define RF_EXPORT
#endif

/* ── Exit codes (follow timeout(1) and env(1)) ─────────────────────────── */
enum {
    RF_EXIT_TIMEOUT = 124,     /* the command was killed by --timeout */
    RF_EXIT_FAILURE = 125,     /* ringfence itself failed: config, setup */
    RF_EXIT_CANNOT_EXEC = 126, /* blocked by the guard, or not executable */
    RF_EXIT_NOT_FOUND = 127,   /* command not found */
    RF_EXIT_SIGNAL_BASE = 128, /* 128+N: the command died of signal N */
};

/* ── Errors ────────────────────────────────────────────────────────────── */
typedef struct rf_error rf_error;
RF_EXPORT const char *rf_error_message(const rf_error *err); /* "what: why" */
RF_EXPORT const char *rf_error_hint(const rf_error *err);    /* or NULL */
RF_EXPORT int rf_error_errno(const rf_error *err);
RF_EXPORT int rf_error_exit_code(const rf_error *err); /* RF_EXIT_* */
RF_EXPORT void rf_error_free(rf_error *err);

/* ── Config: layers of settings, merged ────────────────────────────────── */
/* A config is an ordered list of layers (defaults, files, environment,
 * flags), each a JSON object in ringfence's schema (docs/config.md). Later
 * layers win; a layer with "merge_strategy": "replace" drops what is below. */
typedef struct rf_config rf_config;
RF_EXPORT rf_config *rf_config_new(void);
RF_EXPORT void rf_config_free(rf_config *cfg);
/* Add a layer from a JSON text in ringfence's schema. `origin` names the
 * layer in errors and in `ringfence config --explain` (e.g. "flags").
 * Credential routes are such a layer too: {"network": {"routes": {"api":
 * {"url": "https://api.example.com", "headers": {"x-api-key":
 * "env:API_KEY"}, "allow": ["POST /v1/messages"], "ca": "/path/ca.pem"}}}} or
 * {"anthropic": {"preset": "anthropic"}}. Only where a secret comes from is
 * kept (env:VAR, file:PATH, cmd:COMMAND); the proxy reads the value on the
 * caller's side when a request needs it (docs/network.md, "Keys stay
 * outside"). */
RF_EXPORT int rf_config_add_json(rf_config *cfg, const char *origin, const char *json, rf_error **err);
/* Select the agents.list entry with this id (NULL: none). agents.defaults
 * always applies; resolving fails if no layer defines the agent. */
RF_EXPORT int rf_config_select_agent(rf_config *cfg, const char *agent, rf_error **err);

/* ── Policy: the merged config, substituted, checked, defaults filled ──── */
typedef struct rf_policy rf_policy;
typedef struct rf_context {
    const char *cwd;     /* the caller's working directory (NULL: getcwd) */
    const char *home;    /* the caller's home (NULL: $HOME / passwd) */
    const char *user;    /* the caller's user name (NULL: passwd) */
    const char *rf_home; /* instance root override (NULL: $RINGFENCE_HOME, else ~/.ringfence) */
    const char *tmpdir;  /* (NULL: $TMPDIR, else /tmp) */
    char *const *envp;   /* the caller's environment, for --keep-env (NULL: environ) */
} rf_context;
RF_EXPORT rf_policy *rf_policy_resolve(const rf_config *cfg, const rf_context *ctx, rf_error **err);
RF_EXPORT void rf_policy_free(rf_policy *policy);
/* The resolved policy as JSON (malloc'd). */
RF_EXPORT char *rf_policy_to_json(const rf_policy *policy);

/* ── Plan: what will happen, concretely ────────────────────────────────── */
typedef struct rf_plan rf_plan;
/* argv[0] is looked up as the sandbox will see it; NULL-terminated. */
RF_EXPORT rf_plan *rf_plan_build(const rf_policy *policy, char *const argv[], rf_error **err);
/* The plan of an agent's shell command (the exec tool): /bin/sh -c COMMAND,
 * run in the workspace (or the policy's chdir), with timeout_s seconds
 * (<= 0: the policy's limits.timeout, else tools.exec.timeout, 60 s). */
RF_EXPORT rf_plan *rf_plan_build_shell(const rf_policy *policy, const char *command, double timeout_s,
                                       rf_error **err);
RF_EXPORT void rf_plan_free(rf_plan *plan);
RF_EXPORT char *rf_plan_to_json(const rf_plan *plan); /* malloc'd, pretty */
/* Find out now what would enforce the plan's memory, pids and cpu limits
 * (a cgroup is created and removed at once), so the plan can show it and
 * warn when a limit would only be approximate. Optional: rf_spawn decides
 * again at start. */
RF_EXPORT int rf_plan_probe_limits(rf_plan *plan, rf_error **err);
/* network: allowlist: where the proxy reports each blocked connection, as
 * a line "ringfence: network: blocked connect to HOST:PORT (REASON)";
 * -1 (the default): nowhere (the status JSON still counts them). */
RF_EXPORT void rf_plan_set_network_log_fd(rf_plan *plan, int fd);
/* network: allowlist, asking (docs/network.md, "Asking instead of
 * refusing"): a name allow_domains does not match is asked about through
 * `fn` instead of refused, whatever the policy's network.ask says. `fn` is
 * called on a thread of the proxy, one question at a time; it returns 1 to
 * allow, 0 to deny, and sets *ret_scope (RF_ASK_SCOPE_*; "always" is
 * written to the user's answers.yaml). An answer later than the policy's
 * ask_timeout (default 30 s) counts as a refusal, and the connection waits
 * meanwhile, so answer promptly. deny_domains, IP literals and private
 * addresses are refused without a call. fn NULL: the policy's setting. */
enum { RF_ASK_SCOPE_ONCE = 0, RF_ASK_SCOPE_RUN = 1, RF_ASK_SCOPE_ALWAYS = 2 };
typedef struct rf_ask_request {
    unsigned long long id;
    const char *host;
    unsigned port;
    const char *protocol; /* "http", "connect", "socks5" */
    const char *command;  /* the sandbox's command line */
    /* The process inside that asked, a hint (it can name itself anything,
     * printable ASCII shown): its pid as the sandbox numbers it and its
     * name; 0 and NULL when not known. */
    long pid;
    const char *process;
} rf_ask_request;
typedef int (*rf_ask_fn)(void *data, const rf_ask_request *q, int *ret_scope);
RF_EXPORT void rf_plan_set_ask(rf_plan *plan, rf_ask_fn fn, void *data);
/* Observe the command (native backend; docs/learn.md): which host paths it
 * looked for that the sandbox hides or keeps read-only. The policy is
 * unchanged; each path-taking call costs a round trip to a thread of the
 * caller. Read with rf_proc_observations() after rf_proc_wait(). */
RF_EXPORT void rf_plan_set_observe(rf_plan *plan, bool on);
/* Things the user should know (weaker modes, skipped settings); owned by plan. */
RF_EXPORT char *const *rf_plan_warnings(const rf_plan *plan);

/* ── Spawn, wait, kill ─────────────────────────────────────────────────── */
typedef struct rf_proc rf_proc;
/* Where the command's stdio goes. -1 means "inherit the caller's". */
typedef struct rf_stdio {
    int in_fd, out_fd, err_fd;
} rf_stdio;
#define RF_STDIO_INHERIT ((rf_stdio){ -1, -1, -1 })
/* A stream set to RF_STDIO_PTY is the slave of a pseudo-terminal made in
 * the sandbox's own /dev/pts, the command's controlling terminal (the
 * command leads a session there). The caller never hands the command a
 * descriptor of its own terminal: rf_proc_wait relays between the pty's
 * master and the caller's own fd 0 (input, when in_fd is RF_STDIO_PTY)
 * and fd 1 (output; fd 2 when only err_fd is RF_STDIO_PTY). When fd 0 is
 * a terminal, it is in raw mode while the relay runs, its window size is
 * followed (SIGWINCH: a handler is installed for the duration, the
 * previous one still called), and it is restored when the wait ends, by
 * rf_proc_free at the latest. Native backend only; the others refuse
 * it. A warm pool takes it too (rf_pool_run relays as rf_proc_wait does;
 * rf_pool_client_run_stdio relays the master the server passes on). See
 * docs/terminal.md. */
#define RF_STDIO_PTY (-2)

/* The result of a finished sandbox. */
typedef struct rf_status {
    int exit_code;      /* what the CLI exits with: the command's code,
                           128+signal, 124 on timeout, 125/126/127 */
    int signal;         /* signal that killed the command, or 0 */
    bool exited;        /* the command ran and exited by itself */
    bool timed_out;     /* ringfence killed it for --timeout */
    bool oom_killed;    /* the memory limit was hit and it was killed */
    bool pids_limit_hit;/* fork failed at the pids limit (when detectable) */
    double wall_seconds, user_seconds, sys_seconds;
    uint64_t peak_memory_bytes; /* cgroup peak, else max RSS */
    char *setup_error;  /* set when the sandbox could not be built */
    char *setup_hint;
    /* The limits in force and what enforced each (see rf_limit_how). */
    uint64_t memory_limit_bytes, pids_limit; /* 0: none */
    double cpu_limit, timeout_seconds;       /* 0: none */
    int memory_how, pids_how, cpu_how;       /* rf_limit_how values */
    /* network: allowlist: the proxy's report (a JSON object: connections,
     * blocked, bytes each way, allowed and blocked destinations, and per
     * credential route "routes": [{name, requests, refusals, errors,
     * bytes_sent, bytes_received}]), or NULL. */
    char *network_json;
    char *session;      /* changes: overlay: the session's id, else NULL */
    char *sandbox;      /* the sandbox's id (the audit trail's, `ringfence ps`'s) */
    char *audit_head;   /* the audit trail's last hash after run.end, or NULL
                           (auditing off); `ringfence audit verify` */
    const char *backend; /* the backend that ran it ("native", "landlock", ...) */
    /* What this sandbox did not enforce that the usual one does, accepted
     * by name or harmless here (the plan's `cannot` and `weakenings`):
     * NULL-terminated, or NULL when there is nothing. */
    char **weakenings;
} rf_status;

RF_EXPORT rf_proc *rf_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);
/* Things the user should know that only the start could tell (a limit
 * enforced by an approximate rlimit because no cgroup was writable, ...).
 * Owned by proc; NULL-terminated. */
RF_EXPORT char *const *rf_proc_warnings(const rf_proc *proc);
/* Host pid of the sandbox's init (pid 1 inside with the native backend; a
 * child subreaper on the host with the landlock and none backends). */
RF_EXPORT pid_t rf_proc_pid(const rf_proc *proc);
/* Wait until the sandbox ends (enforcing the plan's timeout); fill *out.
 * Returns 0, or < 0 if waiting itself failed. */
RF_EXPORT int rf_proc_wait(rf_proc *proc, rf_status *out, rf_error **err);
/* Send sig into the sandbox: SIGINT, SIGTERM, SIGHUP and SIGQUIT reach
 * every process of it (as a terminal's Ctrl-C reaches a whole job), other
 * signals the command alone; SIGKILL ends the whole tree at once. */
RF_EXPORT int rf_proc_kill(rf_proc *proc, int sig);
/* Ask every process in the sandbox to stop: SIGTERM to all, then SIGKILL to
 * the whole tree after the plan's grace period (done by rf_proc_wait). */
RF_EXPORT int rf_proc_terminate(rf_proc *proc);
RF_EXPORT void rf_proc_free(rf_proc *proc); /* kills the tree if still running */
/* With rf_plan_set_observe: after rf_proc_wait, what the command looked
 * for, as JSON (malloc'd): {"paths": [{"path", "host", "seen": "hidden" |
 * "read-only" | "home", "call", "write", "exec", "count"}], "notifications",
 * "dropped", "unreadable"}. NULL when the plan was not observed. Advisory:
 * read while the call was stopped, but another thread may change the
 * memory before the kernel reads it again. */
RF_EXPORT char *rf_proc_observations(rf_proc *proc);
/* The smallest rule set that would have let an observed command run, as
 * JSON (malloc'd): {"expose": [{"source", "target"?, "mode", "why",
 * "flagged"?, "paths", "count"}], "keep_env": {NAME: why}, "allow_domain":
 * [{"name", "port", "why"}], "dropped", "unreadable"}. A rule with
 * "flagged" (a secret, a shell start-up file, a daemon socket) is for the
 * report only: never write it without asking. network_json: the status's
 * network record (refused names), or NULL; home, envp: the caller's. */
RF_EXPORT char *rf_observe_suggest(const char *observations, const char *network_json, const char *home,
                                   char *const *envp, rf_error **err);
/* The same, knowing the workspace: no rule for it or a directory holding
 * it (what lies beside the workspace) is suggested; a narrower one is. */
RF_EXPORT char *rf_observe_suggest_in(const char *observations, const char *network_json, const char *home,
                                      const char *workspace, char *const *envp, rf_error **err);
RF_EXPORT void rf_status_clear(rf_status *status);
RF_EXPORT char *rf_status_to_json(const rf_status *status); /* malloc'd, one line */

/* Convenience: rf_spawn + rf_proc_wait. */
RF_EXPORT int rf_run(const rf_plan *plan, const rf_stdio *stdio, rf_status *out, rf_error **err);

/* ── Config files: formats, the standard stack, explain ─────────────── */
/* Configuration file formats. AUTO detects by content: Mitto settings have
 * restricted_runner(s)/acp_servers, picoclaw config.json has isolation,
 * agents.agents, providers, ...; sandbox-runtime settings have
 * network.allowedDomains or filesystem.denyRead/allowWrite/denyWrite;
 * anything else is ringfence's own. JSON or
 * YAML is chosen by extension (.json/.yaml/.yml), else by content. */
typedef enum rf_config_format {
    RF_CONFIG_FORMAT_AUTO = 0,
    RF_CONFIG_FORMAT_RINGFENCE,
    RF_CONFIG_FORMAT_PICOCLAW,
    RF_CONFIG_FORMAT_MITTO,
    RF_CONFIG_FORMAT_SRT, /* Anthropic sandbox-runtime's settings file */
} rf_config_format;
/* "ringfence", "picoclaw", "mitto", "srt" (or "auto") → format; -1 if unknown. */
RF_EXPORT int rf_config_format_parse(const char *name);
/* Add the layer(s) of one file (JSON or YAML, at most 1 MiB), detecting
 * its format by content. Errors in a file say file:line:column. */
RF_EXPORT int rf_config_load_file(rf_config *cfg, const char *path, rf_error **err);
RF_EXPORT int rf_config_load_file_as(rf_config *cfg, const char *path, rf_config_format format,
                                     rf_error **err);

/* The standard stack, in order (later wins): built-in defaults →
 * /etc/ringfence/config.{json,yaml,yml} → the user's file
 * ($XDG_CONFIG_HOME/ringfence/config.*, else ~/.config/ringfence/) →
 * each --config file → agents.defaults and the --agent section → the
 * workspace file (.ringfence.{json,yaml,yml}, and .mittorc once a Mitto
 * file was read) → RINGFENCE_* environment variables → the command line.
 * The workspace file may only tighten unless trust_workspace_config. */
typedef struct rf_config_sources {
    const char *const *config_files; /* --config FILE..., NULL-terminated; may be NULL */
    rf_config_format format;         /* --config-format, for the --config files */
    const char *agent;               /* --agent NAME, or NULL */
    const char *runner;              /* --runner TYPE (Mitto runner type), or NULL */
    bool trust_workspace_config;     /* --trust-workspace-config */
    const char *flags_json;          /* the command-line layer (ringfence schema, absolute
                                        paths), or NULL; added last */
    const char *flags_origin;        /* its name in errors and --explain (NULL: "command line") */
    const rf_context *ctx;           /* home, cwd, environment (NULL: the process's) */
    const char *system_dir;          /* NULL: /etc/ringfence */
    const char *user_dir;            /* NULL: $XDG_CONFIG_HOME/ringfence or ~/.config/ringfence */
    bool no_system_file, no_user_file, no_workspace_file, no_environment;
    const char *const *profiles;     /* --profile NAME..., NULL-terminated, applied in order after
                                        the --config files (later wins); may be NULL */
} rf_config_sources;
/* Profiles (docs/profiles.md): every profile name found, sorted (strv,
 * free each and the array); the file of one profile (malloc'd), or NULL
 * with *err (unknown: the hint names the closest). */
RF_EXPORT char **rf_profile_list(rf_error **err);
RF_EXPORT char *rf_profile_find(const char *name, rf_error **err);
RF_EXPORT int rf_config_load_standard(rf_config *cfg, const rf_config_sources *src, rf_error **err);
/* The merged, resolved policy plus, for every setting, the layer it came
 * from: {"policy": {...}, "sources": {"network": "command line", ...}}.
 * malloc'd JSON text, or NULL with *err. */
RF_EXPORT char *rf_config_explain(const rf_config *cfg, const rf_context *ctx, rf_error **err);
/* ── Doctor ──────────────────────────────────────────────────────────── */
/* What this host supports, per backend. rf_doctor_probe() tries things for
 * real in short-lived children (a user namespace with mounts and a fresh
 * /proc, a process under the default seccomp filter, a child cgroup that is
 * removed again); it takes well under a second. */
typedef struct rf_doctor_report rf_doctor_report;
RF_EXPORT rf_doctor_report *rf_doctor_probe(rf_error **err);
RF_EXPORT void rf_doctor_free(rf_doctor_report *report);
/* The report as JSON (fields in docs/doctor.md) or as text for people;
 * malloc'd, NULL on allocation failure. */
RF_EXPORT char *rf_doctor_to_json(const rf_doctor_report *report);
RF_EXPORT char *rf_doctor_to_text(const rf_doctor_report *report);
/* Can backend `name` ("native", "landlock", "none") run here? */
RF_EXPORT bool rf_doctor_backend_usable(const rf_doctor_report *report, const char *name);
/* ── Agent tools a policy enables ──────────────────────────────────────── */
/* The agent tools are exec, read_file, write_file, edit_file, append_file
 * and list_dir; a policy enables each unless its tools.disabled names it
 * (picoclaw's per-agent "tools": {"disabled": [...]}). Every entry point
 * honours it: rf_plan_build_shell (exec), the rf_fs_* verbs of a handle from
 * rf_fs_open_for_policy, the MCP server, and the CLI's exec and fs. */
RF_EXPORT bool rf_policy_tool_enabled(const rf_policy *policy, const char *tool);
/* 0 when enabled, else -1 with *err: 'tool "NAME" not found: it is disabled
 * for this agent (tools.disabled)', errno EACCES, exit code 126. */
RF_EXPORT int rf_policy_check_tool(const rf_policy *policy, const char *tool, rf_error **err);
/* ── File tools ────────────────────────────────────────────────────────── */
/* read/write/append/edit/list confined to a workspace (docs/fs.md). Paths
 * are resolved by the kernel beneath a directory fd of the workspace
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "../", absolute
 * paths and symlinks cannot leave it. Outside the workspace only what the
 * allow_* settings name, matched on the canonical path of the object that
 * was actually opened. Writes replace the file atomically (temp file in the
 * same directory, fsync, rename): a failed write leaves the old file intact.
 *
 * Every error sets rf_error_exit_code() to RF_FS_EXIT_FAILED; a refusal
 * ("access denied: ...") also sets rf_error_errno() to EACCES. */
typedef struct rf_fs rf_fs;
enum {
    RF_FS_EXIT_FAILED = 1,                        /* denied or failed */
    RF_FS_DEFAULT_MAX_READ = 1024 * 1024,         /* read cap, bytes */
    RF_FS_MAX_WRITE = 16 * 1024 * 1024,           /* write/append/edit cap */
    RF_FS_DEFAULT_MAX_LIST = 1000,                /* list entries */
    RF_FS_MAX_LIST = 100000,
};
typedef struct rf_fs_options {
    const char *workspace;              /* absolute, an existing directory */
    bool restrict_to_workspace;         /* confine to the workspace (default true) */
    bool allow_read_outside_workspace;  /* reads (and list) anywhere */
    const char *const *allow_read_paths;  /* PCRE2 regexes on canonical absolute
                                             paths; NULL-terminated, or NULL */
    const char *const *allow_write_paths; /* idem, for write/append/edit */
    /* Workspace-relative paths nothing may write, append to or edit (nor
     * anything beneath them). NULL = the built-in list (.git/hooks,
     * .ringfence.json, .ringfence.yaml, .ringfence.yml); an empty vector
     * (just NULL) = none. */
    const char *const *protected_paths;
    uint64_t max_read_bytes;            /* 0 = RF_FS_DEFAULT_MAX_READ */
} rf_fs_options;
/* Initialise opts with the defaults (restrict_to_workspace = true). */
RF_EXPORT void rf_fs_options_init(rf_fs_options *opts);
/* The handle keeps a directory fd of the workspace and the compiled
 * patterns; opts and its strings may be freed after the call. */
RF_EXPORT rf_fs *rf_fs_open(const rf_fs_options *opts, rf_error **err);
/* Same, from a resolved policy (workspace, restrict_to_workspace,
 * allow_read_outside_workspace, tools.*, protected_paths). */
RF_EXPORT rf_fs *rf_fs_open_for_policy(const rf_policy *policy, rf_error **err);
RF_EXPORT void rf_fs_close(rf_fs *fs);
/* Read a text file. offset is the first line to return (1-based; 0 = 1),
 * limit the number of lines (0 = to the end). Lines end at '\n' and keep
 * it. Fails when the file has a NUL byte in its first 8 KiB (binary), or
 * when the text to return exceeds max_read_bytes. *out is malloc'd and
 * NUL-terminated (*out_len excludes the NUL). */
RF_EXPORT int rf_fs_read(rf_fs *fs, const char *path, uint64_t offset, uint64_t limit,
                         char **out, size_t *out_len, rf_error **err);
/* Create or replace path with len bytes of data, creating missing parent
 * directories. Atomic: readers see the old or the new file, never a part. */
RF_EXPORT int rf_fs_write(rf_fs *fs, const char *path, const char *data, size_t len, rf_error **err);
/* Append to path (created if missing) through O_APPEND on the same inode;
 * on a failed write the file is truncated back to its old size. */
RF_EXPORT int rf_fs_append(rf_fs *fs, const char *path, const char *data, size_t len, rf_error **err);
/* Replace the one occurrence of old_text by new_text (atomic, like write).
 * Fails, changing nothing, when old_text occurs zero or several times. */
RF_EXPORT int rf_fs_edit(rf_fs *fs, const char *path, const char *old_text, const char *new_text,
                         rf_error **err);
/* List a directory: names sorted (byte order) within each directory,
 * directories with a trailing '/', symlinks never followed. Recursive
 * entries are paths relative to `path`, each directory followed by its
 * contents. max_entries 0 = RF_FS_DEFAULT_MAX_LIST (capped at RF_FS_MAX_LIST).
 * *out_entries is a NULL-terminated vector; free it with rf_fs_entries_free().
 * Returns 0, or 1 when the listing stopped at max_entries (truncated). */
RF_EXPORT int rf_fs_list(rf_fs *fs, const char *path, bool recursive, size_t max_entries,
                         char ***out_entries, rf_error **err);
RF_EXPORT void rf_fs_entries_free(char **entries);
/* ── Limits ────────────────────────────────────────────────────────────── */
/* How a limit is enforced (docs/limits.md): by a cgroup, by an rlimit
 * fallback (approximate: per process, not per sandbox), or not at all. */
typedef enum {
    RF_LIMIT_NONE,
    RF_LIMIT_CGROUP_V2,
    RF_LIMIT_CGROUP_V1,
    RF_LIMIT_RLIMIT,
} rf_limit_how;
typedef struct rf_limits_report {
    rf_limit_how memory, pids, cpu;
} rf_limits_report;
/* "cgroup-v2", "cgroup-v1", "rlimit", "none" (static). */
RF_EXPORT const char *rf_limit_how_name(rf_limit_how how);

/* Parse limit settings as users write them. 0, "none" and "unlimited" mean
 * no limit (0). Errors name the setting (limits.memory, ...) and carry a
 * hint with the expected form.
 *  memory:  "1048576", "512k", "256M", "1.5G", "1T" (binary units, optional
 *           "b"/"ib" suffix, any case); at least 4k.
 *  cpu:     CPUs as a decimal, "0.25" = a quarter of one CPU; 0.01 to 4096.
 *  pids:    a whole number up to 4194304.
 *  seconds: "90", "1.5", "500ms", "2m", "1h"; up to a year (for
 *           limits.timeout and the kill grace). */
RF_EXPORT int rf_limits_parse_memory(const char *s, uint64_t *out, rf_error **err);
RF_EXPORT int rf_limits_parse_cpu(const char *s, double *out, rf_error **err);
RF_EXPORT int rf_limits_parse_pids(const char *s, uint64_t *out, rf_error **err);
RF_EXPORT int rf_limits_parse_seconds(const char *s, double *out, rf_error **err);
/* Bytes as the shortest exact "256M" / "1536K" / "1000"; writes at most
 * size bytes; returns the length or -1 if it did not fit. */
RF_EXPORT int rf_limits_format_memory(uint64_t bytes, char *buf, size_t size);

/* ── Guard: is this shell command allowed? (seed 001's exec guard) ─────── */
/* A seatbelt, not the wall: it catches the obvious dangerous command before
 * it runs; the sandbox is what holds when something gets past it. */
typedef struct rf_guard rf_guard;
typedef struct rf_guard_options {
    bool enable_deny_patterns;      /* default true; false: no pattern checks */
    const char *const *custom_deny; /* extra deny patterns (PCRE2), NULL-terminated or NULL */
    const char *const *custom_allow;/* a command matching one skips the deny patterns */
    bool restrict_to_workspace;     /* default true: paths outside `workspace` block */
    const char *workspace;          /* absolute; required when restricting */
    const char *cwd;                /* absolute working directory for relative paths
                                       (NULL: the workspace) */
} rf_guard_options;
#define RF_GUARD_OPTIONS_INIT { .enable_deny_patterns = true, .restrict_to_workspace = true }

typedef enum {
    RF_GUARD_ALLOWED = 0,
    RF_GUARD_BLOCKED_PATTERN, /* a deny pattern matched */
    RF_GUARD_BLOCKED_PATH,    /* a path outside the working directory */
} rf_guard_result;

typedef struct rf_guard_verdict {
    rf_guard_result result;
    char *message; /* "Command blocked by safety guard (...)", NULL when allowed */
    char *pattern; /* the deny pattern that matched, or NULL */
    char *detail;  /* the (normalised) text it matched, or the offending path */
} rf_guard_verdict;

/* Compile the default and custom patterns once. A bad pattern fails with an
 * error naming the list, the pattern and the offset. Limits: 1000 custom
 * patterns, 4096 bytes each. */
RF_EXPORT rf_guard *rf_guard_new(const rf_guard_options *opts, rf_error **err);
/* The guard for a resolved policy: tools.exec.{enable_deny_patterns,
 * custom_deny_patterns, custom_allow_patterns}, restrict_to_workspace,
 * workspace, and the working directory the command will start in. */
RF_EXPORT rf_guard *rf_guard_new_for_policy(const rf_policy *policy, rf_error **err);
/* The guard for an exec-tool command, whose working directory is the
 * policy's chdir, else the workspace (as rf_plan_build_shell runs it). */
RF_EXPORT rf_guard *rf_guard_new_for_shell(const rf_policy *policy, rf_error **err);
/* Check one shell command (as for sh -c). Fills *out (clear it with
 * rf_guard_verdict_clear) and returns 0; returns < 0 when the command
 * cannot be checked (longer than 64 KiB, too deeply nested, out of memory):
 * treat that as blocked. Safe to call from several threads at once. */
RF_EXPORT int rf_guard_check(const rf_guard *g, const char *command, rf_guard_verdict *out, rf_error **err);
RF_EXPORT void rf_guard_verdict_clear(rf_guard_verdict *v);
RF_EXPORT void rf_guard_free(rf_guard *g);

/* ── Backends ──────────────────────────────────────────────────────── */
/* The backend a plan runs on: "native", "landlock" or "none" (auto and the
 * backends not built yet are resolved by rf_plan_build; see docs/backends.md).
 * The string is static. */
RF_EXPORT const char *rf_plan_backend(const rf_plan *plan);
/* What that backend does not enforce on this host (the plan's "cannot"
 * list; empty for native); NULL-terminated, owned by plan. */
RF_EXPORT char *const *rf_plan_cannot(const rf_plan *plan);

/* ── Export: the plan for other runtimes (src/lib/export) ─────────────── */
/* Each is a pure translation of a native-backend plan; what the target has
 * no field for is written into the output (annotations, comments), and a
 * policy that requires it (landlock: required) is refused unless
 * accept_weaker. See docs/scale.md. */
/* An OCI runtime bundle in dir (new, or an empty directory): config.json
 * and rootfs/, built aside and renamed into place (all or nothing). */
RF_EXPORT int rf_export_oci_bundle(const rf_plan *plan, const char *dir, bool accept_weaker, rf_error **err);
/* Kubernetes objects in dir (created if missing): ringfence.k8s.json (a
 * List: RuntimeClass, NetworkPolicy for network none, Pod) and the Pod's
 * Localhost seccomp profile as seccomp/ringfence/NAME.json, to copy into
 * the kubelet's seccomp root. */
RF_EXPORT int rf_export_k8s(const rf_plan *plan, const char *dir, bool accept_weaker, rf_error **err);
/* The plan as a macOS Seatbelt profile (text, malloc'd). */
RF_EXPORT char *rf_plan_to_sbpl(const rf_plan *plan, rf_error **err);

/* ── MCP ───────────────────────────────────────────────────────────────── */
/* A Model Context Protocol server (JSON-RPC 2.0, one message per line) that
 * serves the agent tools of a policy: exec (guard-checked, then /bin/sh -c
 * in a fresh sandbox per call), read_file, write_file, edit_file,
 * append_file and list_dir (confined to the workspace). Tools named in the
 * policy's tools.disabled are not offered. Tool calls run concurrently on
 * worker threads; notifications/cancelled kills the call's process tree.
 * Writing to a closed output raises SIGPIPE: a program that must survive
 * its client going away installs a handler for it (not SIG_IGN, which the
 * sandboxed commands would inherit). */
typedef struct rf_mcp_server rf_mcp_server;
enum { RF_MCP_LOG_ERROR, RF_MCP_LOG_WARNING, RF_MCP_LOG_INFO, RF_MCP_LOG_DEBUG };
typedef struct rf_mcp_options {
    size_t max_output_bytes;       /* per stream of an exec result (0: 64 KiB) */
    size_t max_message_bytes;      /* longest message accepted (0: 4 MiB) */
    unsigned max_concurrent_calls; /* tools/call in flight at once (0: 8) */
    size_t exec_pool_size;         /* exec sandboxes kept ready (a warm pool; 0: none) */
    /* Log lines (no newline) at or below log_level; called from any thread.
     * NULL: no logging. */
    void (*log)(void *userdata, int level, const char *message);
    void *log_userdata;
    int log_level;
} rf_mcp_options;
/* policy is borrowed and must outlive the server; opts may be NULL. */
RF_EXPORT rf_mcp_server *rf_mcp_server_new(const rf_policy *policy, const rf_mcp_options *opts, rf_error **err);
/* Serve requests read from in_fd, answers written to out_fd, until in_fd
 * ends; then the running calls get 5 s to finish and be answered, and
 * those still running are killed (unanswered) and waited for. Returns 0
 * at the end of input, < 0 if reading failed. */
RF_EXPORT int rf_mcp_server_serve(rf_mcp_server *server, int in_fd, int out_fd, rf_error **err);
RF_EXPORT void rf_mcp_server_free(rf_mcp_server *server);
/* The protocol versions served, newest first, NULL-terminated (static). */
RF_EXPORT const char *const *rf_mcp_protocol_versions(void);

/* Version string, e.g. "0.1.0". */
/* ── Instances: a home of its own for an agent, a chat, a server ──────── */
/* On disk below the instance root (ROOT/instances/NAME, or a target of
 * its own): config, data, state, cache, runtime, home, tmp, all 0700,
 * owned by the instance's identity (a root caller's instances each get
 * their own uid and gid). See docs/instances.md. */
typedef struct rf_instance rf_instance;
typedef struct rf_instance_options {
    const char *target;             /* the tree's place, or NULL: ROOT/instances/NAME */
    const char *const *credentials; /* "SRC[:DEST]": copied 0600, never linked (NULL-terminated) */
    const char *const *copies;      /* "SRC[:DEST]": files/dirs copied, modes kept, no set-id bits */
    bool ephemeral;                 /* removed when its last sandbox ends (delete_on_exit) */
    const char *profile;            /* "chat" (256 MiB, 200 processes, 0.25 CPU) or NULL */
    const char *home;               /* the caller's home, for the refused targets */
    bool own_identity;              /* unprivileged caller: a uid/gid of its own from /etc/subuid, /etc/subgid
                                     * (newuidmap); an error without a range. Root callers always get one. */
    const rf_policy *network_of;    /* store this policy's network settings (allowlist, publish...) with it:
                                     * later runs get them, and may only narrow them */
} rf_instance_options;
RF_EXPORT void rf_instance_options_init(rf_instance_options *opts);
/* Create NAME (an error if it exists) and open it. */
RF_EXPORT rf_instance *rf_instance_create(const char *root, const char *name, const rf_instance_options *opts,
                                          rf_error **err);
/* Open an existing instance; while open, it counts as running (rm refuses). */
RF_EXPORT rf_instance *rf_instance_open(const char *root, const char *name, rf_error **err);
RF_EXPORT const char *rf_instance_name(const rf_instance *in);
RF_EXPORT const char *rf_instance_dir(const rf_instance *in);
RF_EXPORT char *rf_instance_to_json(const rf_instance *in);
/* Close; an ephemeral instance is removed when no other handle is open. */
RF_EXPORT void rf_instance_close(rf_instance *in);
/* Make the policy run in the instance: its tree as home, its identity,
 * its profile's limits where the policy sets none. */
RF_EXPORT int rf_policy_use_instance(rf_policy *policy, const rf_instance *in, rf_error **err);
RF_EXPORT int rf_instance_remove(const char *root, const char *name, bool force, rf_error **err);
RF_EXPORT char *rf_instance_list_json(const char *root, rf_error **err);
RF_EXPORT char *rf_instance_show_json(const char *root, const char *name, rf_error **err);
/* Finish what a crash interrupted; remove ephemeral instances nothing runs in. */
RF_EXPORT int rf_instance_gc(const char *root, rf_error **err);
/* The policy's instance root, and the instance it names (instance, or
 * NULL) and whether it is ephemeral (delete_on_exit). */
RF_EXPORT const char *rf_policy_instance_root(const rf_policy *policy);
RF_EXPORT const char *rf_policy_instance(const rf_policy *policy, bool *ephemeral);

/* ── The warm pool: sandboxes built ahead, one command each ────────────── */
/* `size` sandboxes of the policy are kept ready (native backend only); a
 * run takes one, hands it the command and waits until the command and
 * every process it started are gone; the pool's thread then reaps the
 * sandbox's init and builds a new one in the background. Nothing of one command is seen by the next.
 * Thread-safe: several runs may be in flight. See docs/pool.md. */
typedef struct rf_pool rf_pool;
typedef struct rf_pool_request {
    char *const *argv;     /* argv[0] is looked up in the sandbox's PATH */
    char *const *env_add;  /* "KEY=VALUE" on top of the policy's environment, or NULL */
    const char *cwd;       /* inside the sandbox; NULL: the plan's */
    rf_stdio stdio;        /* -1: the caller's own 0, 1, 2; RF_STDIO_PTY: a pty
                              inside, relayed to our fd 0 and 1 during the run */
    double timeout_s;      /* 0: the policy's */
} rf_pool_request;
RF_EXPORT rf_pool *rf_pool_new(const rf_policy *policy, size_t size, rf_error **err);
RF_EXPORT int rf_pool_run(rf_pool *pool, const rf_pool_request *req, rf_status *out, rf_error **err);
RF_EXPORT size_t rf_pool_idle(rf_pool *pool);
RF_EXPORT char *rf_pool_plan_json(const rf_pool *pool);
RF_EXPORT void rf_pool_free(rf_pool *pool);
/* Serve a pool on a unix socket (0600; only the serving uid may connect),
 * until *stop becomes true or a fatal error, or until socket_path no
 * longer leads to its socket (removed, its directory removed, replaced):
 * then it stops as when *stop becomes true and returns 1, *err saying
 * which (and a hint); 0 after *stop, < 0 on an error. `policy_key` is what clients
 * must present: a request made under another policy is refused.
 * reload(ud) is called about once a second, and before a request whose key
 * differs from the pool's is refused; when it returns a new key and policy,
 * the pool is rebuilt with them (a config file was edited). It is never
 * called from two threads at once. */
typedef int (*rf_pool_reload_fn)(void *ud, char **new_key, rf_policy **new_policy);
RF_EXPORT int rf_pool_serve(const char *socket_path, const rf_policy *policy, const char *policy_key, size_t size,
                            rf_pool_reload_fn reload, void *ud, volatile int *stop, rf_error **err);
/* A client: run argv through the pool at socket_path with our stdio; the
 * status comes back as from rf_proc_wait. */
RF_EXPORT int rf_pool_client_run(const char *socket_path, const char *policy_key, char *const argv[],
                                 const char *cwd, rf_status *out, rf_error **err);
/* The same with the command's stdio chosen: stdio NULL or a field -1: our
 * own 0, 1, 2; a descriptor: that one; RF_STDIO_PTY: a pty made inside
 * the sandbox, its master passed to us by the server (which keeps no
 * copy) and relayed here to our fd 0 and 1 as rf_proc_wait does (raw
 * mode when fd 0 is a terminal, restored before this returns; SIGWINCH
 * followed). A client that goes away has its sandbox hung up. */
RF_EXPORT int rf_pool_client_run_stdio(const char *socket_path, const char *policy_key, char *const argv[],
                                       const char *cwd, const rf_stdio *stdio, rf_status *out, rf_error **err);
/* The policy as a pool compares it: its JSON without what may differ
 * between a server and its clients (the caller's cwd, warnings). */
RF_EXPORT char *rf_policy_key(const rf_policy *policy);

/* ── Changes: an overlay session's changeset (docs/changes.md) ──────────── */
/* With `changes: overlay` (--changes overlay) the workspace is an overlayfs:
 * the real workspace the read-only lower layer, every write, delete and
 * rename of the command landing in the session's upper layer under the
 * instance root (sessions/ID/). Nothing reaches the real workspace until
 * rf_session_apply. Sessions are found by id under an instance root. */
typedef struct rf_session rf_session;
typedef struct rf_changeset rf_changeset;
typedef enum rf_change_kind {
    RF_CHANGE_ADDED,
    RF_CHANGE_MODIFIED, /* content (and maybe mode) */
    RF_CHANGE_MODE,     /* permission bits only */
    RF_CHANGE_DELETED,
    RF_CHANGE_RENAMED,  /* old_path deleted, path added with its content */
    RF_CHANGE_REFUSED,  /* never applied: a fifo, socket, device node... (`refused` says) */
} rf_change_kind;
typedef struct rf_change {
    rf_change_kind kind;
    char *path;       /* workspace-relative, raw bytes (may hold newlines, invalid UTF-8) */
    char *old_path;   /* RENAMED: where it came from, else NULL */
    char type;        /* 'f' file, 'd' directory, 'l' symlink, '?' other */
    unsigned old_mode, new_mode; /* st_mode bits, 0 when absent */
    long long old_size, new_size;
    const char *refused; /* why it is never applied, or NULL */
} rf_change;
/* The id of a new session: 12 lowercase hex digits. */
#define RF_SESSION_ID_MAX 64
/* Open the session `id` under the instance root `root`. An unknown id is an
 * error whose hint lists how to see the sessions. */
RF_EXPORT rf_session *rf_session_open(const char *root, const char *id, rf_error **err);
RF_EXPORT void rf_session_free(rf_session *s);
RF_EXPORT const char *rf_session_id(const rf_session *s);
RF_EXPORT const char *rf_session_workspace(const rf_session *s);
RF_EXPORT const char *rf_session_instance(const rf_session *s); /* or NULL */
RF_EXPORT double rf_session_created(const rf_session *s);       /* seconds since the epoch */
/* The ids of the sessions under root, oldest first (NULL-terminated,
 * malloc'd; free with rf_strv_free-like loop or rf_session_list_free). */
RF_EXPORT char **rf_session_list(const char *root, rf_error **err);
RF_EXPORT void rf_session_list_free(char **ids);
/* Walk the upper layer into a changeset (deterministic: sorted by path). */
RF_EXPORT rf_changeset *rf_session_diff(rf_session *s, rf_error **err);
RF_EXPORT size_t rf_changeset_count(const rf_changeset *cs);
RF_EXPORT const rf_change *rf_changeset_get(const rf_changeset *cs, size_t i);
RF_EXPORT long long rf_changeset_bytes(const rf_changeset *cs); /* bytes of the new content */
RF_EXPORT void rf_changeset_free(rf_changeset *cs);
/* The unified diff of one change (text), or a one-line summary (binary,
 * symlink, refused), malloc'd. color: ANSI colours. *insertions and
 * *deletions (may be NULL) get the counted lines. */
RF_EXPORT char *rf_change_diff(rf_session *s, const rf_change *c, bool color, size_t *insertions,
                               size_t *deletions, rf_error **err);
/* The same with flags: RF_DIFF_COLOR (ANSI colours), RF_DIFF_VISIBLE (for
 * a terminal: the content's control characters shown as "^[", "^M",
 * "\u009b", "\xff" rather than sent, and a line before the file's hunks
 * saying how many it holds; *controls, may be NULL, gets that count).
 * Paths are C-quoted either way. */
#define RF_DIFF_COLOR 1u
#define RF_DIFF_VISIBLE 2u
RF_EXPORT char *rf_change_diff_flags(rf_session *s, const rf_change *c, unsigned flags, size_t *insertions,
                                     size_t *deletions, size_t *controls, rf_error **err);
/* path as git prints it: C-quoted when it holds control characters, '"',
 * '\\' or invalid UTF-8, else as it is (malloc'd). */
RF_EXPORT char *rf_change_quote_path(const char *path);
/* What rf_session_apply did: lists of workspace-relative paths (raw). */
typedef struct rf_apply_report {
    char **applied;
    char **conflicts; /* the real file changed since the session began: left as it is */
    char **refused;   /* never applied (see rf_change.refused) */
    char **failed;    /* could not be written (a full disk...): the old file is intact */
} rf_apply_report;
/* Write the session's changes into the real workspace: each file
 * atomically (temp file, fsync, rename), deletions, modes without set-id
 * bits, never through a symlink (openat2 RESOLVE_BENEATH). `only` (may be
 * NULL): workspace-relative paths (or absolute ones inside the workspace)
 * to apply, with everything beneath them. `force`: overwrite conflicts.
 * Applied changes leave the session, so a rerun finishes an interrupted
 * apply; the session is removed once nothing is left in it. Returns 0 when
 * everything selected was applied, 1 when something was not (see report),
 * < 0 with *err when nothing could be done. */
RF_EXPORT int rf_session_apply(rf_session *s, char *const *only, bool force, rf_apply_report *report,
                               rf_error **err);
RF_EXPORT void rf_apply_report_clear(rf_apply_report *r);
/* When `policy` has changes: overlay and names no session: make it run
 * every later command in one new session (its id chosen and its directory
 * made now), what `ringfence mcp --changes overlay` does for a
 * connection; otherwise nothing. The id is rf_policy_session. */
RF_EXPORT int rf_policy_start_session(rf_policy *policy, rf_error **err);
RF_EXPORT const char *rf_policy_session(const rf_policy *policy); /* or NULL */
/* Delete the session and its upper layer; the real workspace is untouched. */
RF_EXPORT int rf_session_discard(rf_session *s, rf_error **err);

RF_EXPORT const char *rf_version(void);

#ifdef __cplusplus
}
#endif
#endif
