/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the file tools' path resolver. A workspace is built once, full of
 * traps (symlinks out, to /proc/self/root, loops, a symlink that stays
 * inside), beside an "outside" directory with a marker file. Input: one
 * byte choosing the verb, then the path. Whatever the path, no verb may
 * return outside content, list outside names, or change the outside. */
#include "ringfence.h"

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER "zq9-outside-only"
#define CONTENT "OUTSIDE-CONTENT\n"

static char root[64], ws[128], out[128];
static rf_fs *fs;

static void must(int ok_, const char *what)
{
    if (!ok_) {
        fprintf(stderr, "fuzz-fs-path setup: %s\n", what);
        abort();
    }
}

static void put(const char *dir, const char *name, const char *content)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    must(f && fputs(content, f) >= 0 && fclose(f) == 0, p);
}

static void link_in_ws(const char *target, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", ws, name);
    must(symlink(target, p) == 0, p);
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

static void cleanup(void)
{
    rf_fs_close(fs);
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/rf-fuzz-fs.XXXXXX");
    must(mkdtemp(root) != NULL, "mkdtemp");
    snprintf(ws, sizeof ws, "%s/ws", root);
    snprintf(out, sizeof out, "%s/out", root);
    must(mkdir(ws, 0755) == 0 && mkdir(out, 0755) == 0, "mkdir");
    put(out, MARKER, CONTENT);
    put(ws, "a.txt", "a\n");
    char p[512], abs_marker[512];
    snprintf(p, sizeof p, "%s/sub", ws);
    must(mkdir(p, 0755) == 0, "mkdir sub");
    put(p, "b.txt", "b\n");
    snprintf(abs_marker, sizeof abs_marker, "%s/" MARKER, out);
    link_in_ws("sub", "in");
    link_in_ws(p, "absin");
    link_in_ws("../out", "out");
    link_in_ws(out, "absout");
    link_in_ws(abs_marker, "file-out");
    link_in_ws("/proc/self/root", "procroot");
    link_in_ws("/proc/self/cwd", "proccwd");
    link_in_ws("loop2", "loop1");
    link_in_ws("loop1", "loop2");
    link_in_ws("..", "up");
    rf_fs_options o;
    rf_fs_options_init(&o);
    o.workspace = ws;
    rf_error *err = NULL;
    fs = rf_fs_open(&o, &err);
    must(fs != NULL, err ? rf_error_message(err) : "rf_fs_open");
    atexit(cleanup);
}

static int outside_entries(void)
{
    DIR *d = opendir(out);
    must(d != NULL, "opendir out");
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n++;
    closedir(d);
    return n;
}

static void check_outside_intact(void)
{
    char p[512], buf[64] = { 0 };
    snprintf(p, sizeof p, "%s/" MARKER, out);
    FILE *f = fopen(p, "r");
    must(f != NULL, "the outside marker vanished");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    must(n == strlen(CONTENT) && !strcmp(buf, CONTENT), "the outside marker changed");
    must(outside_entries() == 3, "something was created outside");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fs)
        setup();
    if (size < 1 || size > 8192)
        return 0;
    char *path = strndup((const char *)data + 1, size - 1);
    if (!path)
        return 0;
    rf_error *err = NULL;
    char *text = NULL, **ents = NULL;
    size_t len = 0;
    switch (data[0] % 4) {
    case 0:
        if (rf_fs_read(fs, path, 0, 0, &text, &len, &err) == 0)
            must(!strstr(text, "OUTSIDE-CONTENT"), "read returned outside content");
        free(text);
        break;
    case 1:
        if (rf_fs_list(fs, path, true, 200, &ents, &err) >= 0) {
            for (size_t i = 0; ents[i]; i++)
                must(!strstr(ents[i], MARKER), "list showed an outside name");
            rf_fs_entries_free(ents);
        }
        break;
    case 2:
        /* Writing the marker's name inside would make the list check lie. */
        if (!strstr(path, MARKER))
            rf_fs_write(fs, path, "fuzz\n", 5, &err);
        break;
    default:
        rf_fs_edit(fs, path, "a", "a", &err);
        break;
    }
    rf_error_free(err);
    free(path);
    if (data[0] % 4 >= 2)
        check_outside_intact();
    return 0;
}
