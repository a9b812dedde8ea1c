/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cached /etc (backend/native/etc-cache.c): built from a plan's /etc
 * entries with the modes the sandbox needs whatever the umask; rebuilt
 * under a new name when a source changes, the old one left as it was; never
 * made from a file others may not read; never used when others may write
 * it, when the sandbox could see it, or when /etc itself is a mount. */
#include "tap.h"
#include "plan/build.h"
#include "backend/native/sandbox.h"
#include "util/error.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[64], src[128], home[128], cache[160];

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static char *slurp(const char *dir, const char *rel)
{
    static char buf[256];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

static mode_t mode_of(const char *dir, const char *rel)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return lstat(path, &st) == 0 ? st.st_mode : 0;
}

/* source: a symlink's text, else a name in src/. A copy records its
 * source's stat, as the planner does. */
static int add(rf_plan *p, rf_mount_type type, const char *source, const char *target)
{
    char s[256];
    snprintf(s, sizeof s, type == RF_MOUNT_SYMLINK ? "%.0s%s" : "%s/%s", src, source);
    int r = rf_plan_add_mount(p, type, type == RF_MOUNT_TMPFS ? NULL : s, target, false, "etc", NULL);
    if (r == 0 && type == RF_MOUNT_COPY && stat(s, &p->mounts[p->n_mounts - 1].copied) < 0)
        r = -1;
    return r;
}

static rf_plan *etc_plan(void)
{
    rf_plan *p = calloc(1, sizeof *p);
    p->instance_root = strdup(home);
    add(p, RF_MOUNT_COPY, "passwd", "/etc/passwd");
    add(p, RF_MOUNT_COPY, "hosts", "/etc/hosts");
    add(p, RF_MOUNT_COPY, "locale", "/etc/default/locale");
    add(p, RF_MOUNT_SYMLINK, "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime");
    add(p, RF_MOUNT_BIND, "ssl", "/etc/ssl");
    add(p, RF_MOUNT_TMPFS, "", "/etc/ssl/private");
    add(p, RF_MOUNT_BIND, "hosts", "/etc/bound");
    return p;
}

