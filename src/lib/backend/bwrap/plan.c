/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bwrap backend's part of the plan: can bwrap run here, as whom, and
 * what it cannot enforce. The mounts and namespaces are the native
 * backend's (plan.c builds them for both); argv.c translates them. */
#include "backend/bwrap/bwrap.h"
#include "backend/backend.h"
#include "landlock/landlock.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const bwrap_cannot[] = {
    "no Landlock filesystem rules: a Landlock domain that handles files forbids the mounts bwrap makes, and "
    "bwrap applies none itself (the mount namespace alone confines the files; Landlock only scopes IPC)",
    "pid 1 is bwrap's init, not ringfence's: the command can read its /proc entries (its environment is the "
    "command's own) and ptrace it (same uid, no capabilities, the same seccomp filter)",
    "/proc/sys is not a read-only mount: bwrap without set-uid mounts /proc without covering it; the user "
    "namespace keeps host-wide sysctls unwritable",
    "/dev has bwrap's /dev/core link (to /proc/kcore, which stays unreadable)",
    "argv[0] is the executable's resolved path (bwrap 0.8 has no --argv0)",
};

bool rf_bwrap_scopes_ipc(const rf_plan *plan)
{
    struct stat st;
    return plan->landlock != RF_LANDLOCK_OFF && rf_landlock_abi() >= 6 && stat(RF_BWRAP_PATH, &st) == 0 &&
           !(st.st_mode & S_ISUID);
}

const char *const *rf_bwrap_cannot(size_t *n)
{
    *n = RF_ARRAY_SIZE(bwrap_cannot);
    return bwrap_cannot;
}

/* Does `bwrap` make a user, mount and pid namespace with a fresh /proc
 * here? Run only where ringfence's own probe failed. */
static bool bwrap_runs(void)
{
    char *const argv[] = { (char *)RF_BWRAP_PATH, (char *)"--unshare-user", (char *)"--unshare-pid",
                           (char *)"--ro-bind", (char *)"/", (char *)"/", (char *)"--proc", (char *)"/proc",
                           (char *)"--", (char *)"/bin/true", NULL };
    char *const envp[] = { NULL };
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return false;
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
    pid_t pid;
    int st = 0;
    bool ok = posix_spawn(&pid, RF_BWRAP_PATH, &fa, NULL, argv, envp) == 0 && waitpid(pid, &st, 0) == pid &&
              WIFEXITED(st) && WEXITSTATUS(st) == 0;
    posix_spawn_file_actions_destroy(&fa);
    return ok;
}

/* bwrap without the set-uid bit (Debian's) needs unprivileged user
 * namespaces, a mount and pid namespace and a fresh /proc: the native
 * backend's probe checks exactly that. A set-uid bwrap makes them itself. */
bool rf_bwrap_usable(char *why, size_t size)
{
    struct stat st;
    if (stat(RF_BWRAP_PATH, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, size, "%s is not installed (%s)", RF_BWRAP_PATH, strerror(errno ? errno : ENOENT));
        return false;
    }
    if (access(RF_BWRAP_PATH, X_OK) < 0) {
        snprintf(why, size, "%s is not executable by this user (%s)", RF_BWRAP_PATH, strerror(errno));
        return false;
    }
    if (st.st_mode & S_ISUID)
        return snprintf(why, size, "%s is set-uid root", RF_BWRAP_PATH), true;
    char ns[200];
    if (rf_backend_probe_native(ns, sizeof ns))
        return snprintf(why, size, "user namespaces work here"), true;
    /* ringfence cannot make them, but bwrap may be allowed to (Ubuntu's
     * AppArmor profile for bwrap lets it, and only it, make user
     * namespaces): ask bwrap itself. */
    if (bwrap_runs())
        return snprintf(why, size, "bwrap can make its namespaces here, though ringfence cannot (%s)", ns), true;
    snprintf(why, size, "%s is not set-uid, so it needs user namespaces, and they fail here: %s", RF_BWRAP_PATH,
             ns);
    return false;
}

