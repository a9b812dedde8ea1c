/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the `instance` subcommand needs besides create and open: which
 * sandboxes run in an instance (the holders of its lock, from /proc/locks),
 * removal (refused while they run, or after stopping them), the listing,
 * and making a policy use an instance's tree and identity. */
#include "instance/instance.h"
#include "instance/subid.h"
#include "model/policy.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The pids holding a flock on the file with this inode (each running
 * ringfence of the instance holds one). Returns the count; fills up to max. */
static size_t lock_holders(const char *lock_path, pid_t *pids, size_t max)
{
    struct stat st;
    if (stat(lock_path, &st) < 0)
        return 0;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        char kind[16], mode[16];
        int pid;
        unsigned maj, min;
        unsigned long ino;
        /* "1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF"; blocked waiters start with "->" */
        if (strstr(line, "->") ||
            sscanf(line, "%*d: %15s %*s %15s %d %x:%x:%lu", kind, mode, &pid, &maj, &min, &ino) != 6)
            continue;
        if (strcmp(kind, "FLOCK") || ino != (unsigned long)st.st_ino)
            continue;
        if (n < max)
            pids[n] = pid;
        n++;
    }
    fclose(f);
    return n;
}

/* Which identity model applies, and how to get distinct identities where
 * the caller has not got them (docs/instances.md). */
static json_t *identity_json(const rf_instance *in)
{
    const char *model = in->subordinate ? "subordinate" : in->own_identity ? "root-range" : "caller";
    const char *text = in->subordinate ? "its own, from your subordinate range (/etc/subuid, newuidmap)"
                       : in->own_identity ? "its own, from ringfence's range for root callers"
                                          : "yours, shared with your other instances (kept apart by not seeing "
                                            "each other)";
    char how[512] = "";
    rf_subid s;
    if (!in->own_identity && rf_subid_ranges(&s) == 0) {
        snprintf(how, sizeof how, "for an id of its own, create it with --own-identity (your range %lu-%lu "
                 "in /etc/subuid)", s.uid_start, s.uid_start + s.uid_count - 1);
    } else if (!in->own_identity) {
        struct passwd *pw = getpwuid(getuid());
        snprintf(how, sizeof how, "for ids of their own, have root add the line \"%s:%lu:65536\" to /etc/subuid "
                 "and /etc/subgid (a range no one else has), then create instances with --own-identity",
                 pw ? pw->pw_name : "USER", rf_subid_free_start());
    }
    return json_pack("{s:I, s:I, s:b, s:s, s:s, s:s?}", "uid", (json_int_t)in->uid, "gid", (json_int_t)in->gid, "own",
                     in->own_identity, "model", model, "model_text", text, "how", how[0] ? how : NULL);
}

static json_t *instance_json(rf_instance *in)
{
    _cleanup_free_ char *lock = rf_instance_path_of(in->root, in->name, ".lock");
    pid_t pids[64];
    size_t n = lock ? lock_holders(lock, pids, 64) : 0;
    json_t *running = json_array();
    size_t count = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        if (pids[i] != getpid() || in->lock_fd < 0) { /* not our own handle */
            json_array_append_new(running, json_integer(pids[i]));
            count++;
        }
    n = count;
    json_t *dirs = json_object();
    static const char *const subs[] = { "config", "data", "state", "cache", "runtime", "home", "tmp" };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", in->dir, subs[i]);
        json_object_set_new(dirs, subs[i], json_string(p));
    }
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:b, s:s?, s:I, s:o, s:o}", "name", in->name, "path", in->dir,
                          "directories", dirs, "identity", identity_json(in), "ephemeral", in->ephemeral, "profile",
                          in->profile, "created", (json_int_t)in->created, "running_pids", running, "running",
                          json_integer((json_int_t)n));
    if (o)
        json_object_set(o, "network", in->network ? in->network : json_null());
    return o;
}

RF_EXPORT char *rf_instance_to_json(const rf_instance *in)
{
    json_t *o = instance_json((rf_instance *)in);
    char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}

