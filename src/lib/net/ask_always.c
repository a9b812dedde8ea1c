/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "always": the answer joins the user's own configuration, in a file
 * ringfence keeps for them next to their config.yaml (answers.yaml, read
 * right after it by policy/standard.c). Never the workspace's file: that
 * one is the agent's. The file is rewritten whole, through a temporary
 * file renamed over it, so a reader never sees half of it; each entry has
 * a comment saying when and for which command it was given. */
#include "net/ask.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ANSWERS_MAX_BYTES (256 * 1024)

static const char header[] =
    "# ringfence: your answers \"always\" to its questions about names (docs/network.md, \"Asking\").\n"
    "# Read with your own configuration, after config.yaml. ringfence rewrites this file when you\n"
    "# answer \"always\"; edit or delete entries as you like, but keep this layout.\n"
    "network:\n";

char *rf_ask_always_path(void)
{
    char *dir = rf_config_default_user_dir(NULL), *path = NULL;
    if (dir && asprintf(&path, "%s/answers.yaml", dir) < 0)
        path = NULL;
    free(dir);
    return path;
}

/* The entries (lines indented by 4) under each list of the old file. */
static int read_blocks(const char *path, char **allow, char **deny)
{
    *allow = *deny = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT && (*allow = strdup("")) && (*deny = strdup("")) ? 0 : -1;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return -1;
    }
    size_t al = 0, dl = 0;
    FILE *a = open_memstream(allow, &al), *d = open_memstream(deny, &dl), *cur = NULL;
    char line[1024];
    long total = 0;
    while (a && d && fgets(line, sizeof line, f) && (total += (long)strlen(line)) < ANSWERS_MAX_BYTES) {
        if (!strcmp(line, "  allow_domains:\n"))
            cur = a;
        else if (!strcmp(line, "  deny_domains:\n"))
            cur = d;
        else if (cur && !strncmp(line, "    ", 4) && strchr(line, '\n'))
            fputs(line, cur);
    }
    fclose(f);
    int rc = a && d && total < ANSWERS_MAX_BYTES ? 0 : -1;
    if (a)
        fclose(a);
    if (d)
        fclose(d);
    return rc;
}

/* The command for a comment: one line, printable, at most 200 bytes. */
static void comment_text(const char *command, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = command ? command : ""; *c && n + 1 < size && n < 200; c++)
        out[n++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
    out[n] = '\0';
}

static int write_file(const char *path, const char *allow, const char *deny)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
        return -1;
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return -1;
    }
    fputs(header, f);
    if (*allow)
        fprintf(f, "  allow_domains:\n%s", allow);
    if (*deny)
        fprintf(f, "  deny_domains:\n%s", deny);
    int rc = fflush(f) == 0 && fsync(fd) == 0 ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0)
        rc = rename(tmp, path);
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

int rf_ask_always_write(const char *host, uint16_t port, bool allow, const char *command)
{
    char *path = rf_ask_always_path();
    if (!path)
        return -1;
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) {
        *slash = '\0';
        char *parent = strrchr(dir, '/');
        if (parent && parent != dir) {
            *parent = '\0';
            mkdir(dir, 0700); /* ~/.config */
            *parent = '/';
        }
        mkdir(dir, 0700);
    }
    free(dir);
    char *old_allow = NULL, *old_deny = NULL, *entry = NULL, *joined = NULL;
    char when[32], cmd[256];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    comment_text(command, cmd, sizeof cmd);
    int rc = -1;
    if (read_blocks(path, &old_allow, &old_deny) == 0 &&
        asprintf(&entry, "    # %s %s, when asked for: %s\n    - \"%s:%u\"\n", allow ? "allowed" : "denied", when,
                 cmd, host, (unsigned)port) >= 0 &&
        asprintf(&joined, "%s%s", allow ? old_allow : old_deny, entry) >= 0)
        rc = write_file(path, allow ? joined : old_allow, allow ? old_deny : joined);
    free(old_allow);
    free(old_deny);
    free(entry);
    free(joined);
    free(path);
    return rc;
}
