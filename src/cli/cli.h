/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ringfence command: one file per subcommand, each a client of
 * libringfence. Only this layer prints; it prints errors as
 *   ringfence: <what failed>: <why>
 *   hint: <how to fix it>
 * on stderr, never anything on stdout but a subcommand's own output. */
#pragma once
#include "ringfence.h"

/* Every subcommand: argv[0] is the subcommand name. Returns the exit code. */
typedef int (*rf_cli_fn)(int argc, char **argv);

int rf_cli_run(int argc, char **argv);
int rf_cli_plan(int argc, char **argv);
int rf_cli_config(int argc, char **argv);
int rf_cli_doctor(int argc, char **argv);
int rf_cli_fs(int argc, char **argv);
int rf_cli_exec(int argc, char **argv);
int rf_cli_mcp(int argc, char **argv);
int rf_cli_export(int argc, char **argv);
int rf_cli_instance(int argc, char **argv);
int rf_cli_serve(int argc, char **argv);
int rf_cli_profile(int argc, char **argv);
int rf_cli_learn(int argc, char **argv);
int rf_cli_changes(int argc, char **argv);
int rf_cli_audit(int argc, char **argv);
int rf_cli_audit_daemon(int argc, char **argv);
int rf_cli_ps(int argc, char **argv);
int rf_cli_top(int argc, char **argv);
int rf_cli_stop(int argc, char **argv);
int rf_cli_policy_check(int argc, char **argv);
/* sandboxes.c: the running sandboxes ps, top and stop see (this user's;
 * root: everyone's) as a JSON array, or NULL with *code set (printed);
 * printed as a table sorted by a column (cpu, mem, age, procs, id). */
#include <jansson.h>
json_t *rf_cli_sandboxes(int *code);
bool rf_cli_sort_known(const char *key);
void rf_cli_print_sandboxes(FILE *out, json_t *rows, const char *sort);
/* completion.c: print the completion script for shell (bash, zsh, fish). */
int rf_cli_completion(const char *shell, const char *const *subs, const char *const *summaries, size_t n);

/* safe.c: s with every byte outside printable ASCII (and the backslash)
 * as \xNN: what a sandboxed command chose, on a terminal. */
#include <stdio.h>
void rf_cli_put_safe(FILE *out, const char *s);
/* Print err as "ringfence: msg" + "hint: ..." and return its exit code. */
int rf_cli_report(const rf_error *err);
/* Print a usage error for a subcommand and return 125. */
int rf_cli_usage_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct rf_cli_opts;
/* runner.c (what run, learn, exec and run --via share): run argv
 * through the pool at o->via; returns the exit code. */
int rf_cli_run_via(struct rf_cli_opts *o, char **argv);
/* runner.c: --pty, --no-pty or neither, and whether stdin is a terminal in
 * the foreground: the command's stdio (io filled and returned), or NULL
 * for ours as it is. native: the backend can make a pty (a pool's can). */
const rf_stdio *rf_cli_choose_stdio(const struct rf_cli_opts *o, bool native, rf_stdio *io);
/* --status-json's way of writing a file: beside it, fsync'd, renamed
 * over it (a fifo or device written in place). -1 with errno. */
int rf_cli_write_atomic(const char *path, const char *text, size_t len);
/* observed.c: after an observed run (learn, --explain-denials), the report;
 * -1 when learn --write failed (printed). */
int rf_cli_observed(const struct rf_cli_opts *o, const rf_plan *plan, rf_proc *proc, const rf_status *st);
/* runner.c: start the plan, forward signals, wait, report; returns the exit code. */
int rf_cli_execute(const struct rf_cli_opts *o, const rf_plan *plan);
