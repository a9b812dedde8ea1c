/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_proc_kill and rf_proc_terminate from another thread while
 * rf_proc_wait runs (what the MCP server does when a call is cancelled),
 * for the native and none backends: the wait comes back at once. Its value is
 * under ThreadSanitizer (tests/tsan/run): the flags the two threads share
 * are what raced. The sandbox is started before the killer thread exists,
 * so its child is cloned from a single-threaded process (see tsan.supp).
 * And a caller that ignores SIGCHLD still gets its command's status. */
#include "tap.h"
#include "ringfence.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char ws[64], home[128];
static rf_context ctx;

static rf_plan *plan_for(const char *json, char *const argv[], rf_error **err)
{
    rf_config *cfg = rf_config_new();
    rf_policy *policy = NULL;
    rf_plan *plan = NULL;
    if (rf_config_add_json(cfg, "test", json, err) == 0 && (policy = rf_policy_resolve(cfg, &ctx, err)))
        plan = rf_plan_build(policy, argv, err);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return plan;
}

typedef struct killer {
    rf_proc *proc;
    bool terminate; /* rf_proc_terminate (SIGTERM, then SIGKILL after the grace) */
} killer;

static void *kill_soon(void *arg)
{
    killer *k = arg;
    struct timespec t = { 0, 200 * 1000 * 1000 };
    nanosleep(&t, NULL);
    if (k->terminate) {
        rf_proc_terminate(k->proc);
    } else {
        rf_proc_kill(k->proc, SIGTERM);
        rf_proc_kill(k->proc, SIGKILL);
        rf_proc_kill(k->proc, SIGKILL); /* again: harmless */
    }
    return NULL;
}

static void race(const char *backend, bool terminate)
{
    char json[160], desc[160];
    snprintf(json, sizeof json, "{\"backend\": \"%s\", \"accept_weaker\": true, \"limits\": {\"kill_grace\": 0.2}}",
             backend);
    char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"trap '' TERM; sleep 30", NULL };
    rf_error *err = NULL;
    rf_plan *plan = plan_for(json, argv, &err);
    rf_proc *proc = plan ? rf_spawn(plan, NULL, &err) : NULL;
    snprintf(desc, sizeof desc, "%s: started", backend);
    if (!ok(proc != NULL, desc)) {
        printf("# %s\n", err ? rf_error_message(err) : "?");
        rf_error_free(err);
        rf_plan_free(plan);
        return;
    }
    killer k = { proc, terminate };
    pthread_t t;
    pthread_create(&t, NULL, kill_soon, &k);
    rf_status st;
    memset(&st, 0, sizeof st);
    time_t t0 = time(NULL);
    int rc = rf_proc_wait(proc, &st, &err);
    pthread_join(t, NULL);
    /* The command ignores SIGTERM and sleeps 30 s: only the kill (or the
     * terminate's SIGKILL after the grace) ends it this soon. */
    snprintf(desc, sizeof desc, "%s: %s from another thread ends the wait", backend,
             terminate ? "rf_proc_terminate" : "rf_proc_kill");
    bool soon = time(NULL) - t0 < 15;
    if (!ok(rc == 0 && soon && (terminate || st.exit_code == 128 + SIGKILL), desc))
        printf("# rc %d signal %d exited %d exit_code %d soon %d\n", rc, st.signal, st.exited, st.exit_code, soon);
    rf_status_clear(&st);
    rf_proc_free(proc);
    rf_plan_free(plan);
    rf_error_free(err);
}

/* The caller ignores SIGCHLD: the kernel then reaps init (the container
 * backend's supervisor: podman) itself, maybe before anyone asks for it.
 * The command's status still comes back (init reports it), never "No
 * child processes" nor a made-up 0. Five starts: the race goes either
 * way. */
static void ignored_sigchld(const char *backend)
{
    char json[160], desc[160];
    /* The timeout ends a sandbox whose init never sees its command end. */
    snprintf(json, sizeof json, "{\"backend\": \"%s\", \"accept_weaker\": true, \"limits\": {\"timeout\": 5}}",
             backend);
    char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 3", NULL };
    signal(SIGCHLD, SIG_IGN);
    int good = 0;
    for (int i = 0; i < 5; i++) {
        rf_error *err = NULL;
        rf_plan *plan = plan_for(json, argv, &err);
        rf_proc *proc = plan ? rf_spawn(plan, NULL, &err) : NULL;
        if (!proc && i == 0 && !strcmp(backend, "container")) { /* podman missing or unusable here */
            printf("ok %d - container: SIGCHLD ignored # SKIP %s\n", ++tap_n, err ? rf_error_message(err) : "?");
            rf_plan_free(plan);
            rf_error_free(err);
            signal(SIGCHLD, SIG_DFL);
            return;
        }
        rf_status st;
        memset(&st, 0, sizeof st);
        int rc = proc ? rf_proc_wait(proc, &st, &err) : -1;
        if (rc == 0 && st.exit_code == 3)
            good++;
        else
            printf("# rc %d exit_code %d: %s\n", rc, st.exit_code, err ? rf_error_message(err) : "");
        rf_status_clear(&st);
        rf_proc_free(proc);
        rf_plan_free(plan);
        rf_error_free(err);
    }
    signal(SIGCHLD, SIG_DFL);
    snprintf(desc, sizeof desc, "%s: with SIGCHLD ignored, each of 5 commands' exit status comes back (%d)", backend,
             good);
    ok(good == 5, desc);
}

int main(void)
{
    snprintf(ws, sizeof ws, "/tmp/rf-procrace.XXXXXX");
    if (!mkdtemp(ws))
        return ok(0, "scratch directory"), done_testing();
    chmod(ws, 0777); /* a root caller's landlock command runs as 65534 */
    snprintf(home, sizeof home, "%s/home", ws);
    ctx = (rf_context){ .cwd = ws, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp", .rf_home = home };
    race("native", false);
    race("native", true);
    race("none", false);
    race("none", true);
    ignored_sigchld("native");
    ignored_sigchld("none");
    ignored_sigchld("container");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ws);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", ws);
    return done_testing();
}
