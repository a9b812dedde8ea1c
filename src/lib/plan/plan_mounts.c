/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system part of the sandbox root: /usr and the merged-/usr links
 * read-only, a curated read-only /etc, a fresh /proc with its dangerous
 * corners read-only, a minimal /dev and a private /tmp. */
#include "plan/build.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What common tools need from /etc. Never shadow, gshadow, sudoers, ssh,
 * subuid/subgid or anything with secrets; /etc/ssl/private is masked. */
static const char *const etc_entries[] = {
    /* Small files, copied at start (see add_etc_file). */
    "passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf",
    "ld.so.cache", "ld.so.conf", "localtime", "timezone", "ca-certificates.conf", "protocols",
    "services", "rpc", "mime.types", "inputrc", "bash.bashrc", "profile", "locale.alias",
    "locale.conf", "locale.gen", "default/locale", "os-release", "lsb-release", "debian_version",
    "magic", "magic.mime", "gitconfig", "pip.conf", "wgetrc", "mailcap", "manpath.config", "nanorc",
    /* Directories, bound: each is a mount at start and at teardown, so only
     * those programs read at run time: certificates, the alternatives
     * symlinks behind /usr/bin/awk and friends, and Java's security files. */
    "ssl", "pki", "crypto-policies", "alternatives", "java-*",
};

/* Directories that must stay hidden even inside an exposed /etc entry. */
static const char *const masked_paths[] = { "/etc/ssl/private" };

/* /proc entries remounted read-only: writing them reaches the host kernel. */
static const char *const proc_ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus" };
static const char *const proc_masked[] = { "/proc/keys", "/proc/key-users" };

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

static const char *const usr_links[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };

int rf_plan_add_mount(rf_plan *plan, rf_mount_type type, const char *source, const char *target,
                      bool writable, const char *why, rf_error **err)
{
    rf_mount *m = realloc(plan->mounts, (plan->n_mounts + 1) * sizeof(*m));
    if (!m)
        return rf_error_set(err, ENOMEM, "plan");
    plan->mounts = m;
    m = &plan->mounts[plan->n_mounts];
    *m = (rf_mount){ .type = type, .writable = writable, .why = why, .mode = 0755 };
    m->source = source ? strdup(source) : NULL;
    m->target = strdup(target);
    if ((source && !m->source) || !m->target) {
        free(m->source);
        free(m->target);
        return rf_error_set(err, ENOMEM, "plan");
    }
    if (type == RF_MOUNT_BIND) {
        struct stat st;
        m->source_dir = stat(source, &st) == 0 && S_ISDIR(st.st_mode);
    }
    plan->n_mounts++;
    return 0;
}

static rf_mount *last_mount(rf_plan *plan)
{
    return &plan->mounts[plan->n_mounts - 1];
}

/* A host symlink that points into /usr is recreated as the same symlink (it
 * resolves inside the sandbox too); any other is bound by its target. A
 * small regular file that everyone may read is copied into the (then
 * read-only) root instead of bound: a bind costs a mount at start and at
 * teardown, a copy one write, and the sandbox only ever reads these. A file
 * the sandbox's uid might not be allowed to read is always bound, so the
 * kernel keeps checking its permissions. */
static int add_etc_file(rf_plan *plan, const char *source, const char *target, const struct stat *st,
                        rf_error **err)
{
    bool copy = rf_copy_allowed(st);
    if (rf_plan_add_mount(plan, copy ? RF_MOUNT_COPY : RF_MOUNT_BIND, source, target, false, "etc", err) < 0)
        return -1;
    if (copy)
        last_mount(plan)->copied = *st;
    return 0;
}

static int add_etc_entry(rf_plan *plan, const char *path, rf_error **err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0; /* optional: hosts differ */
    if (S_ISLNK(st.st_mode)) {
        char resolved[PATH_MAX];
        if (!realpath(path, resolved))
            return 0; /* dangling on the host: dangling inside too, skip */
        if (rf_path_is_beneath(resolved, "/usr")) {
            char text[PATH_MAX];
            ssize_t n = readlink(path, text, sizeof text - 1);
            if (n < 0)
                return 0;
            text[n] = '\0';
            return rf_plan_add_mount(plan, RF_MOUNT_SYMLINK, text, path, false, "etc", err);
        }
        if (stat(resolved, &st) < 0)
            return 0;
        return add_etc_file(plan, resolved, path, &st, err);
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return 0;
    return add_etc_file(plan, path, path, &st, err);
}

/* dir/name into out (PATH_MAX), by copies: snprintf's format machinery
 * was ~700 instructions for each of the ~50 /etc and /dev entries a start
 * looks at (callgrind). false when it does not fit. */
static bool path_under(char out[PATH_MAX], const char *dir, const char *name)
{
    size_t nd = strlen(dir), nn = strlen(name);
    if (nd + 1 + nn >= PATH_MAX)
        return false;
    memcpy(out, dir, nd);
    out[nd] = '/';
    memcpy(out + nd + 1, name, nn + 1);
    return true;
}

/* One pass over /etc for the wildcard entries (python3*, java-*, ...). */
static int add_etc_wildcards(rf_plan *plan, rf_error **err)
{
    /* The patterns first: /etc has some hundred entries, the list one. */
    const char *patterns[RF_ARRAY_SIZE(etc_entries)];
    size_t n = 0;
    for (size_t i = 0; i < RF_ARRAY_SIZE(etc_entries); i++)
        if (strpbrk(etc_entries[i], "*?["))
            patterns[n++] = etc_entries[i];
    _cleanup_closedir_ DIR *d = opendir("/etc");
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        for (size_t i = 0; i < n; i++) {
            if (fnmatch(patterns[i], de->d_name, 0) != 0)
                continue;
            char path[PATH_MAX];
            if (path_under(path, "/etc", de->d_name) && add_etc_entry(plan, path, err) < 0)
                return -1;
            break;
        }
    }
    return 0;
}

