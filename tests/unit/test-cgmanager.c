/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroupfs manager (limits/cgmanager.h), which divides a cgroup v2
 * hierarchy where no systemd manager does. Aimed at a test cgroup below our
 * own (never anywhere else; only our forked children are moved, and only
 * below it), so it runs on any host where our own v2 cgroup is writable.
 * Controllers appear only where our own cgroup hands them down (the root
 * cgroup of a pure v2 host); elsewhere those checks SKIP with the reason.
 * The whole path, with real limits, is the debian12-nosystemd host of
 * tests/hosts. */
#include "tap.h"
#include "limits/cgmanager.h"
#include "limits/cgroupfs.h"
#include "limits/hierarchy.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNPRIV_UID 1002 /* rftest; any uid without a cgroup of its own will do */

static char base[320];   /* our test cgroup: OWN/rf-cgm-test-PID */
static char own[256];
static const bool want_all[RF_CTRL_N] = { true, true, true };

static void skip(const char *why)
{
    printf("ok %d - # SKIP %s\n", ++tap_n, why);
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static bool listed(const char *dir, const char *file, const char *word)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    char *text = rf_hierarchy_read_text(p);
    bool found = false;
    for (char *save = NULL, *t = text ? strtok_r(text, " \n", &save) : NULL; t && !found;
         t = strtok_r(NULL, " \n", &save))
        found = strcmp(t, word) == 0;
    free(text);
    return found;
}

