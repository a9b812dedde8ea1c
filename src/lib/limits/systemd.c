/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/systemd.h"
#include "limits/cgroupfs.h"
#include "limits/hierarchy.h"

#include "util/cleanup.h"
#include "util/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define CALL_TIMEOUT_US (5u * 1000 * 1000)
#define APPEAR_TIMEOUT_MS 5000
#define HOLDER_LEAF "holder" /* not ringfence-PID-*: the sweep never touches it */

/* The few sd-bus calls we make, resolved from libsystemd.so.0 once. */
typedef struct sdbus_api {
    __typeof__(&sd_bus_new) bus_new;
    __typeof__(&sd_bus_set_address) set_address;
    __typeof__(&sd_bus_start) start;
    __typeof__(&sd_bus_flush_close_unref) close_unref;
    __typeof__(&sd_bus_message_new_method_call) new_method_call;
    __typeof__(&sd_bus_message_append) append;
    __typeof__(&sd_bus_message_unref) message_unref;
    __typeof__(&sd_bus_call) call;
    __typeof__(&sd_bus_error_free) error_free;
} sdbus_api;

static struct {
    pthread_mutex_t lock;
    char *dir;        /* the scope's cgroup directory, once made */
    int holder_pipe;  /* write end: the holder lives while it is open */
} scope = { PTHREAD_MUTEX_INITIALIZER, NULL, -1 };

static int load_sdbus(sdbus_api *api, rf_error **err)
{
    /* RTLD_NODELETE: the api pointers stay valid; we never unload. */
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib)
        return rf_error_set(err, ENOENT, "cannot load libsystemd.so.0 (%s)", dlerror());
    void **slots[] = { (void **)&api->bus_new,         (void **)&api->set_address,
                       (void **)&api->start,           (void **)&api->close_unref,
                       (void **)&api->new_method_call, (void **)&api->append,
                       (void **)&api->message_unref,   (void **)&api->call,
                       (void **)&api->error_free };
    const char *names[] = { "sd_bus_new",          "sd_bus_set_address",
                            "sd_bus_start",        "sd_bus_flush_close_unref",
                            "sd_bus_message_new_method_call", "sd_bus_message_append",
                            "sd_bus_message_unref", "sd_bus_call",
                            "sd_bus_error_free" };
    for (size_t i = 0; i < RF_ARRAY_SIZE(slots); i++) {
        *slots[i] = dlsym(lib, names[i]);
        if (!*slots[i])
            return rf_error_set(err, ENOSYS, "libsystemd.so.0 lacks %s", names[i]);
    }
    return 0;
}

/* The manager's private socket: the one systemctl uses, with no D-Bus
 * daemon in between. The user manager's lives in the user's runtime
 * directory, which pam_systemd always makes at /run/user/UID. */
static int manager_socket(char *buf, size_t size, rf_error **err)
{
    uid_t uid = geteuid();
    if (uid == 0)
        snprintf(buf, size, "/run/systemd/private");
    else
        snprintf(buf, size, "/run/user/%u/systemd/private", (unsigned)uid);
    struct stat st;
    if (stat(buf, &st) < 0)
        return rf_error_set(err, errno, "no systemd %s manager to ask (%s)",
                            uid == 0 ? "system" : "user", buf);
    if (!S_ISSOCK(st.st_mode) || st.st_uid != uid)
        return rf_error_set(err, EPERM, "%s is not a socket of this user's systemd manager", buf);
    return 0;
}

/* The holder: a process that only exists to keep the scope alive. It
 * makes system calls only between fork and _exit, so it is safe in a
 * multithreaded caller, and it holds nothing of the caller's but the
 * pipe whose EOF tells it the caller is gone. */
static __attribute__((noreturn)) void holder_main(int read_fd)
{
    struct sigaction ign = { .sa_handler = SIG_IGN };
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &ign, NULL);
    setsid(); /* out of the caller's process group: Ctrl-C spares it */
    prctl(PR_SET_NAME, "rf-scope-hold", 0, 0, 0);
    if (read_fd != 0 && dup3(read_fd, 0, 0) < 0)
        _exit(1);
    close_range(1, ~0U, 0);
    for (;;) {
        char c;
        ssize_t n = read(0, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            _exit(0);
    }
}

static pid_t holder_start(int *ret_write_fd, rf_error **err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return rf_error_set(err, errno, "starting the scope's holder: pipe");
    pid_t pid = fork();
    if (pid == 0)
        holder_main(p[0]);
    int e = errno;
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return rf_error_set(err, e, "starting the scope's holder: fork");
    }
    *ret_write_fd = p[1];
    return pid;
}

