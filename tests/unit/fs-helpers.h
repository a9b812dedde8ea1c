/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the file tool tests: a scratch tree with a workspace and an
 * "outside" directory holding a secret, and small file helpers that use
 * plain libc (never the code under test) to set up and check. */
#pragma once
#include "ringfence.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET "TOP-SECRET-OUTSIDE\n"

static char T_ROOT[256], T_WS[300], T_OUT[300];

static inline char *tpath(const char *base, const char *rel)
{
    static char buf[8][1024];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", base, rel);
    return b;
}

static inline void put(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(content, f) < 0 || fclose(f) != 0) {
        printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static inline void sym(const char *target, const char *link)
{
    if (symlink(target, link) < 0) {
        printf("Bail out! symlink %s: %s\n", link, strerror(errno));
        exit(1);
    }
}

/* The whole content of path, malloc'd, or NULL. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&buf, &cap, '\0', f);
    fclose(f);
    if (n < 0) {
        free(buf);
        return strdup("");
    }
    return buf;
}

static inline bool content_is(const char *path, const char *want)
{
    char *got = slurp(path);
    bool same = got && !strcmp(got, want);
    if (!same)
        printf("#   %s holds \"%s\", want \"%s\"\n", path, got ? got : "(missing)", want);
    free(got);
    return same;
}

static inline bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Number of entries in dir (without . and ..). */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Create T_ROOT/{ws,out} with out/secret. */
static inline void scratch_setup(void)
{
    snprintf(T_ROOT, sizeof T_ROOT, "/tmp/rf-test-fs.XXXXXX");
    if (!mkdtemp(T_ROOT)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        exit(1);
    }
    snprintf(T_WS, sizeof T_WS, "%s/ws", T_ROOT);
    snprintf(T_OUT, sizeof T_OUT, "%s/out", T_ROOT);
    mkdir(T_WS, 0755);
    mkdir(T_OUT, 0755);
    put(tpath(T_OUT, "secret"), SECRET);
}

static inline void scratch_teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", T_ROOT);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", T_ROOT);
}

static inline rf_fs *open_ws(rf_fs_options *o)
{
    rf_fs_options d;
    if (!o) {
        rf_fs_options_init(&d);
        o = &d;
    }
    o->workspace = T_WS;
    rf_error *err = NULL;
    rf_fs *fs = rf_fs_open(o, &err);
    if (!fs) {
        printf("Bail out! rf_fs_open: %s\n", rf_error_message(err));
        exit(1);
    }
    return fs;
}

/* Run a verb expecting failure; return the message (static copy). */
static inline const char *errmsg(rf_error *err)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s", err ? rf_error_message(err) : "(no error)");
    rf_error_free(err);
    return buf;
}

/* Become root of a new user namespace (when not root), then get a private
 * mount namespace. */
static inline int private_mounts(void)
{
    if (geteuid() != 0) {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWUSER) < 0)
            return -1;
        char map[64];
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        FILE *f = fopen("/proc/self/setgroups", "w");
        if (f)
            fputs("deny", f), fclose(f);
        f = fopen("/proc/self/uid_map", "w");
        if (!f || fputs(map, f) < 0 || fclose(f) != 0)
            return -1;
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        f = fopen("/proc/self/gid_map", "w");
        if (!f || fputs(map, f) < 0 || fclose(f) != 0)
            return -1;
    }
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -1;
    return 0;
}