static int mk(const char *sub, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", base, sub);
    return mkdir(out, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int enter(const char *dir, pid_t pid)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char v[24];
    snprintf(v, sizeof v, "%d", (int)pid);
    int r = fd < 0 ? -errno : rf_cgroupfs_write(fd, "cgroup.procs", v);
    if (fd >= 0)
        close(fd);
    return r;
}

/* Our v2 cgroup path as /proc/self/cgroup says it. */
static char *my_v2_path(void)
{
    char *text = rf_hierarchy_read_text("/proc/self/cgroup");
    char *line = text ? strstr(text, "0::") : NULL;
    char *r = line ? strndup(line + 3, strcspn(line + 3, "\n")) : NULL;
    free(text);
    return r;
}

/* Run fn in a forked child whose answer (one line) comes back through a
 * pipe: the child must not print TAP lines of its own. */
typedef void (*child_fn)(int out_fd, void *arg);
static char *in_child(child_fn fn, void *arg)
{
    int p[2];
    if (pipe(p) < 0)
        return strdup("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        fn(p[1], arg);
        _exit(0);
    }
    close(p[1]);
    static char buf[2048];
    ssize_t n = pid < 0 ? -1 : read(p[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(p[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return strdup(buf);
}

static void say(int fd, const char *a, const char *b)
{
    dprintf(fd, "%s%s", a, b ? b : "");
}

typedef struct delegate_case {
    char dir[600];
    uid_t uid; /* 0: stay root */
} delegate_case;

/* Enter dir, become uid, ask for a delegated directory; answer
 * "DIR|NOTE|CGROUP" or "ERR|message". */
static void child_delegated(int fd, void *arg)
{
    delegate_case *dc = arg;
    int r = enter(dc->dir, getpid());
    if (r < 0) {
        say(fd, "ERR|entering the test cgroup: ", strerror(-r));
        return;
    }
    if (dc->uid && (setresgid(dc->uid, dc->uid, dc->uid) < 0 ||
                    setresuid(dc->uid, dc->uid, dc->uid) < 0)) {
        say(fd, "ERR|setresuid: ", strerror(errno));
        return;
    }
    rf_error *e = NULL;
    char *note = NULL;
    char *dir = rf_cgmanager_delegated(dc->dir, want_all, &note, &e);
    char *now = my_v2_path();
    if (dir)
        dprintf(fd, "%s|%s|%s", dir, note ? note : "", now ? now : "?");
    else
        dprintf(fd, "ERR|%s|%s", rf_error_message(e), now ? now : "?");
    free(dir);
    free(note);
    free(now);
    rf_error_free(e);
}

static void test_top(void)
{
    char *t1 = rf_cgmanager_top(base), *t2 = rf_cgmanager_top(own);
    is_str(t1, t2, "top: the test cgroup and our own cgroup share the hierarchy's top");
    char p[1024];
    snprintf(p, sizeof p, "%s/cgroup.type", t1 ? t1 : "/nonexistent");
    bool root = !exists(p);
    ok(t1 && exists(t1), "top: found by walking up to the root cgroup or the mount's top");
    printf("# top %s (%s)\n", t1 ? t1 : "(null)",
           root ? "the root cgroup" : "a cgroup namespace's root");
    free(t1);
    free(t2);
}

static void test_shared(void)
{
    rf_error *e = NULL;
    char *dir = rf_cgmanager_shared(base, want_all, &e);
    char want[600];
    snprintf(want, sizeof want, "%s/" RF_CGMANAGER_SHARED, base);
    is_str(dir, want, "shared: root's sandboxes go in TOP/ringfence");
    if (!dir)
        printf("#   %s\n", rf_error_message(e));
    rf_error_free(e);
    e = NULL;
    char *again = rf_cgmanager_shared(base, want_all, &e);
    is_str(again, want, "shared: a second run reuses TOP/ringfence");
    rf_error_free(e);
    free(again);
    int avail = 0;
    for (int c = 0; c < RF_CTRL_N && dir; c++) {
        const char *name = rf_hierarchy_ctrl_name(c);
        char desc[160];
        snprintf(desc, sizeof desc, "shared: %s is handed down to the sandboxes' parent", name);
        if (!listed(base, "cgroup.controllers", name)) {
            snprintf(desc, sizeof desc, "shared %s: our own cgroup does not hand it down here "
                                        "(a hybrid or a populated cgroup)", name);
            skip(desc);
            continue;
        }
        avail++;
        ok(listed(dir, "cgroup.controllers", name), desc);
    }
    (void)avail;
    /* A process in the intermediate, or in a top that is not the root
     * cgroup, is refused, named, before anything is written: nothing may
     * live there (enabling pids or cpu would turn it into a thread root). */
    if (!dir) {
        skip("shared: an intermediate that holds a process is refused: no intermediate");
    } else {
        char busy[600];
        mk("busy", busy, sizeof busy);
        pid_t sleeper = fork();
        if (sleeper == 0) {
            pause();
            _exit(0);
        }
        char inter[700];
        snprintf(inter, sizeof inter, "%s/" RF_CGMANAGER_SHARED, busy);
        mkdir(inter, 0755);
        enter(inter, sleeper);
        e = NULL;
        char *d = rf_cgmanager_shared(busy, want_all, &e);
        like(e ? rf_error_message(e) : NULL, "holds processes",
             "shared: a process in TOP/ringfence is refused, naming it");
        ok(!d, "...and no directory is returned");
        free(d);
        rf_error_free(e);
        e = NULL;
        enter(busy, sleeper); /* now in a non-root top */
        d = rf_cgmanager_shared(busy, (const bool[RF_CTRL_N]){ false, true, false }, &e);
        like(e ? rf_error_message(e) : NULL, "holds processes",
             "shared: a populated non-root top is refused, even for pids alone");
        char type[700];
        snprintf(type, sizeof type, "%s/cgroup.type", busy);
        char *t = rf_hierarchy_read_text(type);
        is_str(t, "domain\n", "...and it stays a domain cgroup (not a thread root)");
        free(t);
        free(d);
        rf_error_free(e);
        kill(sleeper, SIGKILL);
        waitpid(sleeper, NULL, 0);
    }
    free(dir);
}

static void test_alone(void)
{
    delegate_case dc = { .uid = 0 };
    mk("alone", dc.dir, sizeof dc.dir);
    char *got = in_child(child_delegated, &dc);
    char want[700];
    snprintf(want, sizeof want, "%s|", dc.dir);
    ok(strncmp(got, want, strlen(want)) == 0,
       "delegated, alone in it: the sandboxes go in our own cgroup");
    like(got, "moved ringfence (pid", "...and it says that ringfence moved itself");
    like(got, "/alone/ringfence-", "...into a leaf of its own (ringfence-PID-self)");
    printf("# %s\n", got);
    free(got);
}

static void test_crowd(void)
{
    delegate_case dc = { .uid = 0 };
    mk("crowd", dc.dir, sizeof dc.dir);
    pid_t sleeper = fork();
    if (sleeper == 0) {
        pause();
        _exit(0);
    }
    enter(dc.dir, sleeper);
    char *got = in_child(child_delegated, &dc);
    like(got, "ERR|", "delegated, with another process in it: refused");
    like(got, "holds other processes", "...naming the other processes");
    ok(strstr(got, "|/") && !strstr(got, "ringfence-"), "...and ringfence did not move");
    char pidstr[24];
    snprintf(pidstr, sizeof pidstr, "%d", (int)sleeper);
    ok(listed(dc.dir, "cgroup.procs", pidstr), "...nor was the other process moved");
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, 0);
    free(got);
}

static int chown_cgroup(const char *dir, uid_t uid)
{
    /* What delegation is (cgroup-v2.rst, "Delegation"): the directory and
     * its cgroup.procs, cgroup.threads and cgroup.subtree_control. */
    const char *files[] = { "", "/cgroup.procs", "/cgroup.threads", "/cgroup.subtree_control" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[800];
        snprintf(p, sizeof p, "%s%s", dir, files[i]);
        if (chown(p, uid, uid) < 0)
            return -1;
    }
    return 0;
}

static void test_user(void)
{
    delegate_case no = { .uid = UNPRIV_UID }, yes = { .uid = UNPRIV_UID };
    mk("notheirs", no.dir, sizeof no.dir);
    char *got = in_child(child_delegated, &no);
    like(got, "is not delegated to uid", "a user: a cgroup not delegated to her is refused");
    ok(!strstr(got, "ringfence-"), "...and nothing moved");
    free(got);
    mk("hers", yes.dir, sizeof yes.dir);
    if (chown_cgroup(yes.dir, UNPRIV_UID) < 0) {
        skip("control: cannot chown the test cgroup");
        return;
    }
    got = in_child(child_delegated, &yes);
    char want[700];
    snprintf(want, sizeof want, "%s|", yes.dir);
    ok(strncmp(got, want, strlen(want)) == 0,
       "control: the same, chowned to her (delegated): the sandboxes go in it");
    like(got, "/hers/ringfence-", "...with ringfence moved into a leaf of its own");
    printf("# %s\n", got);
    free(got);
}

static void test_siblings(void)
{
    delegate_case dc = { .uid = UNPRIV_UID };
    char parent[512];
    mk("sib", parent, sizeof parent);
    snprintf(dc.dir, sizeof dc.dir, "%s/leaf", parent);
    if (!listed(parent, "cgroup.controllers", "pids")) {
        skip("delegated leaf: siblings: our own cgroup does not hand pids down here");
        return;
    }
    mkdir(dc.dir, 0755);
    chown_cgroup(parent, UNPRIV_UID);
    chown_cgroup(dc.dir, UNPRIV_UID);
    char *got = in_child(child_delegated, &dc);
    char want[700];
    snprintf(want, sizeof want, "%s||", parent);
    ok(strncmp(got, want, strlen(want)) == 0,
       "delegated leaf below a delegated, empty cgroup: sandboxes are siblings, nothing "
       "moves");
    ok(listed(parent, "cgroup.subtree_control", "pids"), "...and the parent hands pids down");
    printf("# %s\n", got);
    free(got);
}

static void cleanup(void)
{
    if (!*base)
        return;
    int ofd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ofd >= 0) {
        rf_cgroupfs_rmdir(ofd, strrchr(base, '/') + 1, 2000);
        close(ofd);
    }
    if (exists(base))
        printf("# left behind: %s\n", base);
}

int main(void)
{
    rf_hierarchies h;
    if (rf_hierarchy_discover(&h, NULL) < 0 || !h.v2.dir) {
        skip("no cgroup v2 hierarchy mounted here");
        printf("1..%d\n", tap_n);
        return 0;
    }
    snprintf(own, sizeof own, "%s", h.v2.dir);
    rf_hierarchy_clear(&h);
    snprintf(base, sizeof base, "%s/rf-cgm-test-%d", own, (int)getpid());
    if (geteuid() != 0 || mkdir(base, 0755) < 0) {
        char why[700];
        snprintf(why, sizeof why, "cannot make a test cgroup below our own (%s): %s", own,
                 geteuid() != 0 ? "not root" : strerror(errno));
        *base = '\0';
        skip(why);
        printf("1..%d\n", tap_n);
        return 0;
    }
    atexit(cleanup);
    test_top();
    test_shared();
    test_alone();
    test_crowd();
    test_user();
    test_siblings();
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
