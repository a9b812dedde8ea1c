/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writes never lose data: make a write fail half-way, for real, and check
 * the old file is intact and no temp file is left.
 *  - RLIMIT_FSIZE in a forked child: the kernel fails write() with EFBIG
 *    once the temp file reaches the limit (both temp file strategies, and
 *    append, which must truncate its partial tail away);
 *  - a full tmpfs mounted in a private mount namespace: ENOSPC. */
#include "fs-helpers.h"
#include "fs/fs-internal.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define OLD "old content, must survive\n"
#define BIG (64 * 1024)

enum { DO_WRITE, DO_APPEND, DO_EDIT };

/* In a child under RLIMIT_FSIZE = 4 KiB: run one verb that needs more.
 * Exit 0 when it failed with the kernel's EFBIG. */
static int child_fsize(int verb, bool named)
{
    signal(SIGXFSZ, SIG_IGN); /* get EFBIG instead of dying */
    struct rlimit rl = { 4096, 4096 };
    if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
        return 3;
    rf_fs *fs = open_ws(NULL);
    fs->no_tmpfile = named;
    char *big = malloc(BIG + 1);
    memset(big, 'B', BIG);
    big[BIG] = '\0';
    rf_error *err = NULL;
    int rc;
    if (verb == DO_WRITE)
        rc = rf_fs_write(fs, "dir/old.txt", big, BIG, &err);
    else if (verb == DO_APPEND)
        rc = rf_fs_append(fs, "dir/old.txt", big, BIG, &err);
    else
        rc = rf_fs_edit(fs, "dir/old.txt", "must", big, &err);
    bool clean = rc < 0 && rf_error_errno(err) == EFBIG;
    if (!clean)
        printf("#   child: rc %d, %s\n", rc, err ? rf_error_message(err) : "(no error)");
    rf_error_free(err);
    free(big);
    rf_fs_close(fs);
    return clean ? 0 : 1;
}

static int run_child(int (*fn)(int, bool), int verb, bool named)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(verb, named));
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void fsize_case(int verb, bool named, const char *desc)
{
    mkdir(tpath(T_WS, "dir"), 0755);
    put(tpath(T_WS, "dir/old.txt"), OLD);
    char d[200];
    snprintf(d, sizeof d, "EFBIG: %s fails", desc);
    is_int(run_child(child_fsize, verb, named), 0, d);
    snprintf(d, sizeof d, "EFBIG: %s left the old file intact", desc);
    ok(content_is(tpath(T_WS, "dir/old.txt"), OLD), d);
    snprintf(d, sizeof d, "EFBIG: %s left no temp file", desc);
    is_int(count_entries(tpath(T_WS, "dir")), 1, d);
}

/* In a child: a 64 KiB tmpfs as the workspace, an old file, then a write
 * of 256 KiB. Exit 0: failed with ENOSPC, old intact, no temp file;
 * 77: no mount namespace here. */
static int child_enospc(int verb, bool named)
{
    if (private_mounts() < 0 || mount("rf-test", T_WS, "tmpfs", 0, "size=64k") < 0)
        return 77;
    put(tpath(T_WS, "old.txt"), OLD);
    rf_fs *fs = open_ws(NULL);
    fs->no_tmpfile = named;
    size_t n = 256 * 1024;
    char *big = malloc(n);
    memset(big, 'B', n);
    rf_error *err = NULL;
    int rc = rf_fs_write(fs, "old.txt", big, n, &err);
    bool clean = rc < 0 && rf_error_errno(err) == ENOSPC;
    if (!clean)
        printf("#   child: rc %d, %s\n", rc, err ? rf_error_message(err) : "(no error)");
    rf_error_free(err);
    free(big);
    rf_fs_close(fs);
    if (!clean)
        return 1;
    if (!content_is(tpath(T_WS, "old.txt"), OLD))
        return 2;
    if (count_entries(T_WS) != 1)
        return 3;
    return 0;
}

static void enospc_case(bool named)
{
    const char *desc = named ? "ENOSPC (named temp file)" : "ENOSPC (O_TMPFILE)";
    int rc = run_child(child_enospc, DO_WRITE, named);
    char d[200];
    snprintf(d, sizeof d, "%s: the write fails, the old file is intact, no temp file left", desc);
    if (rc == 77)
        printf("ok %d - %s # SKIP no private mount namespace\n", ++tap_n, d);
    else
        is_int(rc, 0, d);
}

int main(void)
{
    scratch_setup();
    fsize_case(DO_WRITE, false, "write (O_TMPFILE)");
    fsize_case(DO_WRITE, true, "write (named temp file)");
    fsize_case(DO_EDIT, false, "edit (O_TMPFILE)");
    fsize_case(DO_EDIT, true, "edit (named temp file)");
    fsize_case(DO_APPEND, false, "append");
    enospc_case(false);
    enospc_case(true);

    /* And the success path of both strategies leaves exactly the file. */
    rf_fs *fs = open_ws(NULL);
    for (int named = 0; named < 2; named++) {
        fs->no_tmpfile = named;
        rf_error *err = NULL;
        mkdir(tpath(T_WS, "ok"), 0755);
        put(tpath(T_WS, "ok/f"), OLD);
        ok(rf_fs_write(fs, "ok/f", "new\n", 4, &err) == 0, named ? "named: write succeeds" : "O_TMPFILE: write succeeds");
        rf_error_free(err);
        ok(content_is(tpath(T_WS, "ok/f"), "new\n"), "replaced");
        is_int(count_entries(tpath(T_WS, "ok")), 1, "no temp file left");
    }
    rf_fs_close(fs);
    scratch_teardown();
    return done_testing();
}
