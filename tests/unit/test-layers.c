/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Defense in depth, one layer at a time: Landlock must hold on its own
 * when a mount is broader than the plan meant. Each case runs in a forked
 * child with a private mount namespace (its own user namespace when not
 * root), makes a deliberately over-broad bind mount, checks that the mount
 * alone lets the access through (the control), then applies the Landlock
 * rules the plan would have written and checks that they deny it. */
#include "tap.h"
#include "ns-helpers.h"
#include "landlock/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETUP_FAILED 200

static char top[64], wide[128], target[128], secret_dir[128], view[128];

static void skip(const char *desc, const char *why)
{
    printf("ok %d - %s # SKIP %s\n", ++tap_n, desc, why);
}

/* A private mount namespace we may mount in. */
static int private_mounts(void)
{
    if (geteuid() == 0)
        return unshare(CLONE_NEWNS) < 0 ? -1 : mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    if (ns_enter_userns(CLONE_NEWNS, geteuid(), getegid()) < 0)
        return -1;
    return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

static int attempt_write(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/planted", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    close(fd);
    unlink(path);
    return 0;
}

static int attempt_read(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/secret", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/* In a child: bind `src` at `dst` read-write (the over-broad mount), then
 * with `rules` applied (NULL: none, the control) run op(dst). Returns 0,
 * the errno op got, or SETUP_FAILED. */
static int in_child(const char *src, const char *dst, const rf_landlock_rule *rules, size_t n,
                    int (*op)(const char *))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (private_mounts() < 0 || mount(src, dst, NULL, MS_BIND, NULL) < 0)
            _exit(SETUP_FAILED);
        if (rules) {
            rf_landlock_request req = { .rules = rules, .n_rules = n, .mode = RF_LANDLOCK_REQUIRED };
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || rf_landlock_apply(&req, NULL, NULL) < 0)
                _exit(SETUP_FAILED);
        }
        _exit(op(dst));
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return SETUP_FAILED;
    return WEXITSTATUS(st);
}

static void write_case(void)
{
    /* The plan meant `target` read-only; the mount came out read-write. */
    const rf_landlock_rule rules[] = { { .path = target, .write = false } };
    int ctl = in_child(wide, target, NULL, 0, attempt_write);
    if (ctl == SETUP_FAILED) {
        skip("over-broad rw bind: Landlock denies the write", "cannot make a private mount namespace here");
        return;
    }
    is_int(ctl, 0, "control: the over-broad rw bind alone lets the write through");
    is_int(in_child(wide, target, rules, 1, attempt_write), EACCES,
           "over-broad rw bind: Landlock's read-only rule still denies the write");
}

static void read_case(void)
{
    /* A host directory with a secret ended up bound into a visible place
     * that has no rule at all: reading it must fail. */
    const rf_landlock_rule rules[] = { { .path = target, .write = true } };
    int ctl = in_child(secret_dir, view, NULL, 0, attempt_read);
    if (ctl == SETUP_FAILED) {
        skip("stray bind: Landlock denies the read", "cannot make a private mount namespace here");
        return;
    }
    is_int(ctl, 0, "control: the stray bind alone lets the secret be read");
    is_int(in_child(secret_dir, view, rules, 1, attempt_read), EACCES,
           "stray bind without a rule: Landlock denies the read");
}

int main(void)
{
    if (rf_landlock_abi() < 1) {
        skip("layers", "no Landlock in this kernel");
        return done_testing();
    }
    snprintf(top, sizeof top, "/tmp/rf-layers.XXXXXX");
    if (!mkdtemp(top)) {
        skip("layers", "cannot create a scratch directory");
        return done_testing();
    }
    snprintf(wide, sizeof wide, "%s/wide", top);
    snprintf(target, sizeof target, "%s/target", top);
    snprintf(secret_dir, sizeof secret_dir, "%s/secrets", top);
    snprintf(view, sizeof view, "%s/view", top);
    char secret[160];
    snprintf(secret, sizeof secret, "%s/secret", secret_dir);
    int fd = -1;
    if (mkdir(wide, 0755) < 0 || mkdir(target, 0755) < 0 || mkdir(secret_dir, 0755) < 0 ||
        mkdir(view, 0755) < 0 || (fd = open(secret, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return ok(0, "scratch setup"), done_testing();
    close(fd);
    write_case();
    read_case();
    unlink(secret);
    rmdir(secret_dir);
    rmdir(view);
    rmdir(target);
    rmdir(wide);
    rmdir(top);
    return done_testing();
}
