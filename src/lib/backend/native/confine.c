/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The layers after the namespaces: Landlock rules that mirror the mounts
 * (so an over-broad mount still cannot be written), then the seccomp
 * filter. Everything that allocates happens in the caller before clone;
 * the child only applies. */
#include "backend/native/sandbox.h"
#include "landlock/landlock.h"
#include "observe/observe.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rf_confine_prepare(const rf_plan *plan, rf_native_ctx *ctx, rf_error **err)
{
    /* The child could only report "landlock: EOPNOTSUPP": say why here. */
    rf_landlock_request check = { .scope_ipc = true, .mode = plan->landlock };
    if (rf_landlock_check(&check, err) < 0)
        return -1;
    rf_landlock_rule *rules = calloc(plan->n_rules + 3, sizeof(*rules));
    if (!rules)
        return rf_error_set(err, ENOMEM, "landlock rules");
    for (size_t i = 0; i < plan->n_rules; i++)
        rules[i] = (rf_landlock_rule){ .path = plan->rules[i].path, .write = plan->rules[i].write };
    ctx->landlock_rules = rules;
    ctx->n_landlock_rules = plan->n_rules;

    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny, .allow = plan->seccomp_allow };
    void *bpf = NULL;
    size_t len = 0;
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/cache", plan->instance_root);
    /* A cache the sandbox could write (the workspace holds the instance
     * root) could be fed a weaker filter for the next start: not used. */
    bool writable = false;
    if (rf_plan_path_visible(plan, cache, &writable) && writable)
        snprintf(cache, sizeof cache, "%s", "");
    if (rf_seccomp_compile_cached(&req, cache[0] ? cache : NULL, &bpf, &len, err) < 0) {
        rf_confine_release(ctx);
        return -1;
    }
    ctx->seccomp_bpf = bpf;
    ctx->seccomp_len = len;
    if (plan->observe && rf_observe_compile_filter(&bpf, &len, err) < 0)
        return -1;
    if (plan->observe) {
        ctx->observe_bpf = bpf;
        ctx->observe_len = len;
    }
    return 0;
}

void rf_confine_release(rf_native_ctx *ctx)
{
    free((void *)ctx->landlock_rules);
    free((void *)ctx->seccomp_bpf);
    free((void *)ctx->observe_bpf);
    ctx->observe_bpf = NULL;
    ctx->landlock_rules = NULL;
    ctx->seccomp_bpf = NULL;
}

/* The files stdio is connected to (the caller's terminal, a file it
 * redirected to, /dev/null) lie outside the sandbox's tree, so Landlock
 * would refuse to reopen them: `echo x > /dev/stderr` and `tee /dev/stdout`
 * would fail. A rule on each, through /proc/self/fd, keeps them usable;
 * pipes and sockets need none. No allocation: the room was made before. */
static size_t add_stdio_rules(rf_landlock_rule *rules, size_t n)
{
    static const char *const paths[] = { "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2" };
    for (int fd = 0; fd < 3; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
            rules[n++] = (rf_landlock_rule){ .path = paths[fd], .write = true };
    }
    return n;
}

int rf_confine_apply(const rf_native_ctx *c, rf_setup_fail *f)
{
    rf_landlock_request req = {
        .rules = c->landlock_rules,
        .n_rules = add_stdio_rules(c->landlock_rules, c->n_landlock_rules),
        .scope_ipc = true, /* ABI 6+: no abstract sockets or signals out */
        .mode = c->plan->landlock,
    };
    int rc = rf_landlock_apply(&req, NULL, NULL);
    if (rc < 0) {
        errno = -rc;
        return rf_fail(f, "landlock", c->plan->landlock == RF_LANDLOCK_REQUIRED ? "landlock: required" : NULL);
    }
    rf_fault_child_point(c->fault_fd, c->sock, "landlock");
    /* The observer's filter before the policy's, which may forbid seccomp()
     * itself. An extra filter: the policy's answers still win. */
    if (c->observe_bpf && rf_observe_install(c->observe_bpf, c->observe_len, c->sock) < 0)
        return rf_fail(f, "seccomp (observer)", NULL);
    /* seccomp last: it forbids calls the steps before it need. */
    if (c->seccomp_bpf && (rc = rf_seccomp_apply_bpf(c->seccomp_bpf, c->seccomp_len, NULL)) < 0) {
        errno = -rc;
        return rf_fail(f, "seccomp", NULL);
    }
    return 0;
}
