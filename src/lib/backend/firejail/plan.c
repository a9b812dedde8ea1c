/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firejail backend's part of the plan: can firejail run here, for
 * whom, and what it cannot enforce. The mounts and namespaces are the
 * native backend's (plan.c builds them); argv.c translates them. */
#include "backend/firejail/firejail.h"
#include "backend/backend.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RF_FIREJAIL_USERS "/etc/firejail/firejail.users"

static const char *const firejail_cannot[] = {
    "paths outside the plan are blacklisted, not absent: firejail shows the host's tree, so their names stay "
    "listed (/home, /var, other entries of /etc) while opening them fails",
    "entries of a directory the caller cannot list (execute-only) cannot be named, so they are not blacklisted "
    "(the caller's own permissions still apply to them)",
    "no Landlock: firejail is set-uid root, so ringfence cannot put it under a Landlock domain, and this "
    "firejail applies none",
    "ringfence's seccomp filter is not applied: firejail installs its own (its default deny list, plus "
    "seccomp.deny, and namespace creation blocked), which allows more than ringfence's",
    "with network host, the host's abstract unix sockets stay reachable (no Landlock scoping)",
    "mounts keep the host's flags: / and the system are not nosuid (no_new_privs leaves set-uid bits inert)",
    "protected paths that do not exist get no read-only placeholder (firejail mounts only what exists)",
    "/etc/passwd and /etc/group are firejail's own files (its noroot user namespace), mounted writable "
    "though only root may write them",
    "/dev/shm is firejail's, and an unprivileged command cannot list it",
    "a terminal as stdin, stdout or stderr is refused while the kernel allows TIOCSTI "
    "(dev.tty.legacy_tiocsti = 1): firejail's filter does not stop a command typing into it",
    "pid 1 is firejail's, running as root: the command sees firejail's command line in /proc/1/cmdline",
    "SIGINT, SIGTERM and SIGHUP sent to ringfence go to firejail, which passes them to the sandbox's first "
    "process only, not to every process: a shell waiting for its child holds them until the child ends",
    "firejail's own setup errors exit 1, like a command that exits 1 (its message is on stderr); a command "
    "killed by a signal is reported as firejail's exit status 128+N, and so is every run ended by a "
    "signal ringfence forwards (SIGTERM to ringfence), whatever status the command then exits with",
};

const char *const *rf_firejail_cannot(size_t *n)
{
    *n = RF_ARRAY_SIZE(firejail_cannot);
    return firejail_cannot;
}

/* firejail.users, when present, lists the users allowed to run it. */
static bool listed_user(const char *name)
{
    _cleanup_fclose_ FILE *f = fopen(RF_FIREJAIL_USERS, "re");
    if (!f)
        return errno == ENOENT;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, " \t\r\n#")] = '\0';
        if (!strcmp(line, name))
            return true;
    }
    return false;
}

/* Does firejail let uid in? It refuses ids without an account, nobody,
 * and users missing from firejail.users when that file exists. */
static bool lets_in(uid_t uid, char *why, size_t size)
{
    struct passwd *pw = getpwuid(uid);
    if (!pw || !strcmp(pw->pw_name, "nobody")) {
        snprintf(why, size, "firejail refuses uid %u: it has no account of its own", (unsigned)uid);
        return false;
    }
    if (!listed_user(pw->pw_name)) {
        snprintf(why, size, "user %s is not in %s", pw->pw_name, RF_FIREJAIL_USERS);
        return false;
    }
    snprintf(why, size, "%s is set-uid root and lets %s in", RF_FIREJAIL_PATH, pw->pw_name);
    return true;
}

/* firejail must be set-uid root (it makes its namespaces as root, also
 * for a root caller, whose command runs as another user) and let this
 * user in. */
bool rf_firejail_usable(char *why, size_t size)
{
    struct stat st;
    if (stat(RF_FIREJAIL_PATH, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, size, "%s is not installed (%s)", RF_FIREJAIL_PATH, strerror(errno ? errno : ENOENT));
        return false;
    }
    if (access(RF_FIREJAIL_PATH, X_OK) < 0) {
        snprintf(why, size, "%s is not executable by this user (%s)", RF_FIREJAIL_PATH, strerror(errno));
        return false;
    }
    if (!(st.st_mode & S_ISUID) || st.st_uid != 0) {
        snprintf(why, size, "%s is not set-uid root, so it cannot make its namespaces", RF_FIREJAIL_PATH);
        return false;
    }
    if (getuid() == 0)
        return snprintf(why, size, "%s is set-uid root; a root caller's command runs as the workspace's "
                                   "owner", RF_FIREJAIL_PATH), true;
    return lets_in(getuid(), why, size);
}

/* firejail reads some characters in its path options (globs, commas in
 * whitelists), and env reads '=' in the command's path as a variable. */
