/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer: which host paths a sandboxed command looked for that the
 * sandbox hides or keeps read-only (ringfence learn, run --explain-denials;
 * docs/learn.md).
 *
 * How: an extra seccomp filter, installed in the setup child just before
 * the policy's own filter, returns SECCOMP_RET_USER_NOTIF for the
 * path-taking system calls. Its listener descriptor goes to the caller on
 * the report channel (RF_MSG_OBSERVE, like the pty's master), where a
 * supervisor thread reads each path from the process's memory
 * (process_vm_readv), answers SECCOMP_USER_NOTIF_FLAG_CONTINUE at once and
 * only then classifies it against the plan's mounts. The policy is
 * unchanged: CONTINUE lets the kernel run the call as it would have, and a
 * call the policy's filter denies never reaches the listener (ERRNO and
 * KILL take precedence over USER_NOTIF). With CONTINUE the path we read
 * may differ from the one the kernel then uses (another thread can change
 * the memory in between): what we record is advisory, never a verdict. */
#pragma once
#include "model/plan.h"

#include <stdbool.h>
#include <stddef.h>

#define RF_OBSERVE_MAX_RECORDS 4096 /* distinct paths kept; more are counted */

typedef struct rf_observer rf_observer;

/* The filter (classic BPF, malloc'd) for the setup child to install with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER. */
int rf_observe_compile_filter(void **bpf, size_t *len, rf_error **err);
/* In the setup child, after no_new_privs and before the policy's filter:
 * install bpf and send its listener to the caller. No allocation. Returns
 * 0 or -1 with errno. */
int rf_observe_install(const void *bpf, size_t len, int sock);

/* The caller: what the plan shows, copied (the plan may go first). */
rf_observer *rf_observer_new(const rf_plan *plan, rf_error **err);
/* Serve the listener (taken) on a thread of its own. */
int rf_observer_start(rf_observer *o, int listener);
/* The sandbox is gone: answer what is pending, then join the thread. */
void rf_observer_stop(rf_observer *o);
/* The records as JSON text (malloc'd): {"paths": [...], "dropped": N,
 * "unreadable": N, "notifications": N}. After stop. */
char *rf_observer_report(rf_observer *o);
void rf_observer_free(rf_observer *o);
/* files.on_hidden: ask: the questions, as the status record's
 * network.asked_files (malloc'd JSON), or NULL. */
char *rf_observer_asked(rf_observer *o);

/* classify.c: what the sandbox shows at an absolute path inside. */
typedef enum {
    RF_SEEN_VISIBLE,   /* the host's own file, as on the host */
    RF_SEEN_HIDDEN,    /* exists on the host, not visible inside */
    RF_SEEN_READONLY,  /* visible but read-only, and a write was tried */
    RF_SEEN_HOME,      /* looked for in the sandbox's home; the caller's home has it */
    RF_SEEN_PROTECTED, /* a write to a protected path of the workspace (.git/hooks) */
    RF_SEEN_IGNORED,   /* /proc, /dev, /sys, or nothing on the host */
} rf_seen;
typedef struct rf_view rf_view;
rf_view *rf_view_new(const rf_plan *plan, const char *caller_home);
void rf_view_free(rf_view *v);
/* path: absolute, lexically normalised. host (buffer of PATH_MAX): the
 * host path the verdict is about. */
rf_seen rf_view_classify(const rf_view *v, const char *path, bool write, char *host, size_t hostlen);
/* Collapse "//", "/./" and "/../" in place; false if not absolute. */
bool rf_view_normalise(char *path);
