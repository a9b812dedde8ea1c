/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The container backend at plan time: which tool runs the container, can
 * it run here, and what it cannot give that the plan asks for.
 *
 * podman first (rootless for an unprivileged caller: it needs subordinate
 * ids in /etc/subuid and newuidmap); docker only when podman is absent and
 * its daemon answers `docker info`, and only with an image (docker has no
 * --rootfs). Never a silent fallback: a missing or unusable tool is an
 * error naming the tool, the reason and the fix.
 *
 * Checked on Debian 12 (podman 4.3.1, runc 1.1, crun 1.8, a hybrid cgroup
 * v1/v2 host): crun refuses hybrid hosts ("cgroups in hybrid mode not
 * supported"), so runc is named there; runc cannot make idmapped mounts,
 * so a root caller cannot be mapped to an unprivileged uid with the
 * workspace still writable (the native backend does both): it runs as uid
 * 0 without capabilities instead, which is weaker and refused unless
 * accept_weaker; `--ulimit nproc` at the caller's hard limit fails in
 * runc's user namespace ("error setting rlimit type 6"), 4096 works. */
#include "backend/container/container.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <unistd.h>

#define NPROC_MAX 4096UL

/* The first executable `name` on PATH (the caller's, as a shell would). */
static char *find_tool(const char *name)
{
    const char *path = getenv("PATH");
    _cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    char *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        char *p = NULL;
        struct stat st;
        if (*d != '/' || asprintf(&p, "%s/%s", d, name) < 0)
            continue;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* Does the docker daemon answer? `docker info`, output discarded, 5 s. */
static bool docker_answers(const char *docker)
{
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        alarm(5); /* a daemon that hangs counts as absent */
        execl(docker, docker, "info", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Rootless podman maps the caller's subordinate ids: without a range in
 * /etc/subuid (by name or uid) it cannot make the user namespace. */
static bool has_subids(const char *file, uid_t uid)
{
    struct passwd *pw = getpwuid(uid);
    char num[32];
    snprintf(num, sizeof num, "%u", (unsigned)uid);
    _cleanup_fclose_ FILE *f = fopen(file, "re");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = 0;
        if (!strcmp(line, num) || (pw && !strcmp(line, pw->pw_name)))
            return true;
    }
    return false;
}

static int find_podman_or_docker(struct rf_container_plan *c, bool rootless, rf_error **err)
{
    if ((c->tool_path = find_tool("podman"))) {
        c->opts.tool = RF_CT_PODMAN;
        if (!rootless)
            return 0;
        _cleanup_free_ char *nuid = find_tool("newuidmap");
        if (!nuid && access("/usr/bin/newuidmap", X_OK) < 0) {
            rf_error_set(err, 0, "backend container: rootless podman needs newuidmap, which is not installed");
            return rf_error_hint_set(err, "install the uidmap package (apt-get install uidmap), or use "
                                          "--backend native");
        }
        if (!has_subids("/etc/subuid", getuid()) || !has_subids("/etc/subgid", getuid())) {
            struct passwd *pw = getpwuid(getuid());
            rf_error_set(err, 0, "backend container: rootless podman needs subordinate uid and gid ranges for "
                                 "%s, and /etc/subuid or /etc/subgid has none", pw ? pw->pw_name : "this user");
            return rf_error_hint_set(err, "as root: usermod --add-subuids 100000-165535 --add-subgids "
                                          "100000-165535 %s; or use --backend native",
                                     pw ? pw->pw_name : "USER");
        }
        return 0;
    }
    char *docker = find_tool("docker");
    if (docker && docker_answers(docker)) {
        c->tool_path = docker;
        c->opts.tool = RF_CT_DOCKER;
        return 0;
    }
    free(docker);
    rf_error_set(err, 0, "backend container: podman is not installed%s",
                 docker ? ", and the docker daemon does not answer 'docker info'" : " (nor docker)");
    return rf_error_hint_set(err, "install podman (apt-get install podman uidmap slirp4netns), or start the "
                                  "docker daemon; or use --backend native");
}

static bool cgroup_v2_only(void)
{
    struct statfs sf;
    return statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static int make_name(struct rf_container_plan *c, const rf_plan *plan)
{
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned)getpid() * 2654435761u;
    if (asprintf(&c->name, "ringfence-%d-%08x", (int)getpid(), rnd) < 0 ||
        asprintf(&c->dir, "%s/container/%s", plan->instance_root, c->name) < 0)
        return -1;
    if (asprintf(&c->rootfs, "%s/rootfs", c->dir) < 0)
        return -1;
    if (plan->seccomp != RF_SECCOMP_OFF && asprintf(&c->seccomp_path, "%s/seccomp.json", c->dir) < 0)
        return -1;
    if (plan->network == RF_NET_ALLOWLIST && asprintf(&c->netns_path, "%s/netns", c->dir) < 0)
        return -1;
    return 0;
}

static void set_ulimits(struct rf_container_plan *c, const rf_plan *plan)
{
    struct rlimit nofile = { 0 }, nproc = { 0 };
    getrlimit(RLIMIT_NOFILE, &nofile);
    getrlimit(RLIMIT_NPROC, &nproc);
    c->opts.nofile = nofile.rlim_max == RLIM_INFINITY || nofile.rlim_max > 1048576 ? 1048576 : nofile.rlim_max;
    unsigned long np = plan->limits.pids && plan->limits.pids < NPROC_MAX ? plan->limits.pids : NPROC_MAX;
    c->opts.nproc = nproc.rlim_max != RLIM_INFINITY && nproc.rlim_max < np ? nproc.rlim_max : np;
}

/* What every container run lacks compared with native, and what this
 * plan asks for that the tool cannot give here (into *weak). */
static int list_cannot(rf_plan *plan, const struct rf_container_plan *c, char ***weak)
{
    static const char *const always[] = {
        "no Landlock rules: the mounts alone confine reads and writes",
        "the runtime's own /dev and /proc masks stand in for the plan's",
        "an exit status above 128 cannot be told from a death by that signal (the tool reports both as 128+N)",
        "CPU time and peak memory of the command are not measured (the status reports zeros)",
    };
    for (size_t i = 0; i < sizeof always / sizeof *always; i++)
        if (rf_strv_push(&plan->cannot, always[i]) < 0)
            return -1;
    if (!c->opts.init && rf_strv_push(&plan->cannot, "no init in the container (install catatonit): the command "
                                                     "is pid 1 and ignores signals it has no handler for") < 0)
        return -1;
    if (plan->landlock == RF_LANDLOCK_REQUIRED &&
        rf_strv_push(weak, "landlock: required, and a container has no Landlock equivalent") < 0)
        return -1;
    if (c->opts.host_root &&
        rf_strv_push(weak, "a root caller's command runs as host uid 0 without capabilities (the runtime "
                           "cannot map it to an unprivileged uid and keep the workspace writable)") < 0)
        return -1;
    if (c->opts.no_limits &&
        rf_strv_push(weak, "memory, pids and cpu limits: rootless podman cannot set them on a cgroup v1 host") < 0)
        return -1;
    for (size_t i = 0; *weak && (*weak)[i]; i++)
        if (rf_strv_push(&plan->cannot, (*weak)[i]) < 0)
            return -1;
    return 0;
}

static int refuse_or_warn(rf_plan *plan, const rf_policy *policy, char **weak, rf_error **err)
{
    if (!weak || !weak[0])
        return 0;
    size_t len = 0;
    for (size_t i = 0; weak[i]; i++)
        len += strlen(weak[i]) + 2;
    _cleanup_free_ char *all = calloc(1, len + 1);
    if (!all)
        return rf_error_set(err, ENOMEM, "plan");
    for (size_t i = 0; weak[i]; i++) {
        strcat(all, i ? "; " : "");
        strcat(all, weak[i]);
    }
    if (policy->accept_weaker)
        return rf_strv_pushf(&plan->warnings, "backend container, weaker sandbox accepted (accept_weaker): %s", all) < 0
                   ? rf_error_set(err, ENOMEM, "plan") : 0;
    rf_error_set(err, 0, "backend container cannot honour this policy: %s", all);
    return rf_error_hint_set(err, "accept the weaker sandbox by name with --accept-weaker (accept_weaker: true "
                                  "in the policy), or use --backend native");
}

/* network: allowlist: ringfence makes the network namespace, with the
 * proxy's listener in it, and podman joins it (--network ns:PATH). Only
 * root can hand podman a namespace: rootless podman makes a user namespace
 * of its own, which has no rights over one of ringfence's; docker's
 * daemon takes no namespace path. */
static int refuse_allowlist(const rf_plan *plan, const struct rf_container_plan *c, rf_error **err)
{
    if (plan->network != RF_NET_ALLOWLIST || (c->opts.tool == RF_CT_PODMAN && !c->opts.rootless))
        return 0;
    rf_error_set(err, 0, "network: allowlist: the container backend can join ringfence's proxy only with podman "
                         "run by root (%s cannot join a network namespace of ringfence's)",
                 c->opts.tool == RF_CT_DOCKER ? "docker" : "rootless podman");
    return rf_error_hint_set(err, "use --backend native or bwrap for an allowlist, or --network none / host");
}

static int fill(rf_plan *plan, const rf_policy *policy, struct rf_container_plan *c, char ***weak,
                rf_error **err)
{
    bool root = getuid() == 0;
    if (find_podman_or_docker(c, !root, err) < 0)
        return -1;
    c->opts.rootless = !root && c->opts.tool == RF_CT_PODMAN;
    if (refuse_allowlist(plan, c, err) < 0)
        return -1;
    c->opts.host_root = root;
    if (root) { /* see the top of this file */
        plan->uid_inside = plan->uid_host = 0;
        plan->gid_inside = plan->gid_host = 0;
    }
    /* podman's default init_path (containers.conf); docker brings its own */
    c->opts.init = c->opts.tool == RF_CT_DOCKER || access("/usr/libexec/podman/catatonit", X_OK) == 0;
    bool v2 = cgroup_v2_only();
    _cleanup_free_ char *runc = v2 ? NULL : find_tool("runc");
    if (c->opts.tool == RF_CT_PODMAN && runc && !(c->runtime = strdup("runc")))
        return rf_error_set(err, ENOMEM, "plan");
    bool limits = plan->limits.memory_bytes || plan->limits.pids || plan->limits.cpu > 0;
    c->opts.no_limits = c->opts.rootless && !v2 && limits;
    if (plan->container_image && !(c->image = strdup(plan->container_image)))
        return rf_error_set(err, ENOMEM, "plan");
    if (c->opts.tool == RF_CT_DOCKER && !c->image) {
        rf_error_set(err, 0, "backend container: docker cannot run the plan's own root (no --rootfs), and no "
                             "image is named");
        return rf_error_hint_set(err, "name a local image with --image IMAGE (container.image, Mitto's "
                                      "docker.image), or install podman");
    }
    if (make_name(c, plan) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    set_ulimits(c, plan);
    if (list_cannot(plan, c, weak) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return refuse_or_warn(plan, policy, *weak, err);
}

static void point_opts(struct rf_container_plan *c)
{
    c->opts.tool_path = c->tool_path;
    c->opts.runtime = c->runtime;
    c->opts.name = c->name;
    c->opts.rootfs = c->image ? NULL : c->rootfs;
    c->opts.image = c->image;
    c->opts.seccomp_path = c->seccomp_path;
    c->opts.netns_path = c->netns_path;
}

int rf_container_plan_finish(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    struct rf_container_plan *c = calloc(1, sizeof(*c));
    if (!c)
        return rf_error_set(err, ENOMEM, "plan");
    char **weak = NULL;
    int r = fill(plan, policy, c, &weak, err);
    rf_strv_free(weak);
    if (r == 0) {
        point_opts(c);
        r = rf_container_argv(plan, &c->opts, &c->argv, err);
    }
    if (r < 0) {
        rf_container_plan_free(c);
        return -1;
    }
    plan->container = c;
    plan->clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
                        (plan->network == RF_NET_HOST ? 0 : CLONE_NEWNET) | (c->opts.rootless ? CLONE_NEWUSER : 0);
    plan->hostname = plan->network == RF_NET_HOST ? NULL : "ringfence";
    plan->landlock = RF_LANDLOCK_OFF; /* nothing applies it: the plan must not claim it */
    char *reason = NULL;
    if (asprintf(&reason, "container: %s%s, %s%s%s", c->opts.tool == RF_CT_PODMAN ? "podman" : "docker",
                 c->opts.rootless ? " (rootless)" : "", c->image ? "the image " : "the plan's own root (--rootfs)",
                 c->image ? c->image : "", "") < 0)
        return rf_error_set(err, ENOMEM, "plan");
    if (plan->backend_reason) { /* where the choice came from: a flag, a Mitto runner type */
        char *both = NULL;
        int n = asprintf(&both, "%s (%s)", reason, plan->backend_reason);
        free(reason);
        if (n < 0)
            return rf_error_set(err, ENOMEM, "plan");
        reason = both;
        free(plan->backend_reason);
    }
    plan->backend_reason = reason;
    return 0;
}

void rf_container_plan_free(struct rf_container_plan *c)
{
    if (!c)
        return;
    free(c->tool_path);
    free(c->runtime);
    free(c->name);
    free(c->dir);
    free(c->rootfs);
    free(c->seccomp_path);
    free(c->netns_path);
    free(c->image);
    rf_strv_free(c->argv);
    free(c);
}

json_t *rf_container_plan_json(const rf_plan *plan)
{
    const struct rf_container_plan *c = plan->container;
    json_t *argv = json_array();
    for (size_t i = 0; c->argv && c->argv[i]; i++)
        json_array_append_new(argv, json_string(c->argv[i]));
    return json_pack("{s:s, s:b, s:s, s:s, s:o}", "tool", c->opts.tool == RF_CT_PODMAN ? "podman" : "docker",
                     "rootless", c->opts.rootless, "name", c->name, "dir", c->dir, "argv", argv);
}

/* `ringfence doctor`: the same checks as a plan (tool, subordinate ids,
 * cgroup version), without starting a container. */
int rf_container_doctor(bool *usable, char ***gives, char ***lacks)
{
    struct rf_container_plan c = { 0 };
    rf_error *err = NULL;
    bool root = getuid() == 0;
    int r = 0;
    *usable = find_podman_or_docker(&c, !root, &err) == 0;
    if (!*usable) {
        r |= rf_strv_pushf(lacks, "%s", rf_error_message(err));
        rf_error_free(err);
        return r;
    }
    bool podman = c.opts.tool == RF_CT_PODMAN;
    r |= rf_strv_pushf(gives, "%s %s%s", podman ? "podman" : "docker", c.tool_path, !root && podman ? ", rootless" : "");
    free(c.tool_path);
    r |= rf_strv_pushf(gives, "%s", podman ? "the plan's own root (--rootfs), read-only; or a local image (--image)"
                                   : "a local image (--image): docker has no --rootfs");
    r |= rf_strv_pushf(gives, "%s", "network none, host, or (podman as root) the allowlist through ringfence's proxy; "
                                    "capabilities dropped, no_new_privs, the seccomp filter as OCI JSON");
    r |= rf_strv_pushf(gives, "%s", "the container removed at exit, timeout and when ringfence is killed");
    r |= rf_strv_pushf(podman ? gives : lacks, "%s", podman ? "changes: overlay (podman's overlay volume)"
                                                            : "changes: overlay: docker has no overlay volumes");
    r |= rf_strv_pushf(lacks, "%s", "no Landlock rules; network allowlist refused for rootless podman and docker");
    if (root)
        r |= rf_strv_pushf(lacks, "%s", "a root caller's command is host uid 0 without capabilities (--accept-weaker)");
    if (!root && podman && !cgroup_v2_only())
        r |= rf_strv_pushf(lacks, "%s", "memory, pids and cpu limits (rootless podman on cgroup v1)");
    if (podman && access("/usr/libexec/podman/catatonit", X_OK) < 0)
        r |= rf_strv_pushf(lacks, "%s", "no init (install catatonit): the command is pid 1");
    return r;
}
