/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A started sandbox: its init's pid and pidfd, the report channel, and the
 * deadlines. Waited for with a timeout; killed as a whole tree. */
#pragma once
#include "model/policy.h"
#include "limits/cgroup.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

struct rf_proc {
    pid_t pid;     /* host pid of the sandbox's init */
    int pidfd;
    int sock;      /* report channel; closed only by rf_proc_free, so a
                      kill from another thread never writes to a reused fd */
    /* Shared with rf_proc_kill/_terminate from another thread or a signal
     * handler while rf_proc_wait runs: atomics (lock-free, so still
     * async-signal-safe). Found by the TSan build (issue 13). */
    atomic_bool sock_eof; /* init closed the channel: read no more */
    int wake_fd;   /* eventfd: rf_proc_terminate from another thread wakes
                      rf_proc_wait, so the kill grace starts counting
                      (a wait with no deadline would sleep through it) */
    rf_limits limits;
    struct timespec started;
    atomic_bool reaped;
    atomic_bool terminating;  /* SIGTERM sent to the tree, SIGKILL pending */
    bool timed_out;
    atomic_bool killed; /* SIGKILL sent */
    bool have_exit;    /* init reported the command's wait status */
    int exit_status;
    int exec_errno;    /* execve failed with this */
    char setup_error[600];
    int setup_errno;
    char setup_step[48];
    int init_status;   /* wait status of init */
    struct rusage *usage;
    struct rf_cgroup *cgroup;  /* NULL when no limit needs one */
    rf_limits_report how;      /* what enforces each limit */
    char **warnings;
    struct rf_net_proxy *net_proxy; /* network: allowlist, or NULL */
    struct rf_placeholders *placeholders; /* removed once the sandbox is gone */
    struct rf_tty *tty; /* RF_STDIO_PTY: the relay (tty/), or NULL */
    bool pty_hold;      /* no relay here: keep the pty's master for
                           rf_proc_take_pty (a pool's server passes it on) */
    int pty_master;     /* kept, not yet taken; -1 */
    struct rf_observer *observer; /* plan->observe: the supervisor (observe/), or NULL */
    int session_lock;   /* changes: overlay: the session's flock, held while the
                           sandbox lives (changes.h), or -1 */
    char *session;      /* ...its id, for the status record, or NULL */
    char id[13];        /* the sandbox's id: the audit trail's, `ringfence ps`'s */
    struct rf_audit_run *audit; /* plan->audit: its records (audit/run.h), or NULL */
    char *registry_dir; /* where its `ringfence ps` entry is (registry/), or NULL */
    const char *backend; /* for the status record (a static name) */
    char **weakenings;  /* for the status record: the plan's cannot and weakenings */
    double release_stack_at; /* > 0: seconds after the start (rf_proc_release_stack_when_idle) */
    bool tree_via_init; /* no pid namespace (landlock, none): killing init
                           alone would orphan the tree, so SIGKILL is a
                           message to init, which kills every descendant */
};

rf_proc *rf_proc_new(pid_t pid, int pidfd, int sock, const rf_limits *limits);

/* Descriptors served by the waiting thread itself while the sandbox runs
 * (the MCP exec tool's output pipes), so that no second thread is needed
 * to read them. ready(ud, i) is called when fd[i] is readable or hung up;
 * it returns fd[i], or -1 once it is done with it (it closed it). */
#define RF_PROC_WATCH_MAX 2
typedef struct rf_proc_watch {
    int fd[RF_PROC_WATCH_MAX]; /* < 0: none */
    int (*ready)(void *ud, size_t i);
    void *ud;
} rf_proc_watch;

/* Wait until init reported the command's status or is gone, enforcing the
 * deadlines and serving `watch` (may be NULL) meanwhile (proc.c). */
int rf_proc_wait_raw(rf_proc *p, rf_proc_watch *watch, rf_error **err);
/* After the wait: serve `watch` until ready() has closed every descriptor.
 * Init reports only once the whole tree is gone, so the writers are gone
 * too and this does not block for long. */
void rf_proc_watch_finish(rf_proc_watch *watch);
/* The pty's master of a sandbox started with pty_hold: waits until init
 * sent it (it does so before the command starts) and hands it over, or
 * -1 when the sandbox ended first (a setup error: rf_proc_wait reports
 * it) or timeout_ms passed (errno ETIMEDOUT). */
int rf_proc_take_pty(rf_proc *p, int timeout_ms);
/* rf_status_to_json's record as a JSON object (status.c). */
json_t *rf_status_json(const rf_status *s);
/* Once the sandbox has run after_s seconds, rf_proc_wait gives back the
 * stack pages below its frame (rf_stack_release_below), as a caller that
 * will only wait, maybe for days, wants; not at once: most commands have
 * ended by then, and the /proc/self/maps read and the madvise were a
 * tenth of a millisecond of a one-shot start. Only for the thread that
 * started nothing that still lives below its frame (ringfence run). */
void rf_proc_release_stack_when_idle(rf_proc *p, double after_s);
/* rf_proc_wait, serving `watch` while it waits (status.c). */
int rf_proc_wait_watching(rf_proc *p, rf_proc_watch *watch, rf_status *out, rf_error **err);
