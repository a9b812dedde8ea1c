/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Protected paths that do not exist yet (`.git/hooks` in a repository
 * without hooks, `.ringfence.json`, `.bashrc`...): a read-only mount needs a
 * name to cover, and without one a sandboxed command could create the path
 * and leave a hook or a policy on the host for the next run.
 *
 * So before the start an empty placeholder (a directory, or a file; the
 * configuration files get "{}") is created on the host, the sandbox binds
 * it read-only over itself like any protected path (so inside it can be
 * neither written nor removed nor replaced: a mount point is busy), and
 * after the end it is removed again if it is still ours (same inode, still
 * empty). Nothing stays behind: a journal in the instance root lists the
 * placeholders of each running start under an flock; when ringfence is
 * killed the lock goes with it, and the next start removes what the
 * journal lists. Only the native and bwrap backends do this (plan.c marks
 * them). */
#include "proc/placeholder.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/orphans.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PLACEHOLDERS 64

typedef struct placeholder {
    char path[4096];
    dev_t dev;
    ino_t ino;
    bool dir;
    off_t size;
} placeholder;

struct rf_placeholders {
    placeholder items[MAX_PLACEHOLDERS];
    size_t n;
    int journal_fd;
    char journal[4200];
};

static const char *content_for(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, ".ringfence.", 11) || !strcmp(base, ".mittorc") ? "{}\n" : "";
}

/* Remove one if it is still what we made: same inode, still empty. */
static void remove_one(const placeholder *p)
{
    struct stat st;
    if (lstat(p->path, &st) < 0 || st.st_dev != p->dev || st.st_ino != p->ino)
        return;
    if (p->dir)
        rmdir(p->path); /* fails, harmlessly, if something is in it */
    else if (S_ISREG(st.st_mode) && st.st_size == p->size)
        unlink(p->path);
}

/* Journal line: "D|F dev ino size path". */
static void journal_add(rf_placeholders *ph, const placeholder *p)
{
    dprintf(ph->journal_fd, "%c %llu %llu %lld %s\n", p->dir ? 'D' : 'F', (unsigned long long)p->dev,
            (unsigned long long)p->ino, (long long)p->size, p->path);
    fsync(ph->journal_fd);
}

static void replay(const char *journal)
{
    FILE *f = fopen(journal, "re");
    if (!f)
        return;
    placeholder p;
    char kind;
    unsigned long long dev, ino;
    long long size;
    while (fscanf(f, " %c %llu %llu %lld %4095[^\n]", &kind, &dev, &ino, &size, p.path) == 5) {
        p.dir = kind == 'D';
        p.dev = (dev_t)dev;
        p.ino = (ino_t)ino;
        p.size = (off_t)size;
        remove_one(&p);
    }
    fclose(f);
}

/* A journal whose start is gone (its lock is free): undo it. */
static void undo_journal(const char *path, void *ud)
{
    (void)ud;
    replay(path);
    unlink(path);
}

static int open_journal(rf_placeholders *ph, const char *root, rf_error **err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/placeholders", root);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "create %s", dir);
    snprintf(ph->journal, sizeof ph->journal, "%s/%ld-XXXXXX", dir, (long)getpid());
    ph->journal_fd = mkostemp(ph->journal, O_CLOEXEC);
    if (ph->journal_fd < 0 || flock(ph->journal_fd, LOCK_EX) < 0)
        return rf_error_set(err, errno, "create a journal in %s", dir);
    return 0;
}

static int make_one(rf_placeholders *ph, const rf_mount *m, rf_error **err)
{
    placeholder *p = &ph->items[ph->n];
    snprintf(p->path, sizeof p->path, "%s", m->target);
    p->dir = m->source_dir;
    const char *content = p->dir ? "" : content_for(p->path);
    int fd = -1;
    if (p->dir ? mkdir(p->path, 0755) : (fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                                    0644)) < 0) {
        if (errno == EEXIST)
            return 0; /* it appeared meanwhile: then it is protected as it is */
        return rf_error_set(err, errno, "protected path %s: create a read-only placeholder", p->path);
    }
    size_t len = strlen(content);
    if (fd >= 0 && len && write(fd, content, len) != (ssize_t)len) {
        int e = errno;
        close(fd);
        unlink(p->path);
        return rf_error_set(err, e, "protected path %s: write the placeholder", p->path);
    }
    if (fd >= 0)
        close(fd);
    struct stat st;
    if (lstat(p->path, &st) < 0)
        return rf_error_set(err, errno, "protected path %s", p->path);
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    p->size = st.st_size;
    journal_add(ph, p);
    ph->n++;
    return 0;
}

/* A protected path that needs one now: marked so by the plan, or present
 * when the plan was made but gone since (a killed start's placeholder that
 * undo_journal() just removed, say): either way, absent names are covered. */
static bool needs_one(const rf_mount *m)
{
    struct stat st;
    return m->placeholder ||
           (m->type == RF_MOUNT_RO_SELF && m->why && !strcmp(m->why, "protected") && lstat(m->target, &st) < 0 &&
            errno == ENOENT);
}

int rf_placeholders_make(const rf_plan *plan, rf_placeholders **out, rf_error **err)
{
    *out = NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/placeholders", plan->instance_root);
    rf_orphans_collect(dir, "", undo_journal, NULL); /* what killed starts left, before looking at the paths */
    if (plan->backend != RF_BACKEND_NATIVE && plan->backend != RF_BACKEND_BWRAP)
        return 0; /* the others cannot mount over them (their plan's cannot says so) */
    size_t wanted = 0;
    for (size_t i = 0; i < plan->n_mounts; i++)
        wanted += needs_one(&plan->mounts[i]);
    if (!wanted)
        return 0;
    rf_placeholders *ph = calloc(1, sizeof *ph);
    if (!ph)
        return rf_error_set(err, ENOMEM, "placeholders");
    ph->journal_fd = -1;
    if (open_journal(ph, plan->instance_root, err) < 0)
        goto fail;
    for (size_t i = 0; i < plan->n_mounts && ph->n < MAX_PLACEHOLDERS; i++)
        if (needs_one(&plan->mounts[i]) && make_one(ph, &plan->mounts[i], err) < 0)
            goto fail;
    *out = ph;
    return 0;
fail:
    rf_placeholders_remove(ph);
    return -1;
}

void rf_placeholders_remove(rf_placeholders *ph)
{
    if (!ph)
        return;
    for (size_t i = ph->n; i-- > 0;) /* children before parents */
        remove_one(&ph->items[i]);
    if (ph->journal_fd >= 0) {
        unlink(ph->journal);
        close(ph->journal_fd);
    }
    free(ph);
}
