/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* files.on_hidden: ask (issue 31): an open of a file the sandbox hides but
 * the host has is held (the observer answers it only after asking); on
 * "allow" ringfence opens the file itself, read-only, and hands the
 * command that descriptor as the result of its open (SECCOMP_IOCTL_NOTIF_
 * ADDFD with SECCOMP_ADDFD_FLAG_SEND). Nothing is mounted.
 *
 * What is opened is the host path the question named, resolved with no
 * symbolic link followed (openat2 RESOLVE_NO_SYMLINKS), never the path the
 * command's memory says now: a path swapped after the question gets at
 * most the file asked about. Writes, directories, devices and ringfence's
 * own state and the user's secrets are never offered. */
#include "observe/offer.h"
#include "config/config.h"
#include "util/path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Below the home: keys, tokens, credentials. */
static const char *const home_secrets[] = {
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
    ".config/gh", ".config/gcloud", ".config/hub", ".password-store", ".local/share/keyrings", ".vault-token",
};
static const char *const system_secrets[] = { "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/proc",
                                              "/sys", "/dev", "/run", "/root/.ssh", "/var/lib/sss" };

int rf_offer_init(rf_offer *f, const rf_plan *plan, int stop_fd)
{
    memset(f, 0, sizeof *f);
    f->ask = rf_net_ask_new(&plan->net, stop_fd, plan->ask_fn, plan->ask_data);
    if (!f->ask)
        return -1;
    rf_net_ask_set_command(f->ask, plan->argv);
    const char *home = getenv("HOME");
    char *p = NULL;
    for (size_t i = 0; i < sizeof system_secrets / sizeof system_secrets[0]; i++)
        rf_strv_push(&f->never, system_secrets[i]);
    for (size_t i = 0; home && home[0] == '/' && i < sizeof home_secrets / sizeof home_secrets[0]; i++)
        if (asprintf(&p, "%s/%s", home, home_secrets[i]) >= 0) {
            rf_strv_push_take(&f->never, p);
            p = NULL;
        }
    /* Every mask of the plan: deny_paths, the system's hidden places. */
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (rf_mount_is_mask(m))
            rf_strv_push(&f->never, m->source ? m->source : m->target);
    }
    /* ringfence's own: its instances and its configuration. */
    if (plan->instance_root)
        rf_strv_push(&f->never, plan->instance_root);
    char *conf = rf_config_default_user_dir(NULL);
    if (conf)
        rf_strv_push_take(&f->never, conf);
    rf_strv_push(&f->never, "/etc/ringfence");
    return f->never ? 0 : -1;
}

void rf_offer_clear(rf_offer *f)
{
    rf_net_ask_free(f->ask);
    rf_strv_free(f->never);
    memset(f, 0, sizeof *f);
}

static bool never_offered(const rf_offer *f, const char *host)
{
    for (size_t i = 0; f->never && f->never[i]; i++)
        if (rf_path_is_beneath(host, f->never[i]))
            return true;
    return false;
}

bool rf_offer_try(rf_offer *f, int listener, uint64_t id, pid_t pid, const char *host, bool cloexec)
{
    if (!f->ask || never_offered(f, host))
        return false;
    rf_ask_who who;
    bool known = rf_ask_who_of_pid(pid, &who) == 0;
    if (rf_net_ask_decide(f->ask, host, 0, "file", known ? &who : NULL) != NULL)
        return false; /* refused: the open goes on, and fails as it would have */
    struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
                            .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, host, &how, sizeof how);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    struct seccomp_notif_addfd add = { .id = id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (unsigned)fd,
                                       .newfd_flags = cloexec ? O_CLOEXEC : 0 };
    int rc = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    close(fd);
    return rc >= 0;
}