static int count_tmp(void)
{
    int n = 0;
    DIR *d = opendir(cache);
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += strstr(de->d_name, ".tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_build(char *dir, size_t len)
{
    rf_plan *p = etc_plan();
    umask(077); /* the caller's umask must not make the copies unreadable */
    ok(rf_etc_cache_prepare(p, dir, len) == 0, "a plan's /etc is cached");
    umask(022);
    ok(!strncmp(dir, cache, strlen(cache)) && strstr(dir, "/etc-"), "  ... in the instance root's cache/");
    is_str(slurp(dir, "passwd"), "root:x:0:0::/root:/bin/sh\n", "  ... a copy has its source's bytes");
    is_str(slurp(dir, "default/locale"), "LANG=C.UTF-8\n", "  ... in a subdirectory too");
    is_int((int)(mode_of(dir, "passwd") & 07777), 0644, "  ... a copy is 0644 whatever the umask");
    is_int((int)(mode_of(dir, "default") & 07777), 0755, "  ... a directory 0755");
    is_int((int)(mode_of(dir, ".") & 07777), 0755, "  ... the cache directory 0755");
    char link[256] = "";
    char path[4200];
    snprintf(path, sizeof path, "%s/localtime", dir);
    ssize_t n = readlink(path, link, sizeof link - 1);
    link[n > 0 ? n : 0] = '\0';
    is_str(link, "/usr/share/zoneinfo/Etc/UTC", "  ... a symlink entry is the same symlink");
    ok(S_ISDIR(mode_of(dir, "ssl")), "  ... a directory bind gets its mount point");
    ok(mode_of(dir, "ssl/private") == 0, "  ... but not what is mounted inside that bind");
    ok(S_ISREG(mode_of(dir, "bound")), "  ... a file bind gets an empty file");
    ok(rf_etc_cache_covers(p, 0) && rf_etc_cache_covers(p, 3), "covers: the copies and the symlink");
    ok(!rf_etc_cache_covers(p, 4) && !rf_etc_cache_covers(p, 5), "covers: not the mounts");
    is_int(count_tmp(), 0, "no build directory is left behind");

    struct stat a, b;
    char again[4096];
    ok(rf_etc_cache_prepare(p, again, sizeof again) == 0 && !strcmp(again, dir) && stat(dir, &a) == 0 &&
           stat(again, &b) == 0 && a.st_ino == b.st_ino,
       "the next start uses the same directory, not a new build");
    rf_plan_free(p);
}

static void test_invalidation(const char *old)
{
    char path[256], dir[4096];
    snprintf(path, sizeof path, "%s/hosts", src);
    write_file(path, "127.0.0.1 changed\n", 0644);
    rf_plan *p = etc_plan();
    ok(rf_etc_cache_prepare(p, dir, sizeof dir) == 0 && strcmp(dir, old) != 0,
       "a changed source makes a new directory");
    is_str(slurp(dir, "hosts"), "127.0.0.1 changed\n", "  ... with the new bytes");
    is_str(slurp(old, "hosts"), "127.0.0.1 localhost\n", "  ... the old one is as it was (a sandbox may use it)");

    rf_plan_free(p);
    write_file(path, "127.0.0.1 seen by the plan\n", 0644);
    p = etc_plan();
    write_file(path, "127.0.0.1 changed after the plan\n", 0644);
    ok(rf_etc_cache_prepare(p, dir, sizeof dir) < 0 && dir[0] == '\0',
       "a source changed since the plan saw it: no cache (its bytes are not the key's)");
    is_int(count_tmp(), 0, "  ... and the refused build is removed");
    rf_plan_free(p);

    chmod(path, 0600);
    p = etc_plan();
    ok(rf_etc_cache_prepare(p, dir, sizeof dir) < 0 && dir[0] == '\0',
       "a source others may not read: no cache (the child's copy refuses it)");
    chmod(path, 0644);
    rf_plan_free(p);
    p = etc_plan();

    ok(rf_etc_cache_prepare(p, dir, sizeof dir) == 0, "control: cached again");
    chmod(dir, 0777);
    char dir2[4096];
    ok(rf_etc_cache_prepare(p, dir2, sizeof dir2) < 0 && dir2[0] == '\0',
       "a cache directory others may write is never used");
    chmod(dir, 0755);
    rf_plan_free(p);

    p = etc_plan();
    rf_plan_add_mount(p, RF_MOUNT_BIND, home, home, false, "expose", NULL);
    ok(rf_etc_cache_prepare(p, dir, sizeof dir) < 0, "a cache the sandbox could see is never used");
    rf_plan_free(p);

    p = etc_plan();
    rf_plan_add_mount(p, RF_MOUNT_TMPFS, NULL, "/etc", false, "expose", NULL);
    ok(rf_etc_cache_prepare(p, dir, sizeof dir) < 0, "a mount at /etc itself: no cache");
    rf_plan_free(p);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/rf-etc-cache.XXXXXX");
    if (!mkdtemp(top))
        return ok(0, "scratch directory"), done_testing();
    snprintf(src, sizeof src, "%s/src", top);
    snprintf(home, sizeof home, "%s/home", top);
    snprintf(cache, sizeof cache, "%s/cache", home);
    mkdir(src, 0755);
    mkdir(home, 0700);
    mkdir(cache, 0700);
    char path[256];
    snprintf(path, sizeof path, "%s/ssl", src);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/passwd", src);
    write_file(path, "root:x:0:0::/root:/bin/sh\n", 0644);
    snprintf(path, sizeof path, "%s/hosts", src);
    write_file(path, "127.0.0.1 localhost\n", 0644);
    snprintf(path, sizeof path, "%s/locale", src);
    write_file(path, "LANG=C.UTF-8\n", 0644);

    char dir[4096];
    test_build(dir, sizeof dir);
    test_invalidation(dir);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", top);
    return done_testing();
}
