/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the backends share (internal to libringfence): the choice made by
 * `--backend auto`, the instance directories every backend creates, and
 * the entry points rf_spawn() dispatches to. */
#pragma once
#include "model/plan.h"
#include "proc/placeholder.h"

#include <stdbool.h>
#include <stddef.h>

/* Can this process build the native backend's sandbox? A short-lived child
 * tries what fails in practice: a user namespace with its id map, a mount
 * and a pid namespace, and a fresh /proc (which a container with masked
 * /proc paths forbids). Nothing is cached: hosts change between runs.
 * On failure `why` (may be NULL) says which step failed and its errno. */
bool rf_backend_probe_native(char *why, size_t size);
/* A root caller's native sandbox maps the command's uid 0 to an
 * unprivileged host id only with these capabilities (plan_root.c): the
 * name of the first one missing ("CAP_SYS_ADMIN", ...), or NULL. `netns`:
 * the plan makes a network namespace (CAP_NET_ADMIN brings loopback up). */
const char *rf_backend_root_lacks(bool netns);

/* --backend auto: native when the probe above passes, else landlock when
 * the kernel has Landlock, else an error naming both reasons. *reason gets
 * a malloc'd sentence for the plan ("auto: ..."). */
int rf_backend_choose_auto(rf_backend_kind *ret, char **reason, rf_error **err);

/* Create the plan's instance directories (0700). A symlink planted in their
 * place is refused, not followed. When the command runs under another uid
 * than the caller (a root caller under the landlock backend), the
 * runtime-user-env tree is handed to that uid: it is the command's HOME. */
int rf_backend_make_instance_dirs(const rf_plan *plan, rf_error **err);

/* A root caller's command without a user namespace (bwrap, firejail): it
 * switches to the workspace's owner (its group, never root's), or to
 * map_root_to / 65534 as the plan's identity already says; drop_ids set,
 * no id-mapped mounts. The caller checks uid_host != 0. */
void rf_backend_root_as_owner(rf_plan *plan, const rf_policy *policy);
/* A root caller's named instance runs as its own uid (instances.md): with
 * ids dropped (landlock, bwrap, firejail) its tree is out of the command's
 * reach, so that is refused, naming the backend and the fix. */
int rf_backend_refuse_root_instance(const rf_plan *plan, const rf_policy *policy, rf_error **err);

/* network: allowlist (native, bwrap). The child's first step after "go"
 * is to send the proxy's listening socket, made in the sandbox's network
 * namespace, over net_chan; the proxy runs here, in ours, and with
 * --publish keeps net_chan to ask for sockets of that namespace. No
 * socket means the child failed before: its report says why, and
 * rf_proc_wait tells. Takes net_chan. */
int rf_backend_start_proxy(const rf_plan *plan, rf_proc *proc, int net_chan, rf_error **err);

/* What every backend prepares on the host before its first clone: the
 * instance directories and, when a limit needs them, the cgroups. */

/* changes: overlay: create (or check) the plan's session and take its
 * lock for the sandbox's life: *lock gets the fd, -1 without a session. */
int rf_backend_session_open(const rf_plan *plan, int *lock, rf_error **err);

typedef struct rf_backend_start {
    struct rf_cgroup *cgroup;
    rf_placeholders *placeholders;
    rf_limits_report how;
    char **warnings;
    int session_lock; /* changes: overlay: the session, created and locked; -1 */
} rf_backend_start;
int rf_backend_start_prepare(const rf_plan *plan, rf_backend_start *s, rf_error **err);
/* Undo it (spawn failed before a rf_proc took it over). */
void rf_backend_start_release(rf_backend_start *s);
/* Hand it to proc (which then owns the cgroup and the warnings). */
void rf_backend_start_give(rf_backend_start *s, rf_proc *proc);

/* The sandbox's cgroups, only when the plan sets a memory, pids or cpu
 * limit (creating them costs about a millisecond), with a keeper that
 * removes them if the caller is killed. *cg stays NULL otherwise; *how says
 * what enforces each limit; approximate ones add to *warnings. */
struct rf_cgroup;
int rf_backend_make_cgroup(const rf_plan *plan, struct rf_cgroup **cg, rf_limits_report *how, char ***warnings,
                           rf_error **err);

/* rf_spawn, with the pty's relay (RF_STDIO_PTY streams) handing output to
 * sink and reading input from sink->in instead of the caller's fd 0 and 1
 * (tty/tty.h: the MCP exec tool, whose stdio is the MCP stream). sink is
 * borrowed until the rf_proc is freed; NULL: rf_spawn's relay. */
struct rf_tty_sink;
rf_proc *rf_spawn_with_sink(const rf_plan *plan, const rf_stdio *stdio, const struct rf_tty_sink *sink,
                            rf_error **err);

/* backend/landlock: the landlock and none backends (no namespaces; a child
 * subreaper as init). */
rf_proc *rf_hostproc_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);