RF_EXPORT char *rf_instance_show_json(const char *root, const char *name, rf_error **err)
{
    rf_instance *in = rf_instance_new(root, name, err);
    char *s = NULL;
    if (in && rf_instance_meta_read(in, err) == 0)
        s = rf_instance_to_json(in);
    rf_instance_free(in);
    return s;
}

RF_EXPORT char *rf_instance_list_json(const char *root, rf_error **err)
{
    if (rf_instance_gc(root, err) < 0)
        return NULL;
    _cleanup_free_ char *dir = rf_instance_path_of(root, NULL, NULL);
    json_t *list = json_array();
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        char *one = rf_instance_show_json(root, name, NULL);
        json_t *o = one ? json_loads(one, 0, NULL) : NULL;
        free(one);
        if (o)
            json_array_append_new(list, o);
    }
    if (d)
        closedir(d);
    char *s = json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(list);
    return s;
}

/* Stop every ringfence holding the instance: SIGTERM (each stops its
 * tree), then SIGKILL after 5 s. */
static void stop_holders(const char *lock_path)
{
    pid_t pids[256];
    for (int round = 0; round < 2; round++) {
        size_t n = lock_holders(lock_path, pids, 256);
        for (size_t i = 0; i < n && i < 256; i++)
            if (pids[i] != getpid())
                kill(pids[i], round ? SIGKILL : SIGTERM);
        for (int t = 0; t < 50 && lock_holders(lock_path, pids, 256) > 0; t++)
            usleep(100000);
    }
}

RF_EXPORT int rf_instance_remove(const char *root, const char *name, bool force, rf_error **err)
{
    rf_instance *in = rf_instance_new(root, name, err);
    if (!in)
        return -1;
    _cleanup_free_ char *lock_path = rf_instance_path_of(root, name, ".lock");
    int reg = rf_instance_registry_lock(root, err);
    int rc = reg < 0 ? -1 : rf_instance_meta_read(in, err);
    int fd = rc < 0 ? -1 : open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (rc == 0 && fd < 0)
        rc = rf_error_set(err, errno, "instance %s: lock", name);
    if (rc == 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
        pid_t pids[8];
        size_t n = lock_holders(lock_path, pids, 8);
        if (!force) {
            rf_error_set(err, 0, "instance %s is in use by %zu running sandbox%s (ringfence pid %d%s)", name, n,
                         n == 1 ? "" : "es", n ? (int)pids[0] : 0, n > 1 ? ", ..." : "");
            rc = rf_error_hint_set(err, "wait for them to end, or pass --force to stop them first");
        } else {
            stop_holders(lock_path);
            if (flock(fd, LOCK_EX) < 0) /* they are gone now */
                rc = rf_error_set(err, errno, "instance %s: lock", name);
        }
    }
    if (rc == 0 && rf_instance_destroy(in) < 0)
        rc = rf_error_set(err, errno, "instance %s: remove %s", name, in->dir);
    if (fd >= 0)
        close(fd);
    if (reg >= 0)
        close(reg);
    rf_instance_free(in);
    return rc;
}

static uint64_t or_default(uint64_t v, uint64_t d)
{
    return v ? v : d;
}

/* The policy uses the instance: its tree is the command's home and
 * XDG/TMPDIR base, a root caller runs as the instance's own id, and the
 * instance's profile fills the limits the policy leaves unset. */
RF_EXPORT int rf_policy_use_instance(rf_policy *p, const rf_instance *in, rf_error **err)
{
    char *dir = strdup(in->dir);
    if (!dir)
        return rf_error_set(err, ENOMEM, "instance");
    free(p->instance_dir);
    p->instance_dir = dir;
    if (in->own_identity && !in->subordinate)
        p->map_root_to = in->uid;
    if (rf_instance_net_apply(p, in, err) < 0)
        return -1;
    p->instance_subid = in->subordinate;
    p->instance_uid = in->uid;
    p->instance_gid = in->gid;
    if (in->profile && !strcmp(in->profile, "chat")) {
        p->limits.memory_bytes = or_default(p->limits.memory_bytes, 256ull << 20);
        p->limits.pids = or_default(p->limits.pids, 200);
        if (!(p->limits.cpu > 0))
            p->limits.cpu = 0.25;
    }
    return 0;
}
