/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The compiled-filter cache: the same request reads back the same bytes; a
 * cached file that is writable by others, truncated to a non-BPF size, or
 * not ours is never used (the filter is compiled again instead). */
#include "tap.h"
#include "seccomp/seccomp.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *only_file(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char *found = NULL;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, "seccomp-", 8) && !strstr(de->d_name, ".tmp")) {
            free(found);
            if (asprintf(&found, "%s/%s", dir, de->d_name) < 0)
                found = NULL;
        }
    if (d)
        closedir(d);
    return found;
}

int main(void)
{
    char dir[] = "/tmp/rf-sccache.XXXXXX";
    ok(mkdtemp(dir) != NULL, "a cache directory");
    char getcwd_name[] = "getcwd";
    char *deny[] = { getcwd_name, NULL };
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT, .deny = deny };
    void *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;
    ok(rf_seccomp_compile_cached(&req, dir, &a, &la, NULL) == 0 && la > 0, "first start compiles");
    char *file = only_file(dir);
    ok(file != NULL, "and writes the cache file");
    ok(rf_seccomp_compile_cached(&req, dir, &b, &lb, NULL) == 0, "second start");
    ok(la == lb && memcmp(a, b, la) == 0, "reads back the same program");
    struct stat st;
    ok(file && stat(file, &st) == 0 && (st.st_mode & 077) == 0, "the cache file is private (0600)");

    /* A file others may write is not trusted: its bytes are not used. */
    int fd = open(file, O_WRONLY | O_TRUNC);
    ok(fd >= 0 && write(fd, "\x06\x00\x00\x00\x00\x00\xff\x7f", 8) == 8, "plant an allow-all filter");
    if (fd >= 0)
        close(fd);
    chmod(file, 0666);
    ok(rf_seccomp_compile_cached(&req, dir, &c, &lc, NULL) == 0, "start with a tampered cache");
    ok(lc == la && memcmp(a, c, la) == 0, "the writable-by-others file is ignored, the filter compiled again");
    free(c);
    c = NULL;

    /* A size that is no BPF program is ignored too. */
    unlink(file);
    fd = open(file, O_WRONLY | O_CREAT, 0600);
    ok(fd >= 0 && write(fd, "abc", 3) == 3, "plant a truncated file");
    if (fd >= 0)
        close(fd);
    ok(rf_seccomp_compile_cached(&req, dir, &c, &lc, NULL) == 0 && lc == la && memcmp(a, c, la) == 0,
       "a non-BPF size is ignored");

    /* A different request gets a different entry. */
    rf_seccomp_request strict = { .profile = RF_SECCOMP_STRICT };
    void *d = NULL;
    size_t ld = 0;
    ok(rf_seccomp_compile_cached(&strict, dir, &d, &ld, NULL) == 0 && (ld != la || memcmp(a, d, la) != 0),
       "another profile is another program");
    free(a);
    free(b);
    free(c);
    free(d);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)!system(cmd);
    free(file);
    return done_testing();
}
