/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup subtree of our own from systemd, for callers whose own cgroup
 * cannot hand controllers to a child: on a systemd host every login shell,
 * terminal and service runs in a cgroup that holds processes, and cgroup
 * v2 gives controllers only to the children of an empty cgroup. systemd's
 * answer, which podman and crun use too, is a transient scope with
 * Delegate=yes: a cgroup systemd makes for us, ours to divide.
 *
 * The scope is asked for once per process over the manager's private
 * socket (the system manager for root, the user's own manager otherwise;
 * no D-Bus daemon needed), with sd-bus from libsystemd, loaded with
 * dlopen() on first use so that a start without limits never pays for
 * it. A scope must hold a process, so a small holder process is put in
 * it; the holder then moves to a leaf of the scope, the scope's
 * controllers are enabled for its children, and each sandbox gets a
 * cgroup beside the holder. The holder exits when this process does (or
 * execs); systemd then removes the empty scope. */
#pragma once
#include "ringfence.h"

/* The directory of our delegated scope (e.g.
 * /sys/fs/cgroup/system.slice/ringfence-123-0.scope), made on first call
 * and kept for the process's life; thread-safe. *ret_dir is borrowed.
 * Returns 0, or -1 with *err saying why (no systemd manager to ask, the
 * manager refused, the scope did not appear in time). */
int rf_systemd_scope_dir(const char **ret_dir, rf_error **err);
/* The scope's directory if this process made one already, else NULL. */
const char *rf_systemd_scope_made(void);