static int add_etc(rf_plan *plan, rf_error **err)
{
    for (size_t i = 0; i < RF_ARRAY_SIZE(etc_entries); i++) {
        char path[PATH_MAX];
        if (!strpbrk(etc_entries[i], "*?[") && path_under(path, "/etc", etc_entries[i]) &&
            add_etc_entry(plan, path, err) < 0)
            return -1;
    }
    if (add_etc_wildcards(plan, err) < 0)
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(masked_paths); i++) {
        struct stat st;
        if (stat(masked_paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (rf_plan_add_mount(plan, RF_MOUNT_TMPFS, NULL, masked_paths[i], false, "masked", err) < 0)
                return -1;
            last_mount(plan)->mode = 0700;
        }
    }
    return 0;
}

static int add_usr(rf_plan *plan, rf_error **err)
{
    if (rf_plan_add_mount(plan, RF_MOUNT_BIND, "/usr", "/usr", false, "system", err) < 0)
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(usr_links); i++) {
        struct stat st;
        if (lstat(usr_links[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            char text[PATH_MAX];
            ssize_t n = readlink(usr_links[i], text, sizeof text - 1);
            if (n < 0)
                continue;
            text[n] = '\0';
            if (rf_plan_add_mount(plan, RF_MOUNT_SYMLINK, text, usr_links[i], false, "system", err) < 0)
                return -1;
        } else if (S_ISDIR(st.st_mode)) {
            if (rf_plan_add_mount(plan, RF_MOUNT_BIND, usr_links[i], usr_links[i], false, "system", err) < 0)
                return -1;
        }
    }
    return 0;
}

static int add_proc(rf_plan *plan, rf_error **err)
{
    if (rf_plan_add_mount(plan, RF_MOUNT_PROC, NULL, "/proc", false, "proc", err) < 0)
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(proc_ro); i++)
        if (access(proc_ro[i], F_OK) == 0 &&
            rf_plan_add_mount(plan, RF_MOUNT_RO_SELF, NULL, proc_ro[i], false, "proc", err) < 0)
            return -1;
    /* The descriptions of the keys the command possesses (the caller's
     * session keyring when no fresh one is joined: plan.c) and every
     * user's key counts: masked, as the container runtimes do. */
    for (size_t i = 0; i < RF_ARRAY_SIZE(proc_masked); i++)
        if (access(proc_masked[i], F_OK) == 0 &&
            rf_plan_add_mount(plan, RF_MOUNT_MASK_FILE, NULL, proc_masked[i], false, "proc", err) < 0)
            return -1;
    return 0;
}

static int add_dev(rf_plan *plan, rf_error **err)
{
    static const struct { const char *name, *text; } links[] = {
        { "/dev/fd", "/proc/self/fd" },      { "/dev/stdin", "/proc/self/fd/0" },
        { "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
        { "/dev/ptmx", "pts/ptmx" },
    };
    if (rf_plan_add_mount(plan, RF_MOUNT_TMPFS, NULL, "/dev", false, "dev", err) < 0)
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(dev_nodes); i++) {
        char path[PATH_MAX];
        if (!path_under(path, "/dev", dev_nodes[i]) || access(path, F_OK) < 0)
            continue;
        if (rf_plan_add_mount(plan, RF_MOUNT_BIND, path, path, true, "dev", err) < 0)
            return -1;
        last_mount(plan)->devices = true;
    }
    if (rf_plan_add_mount(plan, RF_MOUNT_DEVPTS, NULL, "/dev/pts", true, "dev", err) < 0)
        return -1;
    if (rf_plan_add_mount(plan, RF_MOUNT_TMPFS, NULL, "/dev/shm", true, "dev", err) < 0)
        return -1;
    last_mount(plan)->mode = 01777;
    for (size_t i = 0; i < RF_ARRAY_SIZE(links); i++)
        if (rf_plan_add_mount(plan, RF_MOUNT_SYMLINK, links[i].text, links[i].name, false, "dev", err) < 0)
            return -1;
    return 0;
}

int rf_plan_add_system_mounts(rf_plan *plan, rf_error **err)
{
    if (add_usr(plan, err) < 0 || add_etc(plan, err) < 0 || add_proc(plan, err) < 0 ||
        add_dev(plan, err) < 0)
        return -1;
    if (rf_plan_add_mount(plan, RF_MOUNT_TMPFS, NULL, "/tmp", true, "tmp", err) < 0)
        return -1;
    last_mount(plan)->mode = 01777;
    return 0;
}