/* StartTransientUnit(name, "fail", properties, no aux units). */
static int ask_for_scope(const sdbus_api *api, const char *socket_path, const char *name,
                         pid_t holder, rf_error **err)
{
    sd_bus *bus = NULL;
    sd_bus_message *m = NULL, *reply = NULL;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    char address[128], desc[96];
    snprintf(address, sizeof address, "unix:path=%s", socket_path);
    snprintf(desc, sizeof desc, "ringfence sandboxes of pid %d", (int)getpid());
    const char *step = "connect to";
    int r = api->bus_new(&bus);
    if (r >= 0)
        r = api->set_address(bus, address);
    if (r >= 0)
        r = api->start(bus);
    if (r >= 0) {
        step = "call StartTransientUnit on";
        r = api->new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                 "org.freedesktop.systemd1.Manager", "StartTransientUnit");
    }
    if (r >= 0)
        r = api->append(m, "ss", name, "fail");
    /* CollectMode: a scope that failed is not kept around for inspection. */
    if (r >= 0)
        r = api->append(m, "a(sv)", 4, "Description", "s", desc, "PIDs", "au", 1,
                        (uint32_t)holder, "Delegate", "b", 1, "CollectMode", "s",
                        "inactive-or-failed");
    if (r >= 0)
        r = api->append(m, "a(sa(sv))", 0);
    if (r >= 0)
        r = api->call(bus, m, CALL_TIMEOUT_US, &e, &reply);
    if (r < 0)
        rf_error_set(err, -r, "cannot %s systemd (%s)%s%s", step, socket_path,
                     e.message ? ": " : "", e.message ? e.message : "");
    api->error_free(&e);
    api->message_unref(reply);
    api->message_unref(m);
    if (bus)
        api->close_unref(bus);
    return r < 0 ? -1 : 0;
}

/* systemd moves the holder when it runs the job, just after answering:
 * wait until /proc says the holder is in the scope, then find the
 * scope's directory through our own mount table. */
static char *wait_for_scope(pid_t holder, const char *name, rf_error **err)
{
    char path[64], suffix[128];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)holder);
    snprintf(suffix, sizeof suffix, "/%s\n", name);
    struct timespec nap = { 0, 100 * 1000 };
    for (long waited_us = 0; waited_us < APPEAR_TIMEOUT_MS * 1000L;) {
        _cleanup_free_ char *text = rf_hierarchy_read_text(path);
        if (!text)
            return rf_error_set(err, errno, "the scope's holder (pid %d) is gone", (int)holder),
                   NULL;
        const char *v2 = strstr(text, "0::/");
        if (v2 && strstr(v2, suffix)) {
            rf_hierarchies h;
            if (rf_hierarchy_discover_pid(holder, &h, err) < 0)
                return NULL;
            char *dir = steal_ptr(&h.v2.dir);
            rf_hierarchy_clear(&h);
            if (!dir)
                rf_error_set(err, ENOENT, "%s is not visible through our cgroup2 mount", name);
            return dir;
        }
        nanosleep(&nap, NULL);
        waited_us += nap.tv_nsec / 1000;
        if (nap.tv_nsec < 20 * 1000 * 1000)
            nap.tv_nsec *= 2;
    }
    rf_error_set(err, ETIMEDOUT, "systemd did not put pid %d in %s within %d ms", (int)holder,
                 name, APPEAR_TIMEOUT_MS);
    return NULL;
}

/* Empty the scope's own cgroup (the holder to a leaf), then give its
 * children every controller it has: allowed now that it holds no
 * process, and ours to do since it is delegated. */
static int divide_scope(const char *dir, pid_t holder, rf_error **err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "opening %s", dir);
    if (mkdirat(fd, HOLDER_LEAF, 0755) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "creating %s/" HOLDER_LEAF, dir);
    _cleanup_close_ int leaf = openat(fd, HOLDER_LEAF, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)holder);
    int r = leaf < 0 ? -errno : rf_cgroupfs_write(leaf, "cgroup.procs", pid);
    if (r < 0)
        return rf_error_set(err, -r, "moving the holder into %s/" HOLDER_LEAF, dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
    _cleanup_free_ char *ctl = rf_hierarchy_read_text(path);
    char *save = NULL;
    for (char *t = ctl ? strtok_r(ctl, " \n", &save) : NULL; t; t = strtok_r(NULL, " \n", &save)) {
        char plus[64];
        snprintf(plus, sizeof plus, "+%s", t);
        r = rf_cgroupfs_write(fd, "cgroup.subtree_control", plus);
        if (r < 0)
            return rf_error_set(err, -r, "enabling %s in %s/cgroup.subtree_control", t, dir);
    }
    return 0;
}

static int make_scope(rf_error **err)
{
    static unsigned counter;
    char socket_path[64];
    sdbus_api api;
    if (manager_socket(socket_path, sizeof socket_path, err) < 0 || load_sdbus(&api, err) < 0)
        return -1;
    _cleanup_close_ int pipe_w = -1;
    pid_t holder = holder_start(&pipe_w, err);
    if (holder < 0)
        return -1;
    char name[96];
    snprintf(name, sizeof name, "ringfence-%d-%u.scope", (int)getpid(), counter++);
    _cleanup_free_ char *dir = NULL;
    if (ask_for_scope(&api, socket_path, name, holder, err) < 0 ||
        !(dir = wait_for_scope(holder, name, err)) || divide_scope(dir, holder, err) < 0) {
        /* The holder sees EOF and exits; systemd drops the empty scope. */
        close(take_fd(&pipe_w));
        while (waitpid(holder, NULL, 0) < 0 && errno == EINTR)
            ;
        return -1;
    }
    scope.dir = steal_ptr(&dir);
    scope.holder_pipe = take_fd(&pipe_w);
    return 0;
}

const char *rf_systemd_scope_made(void)
{
    pthread_mutex_lock(&scope.lock);
    const char *dir = scope.dir;
    pthread_mutex_unlock(&scope.lock);
    return dir;
}

int rf_systemd_scope_dir(const char **ret_dir, rf_error **err)
{
    pthread_mutex_lock(&scope.lock);
    int r = scope.dir ? 0 : make_scope(err);
    if (r == 0)
        *ret_dir = scope.dir;
    pthread_mutex_unlock(&scope.lock);
    return r;
}
