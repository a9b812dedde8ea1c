/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The symlink-swap race: a child keeps exchanging a workspace directory
 * with a symlink to the outside (renameat2 RENAME_EXCHANGE, atomic) while
 * every verb runs through that path many times. Whatever the interleaving,
 * nothing outside may be read, written, created or listed: check-then-use
 * bugs show up here as a leaked secret or a changed outside file. */
#include "fs-helpers.h"

#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define ROUNDS 400

static pid_t start_swapper(const char *a, const char *b)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
                _exit(errno == EINVAL ? 2 : 1);
    }
    return pid;
}

typedef struct tally {
    int ok, denied, leaks;
} tally;

static void one_round(rf_fs *fs, tally *t, char *const abs_f)
{
    rf_error *err = NULL;
    char *out = NULL;
    size_t n = 0;
    const char *paths[] = { "d/f", abs_f };
    for (int i = 0; i < 2; i++) {
        if (rf_fs_read(fs, paths[i], 0, 0, &out, &n, &err) == 0) {
            t->ok++;
            if (strstr(out, "TOP-SECRET"))
                t->leaks++;
            free(out);
        } else {
            t->denied++;
        }
        rf_error_free(err);
        err = NULL;
    }
    int rc = rf_fs_write(fs, "d/f", "inside\n", 7, &err);
    rf_error_free(err), err = NULL;
    rc += rf_fs_append(fs, "d/log", "x", 1, &err);
    rf_error_free(err), err = NULL;
    rc += rf_fs_edit(fs, "d/f", "inside", "inside", &err);
    rf_error_free(err), err = NULL;
    rc += rf_fs_write(fs, "d/new/sub/file", "n", 1, &err);
    rf_error_free(err), err = NULL;
    char **ents = NULL;
    if (rf_fs_list(fs, "d", true, 0, &ents, &err) >= 0) {
        for (size_t i = 0; ents[i]; i++)
            if (strstr(ents[i], "secretname"))
                t->leaks++;
        rf_fs_entries_free(ents);
    }
    rf_error_free(err);
    if (rc == 0)
        t->ok++;
    else
        t->denied++;
}

int main(void)
{
    scratch_setup();
    put(tpath(T_OUT, "f"), SECRET);
    put(tpath(T_OUT, "secretname"), SECRET);
    mkdir(tpath(T_WS, "d"), 0755);
    put(tpath(T_WS, "d/f"), "inside\n");
    sym(T_OUT, tpath(T_WS, "swap"));
    struct stat before, after;
    stat(tpath(T_OUT, "f"), &before);
    int entries_before = count_entries(T_OUT);

    rf_fs *fs = open_ws(NULL);
    char abs_f[600];
    snprintf(abs_f, sizeof abs_f, "%s/d/f", T_WS);
    tally calm = { 0 };
    one_round(fs, &calm, abs_f);
    ok(calm.ok == 3 && calm.denied == 0, "race: without the swapper every verb works on this path");
    pid_t swapper = start_swapper(tpath(T_WS, "d"), tpath(T_WS, "swap"));
    ok(swapper > 0, "race: swapper started");
    tally t = { 0 };
    for (int i = 0; i < ROUNDS; i++)
        one_round(fs, &t, abs_f);
    int status = 0;
    bool still_running = waitpid(swapper, &status, WNOHANG) == 0;
    kill(swapper, SIGKILL);
    waitpid(swapper, &status, 0);
    ok(still_running, "race: the swapper ran throughout");
    printf("# %d operations succeeded, %d were refused while swapping\n", t.ok, t.denied);
    is_int(t.leaks, 0, "race: no read or list ever returned outside content");
    ok(content_is(tpath(T_OUT, "f"), SECRET), "race: the outside file is untouched");
    stat(tpath(T_OUT, "f"), &after);
    ok(before.st_ino == after.st_ino && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
           before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
       "race: the outside file kept its inode and mtime");
    is_int(count_entries(T_OUT), entries_before, "race: nothing was created outside");
    rf_fs_close(fs);
    scratch_teardown();
    return done_testing();
}