static int check_paths(const rf_plan *plan, rf_error **err)
{
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const char *t = plan->mounts[i].target;
        if (strpbrk(t, "*?[],\n\"\\"))
            return rf_error_set(err, 0, "backend firejail: the path %s has a character firejail reads as a "
                                        "pattern", t),
                   rf_error_hint_set(err, "rename it, or use --backend native or bwrap");
    }
    if (strchr(plan->exec_path, '='))
        return rf_error_set(err, 0, "backend firejail: the command's path %s has '='", plan->exec_path),
               rf_error_hint_set(err, "use --backend native or bwrap");
    return 0;
}

/* Built here once, so what firejail would refuse (too many or too long
 * arguments, a host name its profile cannot hold) is refused at plan time,
 * with ringfence's words. */
static int check_invocation(const rf_plan *plan, rf_error **err)
{
    rf_firejail_invocation inv = { 0 };
    if (rf_firejail_build(plan, rf_firejail_list_host, NULL, &inv, err) < 0)
        return -1;
    size_t argc = rf_strv_len(inv.argv), longest = 0;
    for (size_t i = 0; i < argc; i++)
        if (strlen(inv.argv[i]) > longest)
            longest = strlen(inv.argv[i]);
    rf_firejail_invocation_free(&inv);
    if (argc > RF_FIREJAIL_MAX_ARGS)
        return rf_error_set(err, 0, "backend firejail: firejail takes at most %d arguments, and this command "
                                    "needs %zu (%zu of them ringfence's)", RF_FIREJAIL_MAX_ARGS, argc,
                            argc - (rf_strv_len(plan->argv) - 1)),
               rf_error_hint_set(err, "pass fewer arguments (xargs -n, a script), or use --backend native or bwrap");
    if (longest > RF_FIREJAIL_MAX_ARG_LEN)
        return rf_error_set(err, 0, "backend firejail: firejail takes arguments of at most %d bytes, and one "
                                    "of this command's has %zu", RF_FIREJAIL_MAX_ARG_LEN, longest),
               rf_error_hint_set(err, "put the text in a file in the workspace, or use --backend native or bwrap");
    return 0;
}

/* A root caller: uid 0 without capabilities would still own the host's
 * files (a set-uid-root file made in the workspace outlives the sandbox),
 * so, as with bwrap, the command runs as the workspace's owner, which
 * firejail must let in. */
static int root_caller(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    rf_backend_root_as_owner(plan, policy);
    plan->keep_bounding = true; /* firejail is set-uid: it needs them back */
    if (rf_backend_refuse_root_instance(plan, policy, err) < 0)
        return -1;
    char why[300];
    if (plan->uid_host == 0 || !lets_in(plan->uid_host, why, sizeof why))
        return rf_error_set(err, 0, "backend firejail: a root caller's command runs as the workspace's owner "
                                    "(or map_root_to), uid %u, and %s", (unsigned)plan->uid_host,
                            plan->uid_host == 0 ? "that would be host root" : why),
               rf_error_hint_set(err, "give the workspace to a user account (chown), or pass --map-root-to "
                                      "the uid of one; or use --backend native or bwrap");
    return rf_strv_pushf(&plan->cannot, "root caller: the command runs as uid %u (the workspace's owner, or "
                                        "map_root_to): files only root may read or write (a root-owned "
                                        "instance or expose) stay out of its reach",
                         (unsigned)plan->uid_host) < 0
               ? rf_error_set(err, ENOMEM, "plan")
               : 0;
}

int rf_plan_firejail_finish(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    char why[400];
    if (!rf_firejail_usable(why, sizeof why))
        return rf_error_set(err, 0, "backend firejail cannot run here: %s", why),
               rf_error_hint_set(err, "install firejail (apt-get install firejail) and run as a user it lets "
                                      "in, or use --backend native / bwrap ('ringfence doctor' shows which "
                                      "work)");
    if (plan->network == RF_NET_ALLOWLIST)
        return rf_error_set(err, 0, "network: allowlist: the firejail backend cannot connect its network "
                                    "namespace to ringfence's egress proxy"),
               rf_error_hint_set(err, "use the native backend (--backend native), or --network none / host");
    if (plan->landlock == RF_LANDLOCK_REQUIRED)
        return rf_error_set(err, 0, "backend firejail with landlock: required: firejail cannot apply Landlock"),
               rf_error_hint_set(err, "use --backend native, or drop --landlock required");
    for (size_t i = 0; i < plan->n_mounts; i++)
        plan->mounts[i].idmap = false;
    if ((plan->caller_is_root && root_caller(plan, policy, err) < 0) || check_paths(plan, err) < 0 ||
        check_invocation(plan, err) < 0)
        return -1;
    for (size_t i = 0; i < RF_ARRAY_SIZE(firejail_cannot); i++)
        if (rf_strv_push(&plan->cannot, firejail_cannot[i]) < 0)
            return rf_error_set(err, ENOMEM, "plan");
    return 0;
}