char *rf_bwrap_version(void)
{
    if (access(RF_BWRAP_PATH, X_OK) < 0)
        return NULL;
    _cleanup_fclose_ FILE *f = popen(RF_BWRAP_PATH " --version 2>/dev/null", "re");
    char line[128] = "";
    if (!f || !fgets(line, sizeof line, f))
        line[0] = '\0';
    if (f) {
        pclose(f);
        f = NULL;
    }
    line[strcspn(line, "\n")] = '\0';
    return line[0] ? strdup(line) : NULL;
}

/* A root caller: bwrap cannot map uid 0 inside to an unprivileged uid
 * outside (that needs newuidmap), and host root inside a user namespace
 * could still write /proc/sys. So ringfence drops to the workspace's owner
 * (65534 when root owns it, or map_root_to) before bwrap runs, as the
 * landlock backend does. */
static int root_caller(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    rf_backend_root_as_owner(plan, policy);
    if (rf_backend_refuse_root_instance(plan, policy, err) < 0)
        return -1;
    if (plan->uid_host == 0)
        return rf_error_set(err, 0, "backend bwrap: map_root_to is 0, so bwrap would run as host root"),
               rf_error_hint_set(err, "set map_root_to (--map-root-to) to an unprivileged uid such as 65534");
    char *s = NULL;
    if (asprintf(&s, "root caller: bwrap has no id-mapped mounts, so the command runs as uid %u (the "
                     "workspace's owner, or map_root_to), and files and directories only root may read or "
                     "write (a root-owned workspace, instance or expose) stay out of its reach",
                 (unsigned)plan->uid_host) < 0 || rf_strv_push_take(&plan->cannot, s) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

/* changes: overlay needs bwrap's --overlay (bubblewrap 0.10), run by the
 * caller itself: a root caller's command runs as the workspace's owner,
 * who cannot reach root's session directory. */
static int check_overlay(const rf_plan *plan, rf_error **err)
{
    if (!plan->session)
        return 0;
    if (plan->caller_is_root)
        return rf_error_set(err, 0, "changes: overlay with backend bwrap: a root caller's command runs as the "
                                    "workspace's owner, which cannot reach root's session directory"),
               rf_error_hint_set(err, "use --backend native");
    _cleanup_free_ char *v = rf_bwrap_version();
    unsigned major = 0, minor = 0;
    if (!v || sscanf(v, "bubblewrap %u.%u", &major, &minor) != 2 || (major == 0 && minor < 10))
        return rf_error_set(err, 0, "changes: overlay with backend bwrap needs bubblewrap 0.10 or later "
                                    "(--overlay); this is %s", v ? v : "an unknown version"),
               rf_error_hint_set(err, "use --backend native, or a newer bubblewrap");
    return 0;
}

int rf_plan_bwrap_finish(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    char why[400];
    if (!rf_bwrap_usable(why, sizeof why))
        return rf_error_set(err, 0, "backend bwrap cannot run here: %s", why),
               rf_error_hint_set(err, "install bubblewrap (apt-get install bubblewrap) and allow unprivileged "
                                      "user namespaces, or use --backend native / landlock ('ringfence "
                                      "doctor' shows which work)");
    struct stat st;
    if (plan->network == RF_NET_ALLOWLIST && stat(RF_BWRAP_PATH, &st) == 0 && (st.st_mode & S_ISUID))
        return rf_error_set(err, 0, "network: allowlist: the network namespace that holds the proxy's port is "
                                    "made in a user namespace of ringfence's, where a set-uid %s is not "
                                    "set-uid", RF_BWRAP_PATH),
               rf_error_hint_set(err, "use the native backend (--backend native), or --network none / host");
    if (plan->landlock == RF_LANDLOCK_REQUIRED)
        return rf_error_set(err, 0, "backend bwrap with landlock: required: bwrap cannot apply Landlock"),
               rf_error_hint_set(err, "use --backend native, or drop --landlock required");
    if (check_overlay(plan, err) < 0 || (plan->caller_is_root && root_caller(plan, policy, err) < 0))
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(bwrap_cannot); i++)
        if (rf_strv_push(&plan->cannot, bwrap_cannot[i]) < 0)
            return rf_error_set(err, ENOMEM, "plan");
    return 0;
}
