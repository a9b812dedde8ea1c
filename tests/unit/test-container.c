/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* backend/container: the plan → podman/docker argv translation against
 * golden files (tests/golden/container-*.argv, one argument a line), the
 * refusal of a path --mount cannot carry, and the --rootfs directory.
 * The plan is built by hand, so the output depends on nothing on the host.
 * RF_UPDATE_GOLDEN=1 rewrites the golden files (review the diff). */
#include "tap.h"
#include "plan/build.h"
#include "backend/container/container.h"
#include "util/error.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void mount_(rf_plan *p, rf_mount_type t, const char *src, const char *dst, bool rw, const char *why,
                   unsigned mode)
{
    rf_error *err = NULL;
    if (rf_plan_add_mount(p, t, src, dst, rw, why, &err) < 0)
        abort();
    p->mounts[p->n_mounts - 1].mode = mode;
    p->mounts[p->n_mounts - 1].source_dir = t == RF_MOUNT_BIND && src && strcmp(src, "/etc/passwd") != 0;
}

static rf_plan *sample_plan(void)
{
    rf_plan *p = calloc(1, sizeof(*p));
    mount_(p, RF_MOUNT_BIND, "/usr", "/usr", false, "system", 0);
    mount_(p, RF_MOUNT_SYMLINK, "usr/bin", "/bin", false, "system", 0);
    mount_(p, RF_MOUNT_COPY, "/etc/passwd", "/etc/passwd", false, "etc", 0);
    mount_(p, RF_MOUNT_SYMLINK, "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime", false, "etc", 0);
    mount_(p, RF_MOUNT_BIND, "/etc/ssl", "/etc/ssl", false, "etc", 0);
    mount_(p, RF_MOUNT_TMPFS, NULL, "/etc/ssl/private", false, "masked", 0700);
    mount_(p, RF_MOUNT_PROC, NULL, "/proc", false, "proc", 0);
    mount_(p, RF_MOUNT_RO_SELF, NULL, "/proc/sys", false, "proc", 0);
    mount_(p, RF_MOUNT_TMPFS, NULL, "/dev", false, "dev", 0755);
    mount_(p, RF_MOUNT_BIND, "/dev/null", "/dev/null", true, "dev", 0);
    mount_(p, RF_MOUNT_DEVPTS, NULL, "/dev/pts", true, "dev", 0);
    mount_(p, RF_MOUNT_TMPFS, NULL, "/tmp", true, "tmp", 01777);
    mount_(p, RF_MOUNT_BIND, "/home/u/.ringfence/runtime-user-env", "/home/u/.ringfence/runtime-user-env", true,
           "instance", 0);
    mount_(p, RF_MOUNT_BIND, "/home/u/ws", "/home/u/ws", true, "workspace", 0);
    mount_(p, RF_MOUNT_RO_SELF, NULL, "/home/u/ws/.git/hooks", false, "protected", 0);
    mount_(p, RF_MOUNT_BIND, "/opt/data", "/data", false, "expose", 0);
    char *argv[] = { (char *)"make", (char *)"test", (char *)"--jobs=2", NULL };
    char *env[] = { (char *)"PATH=/usr/bin:/bin", (char *)"HOME=/home/u/.ringfence/runtime-user-env",
                    (char *)"LANG=C.UTF-8", NULL };
    p->argv = rf_strv_copy(argv);
    p->env = rf_strv_copy(env);
    p->exec_path = strdup("/usr/bin/make");
    p->cwd = strdup("/home/u/ws/src");
    p->uid_inside = p->uid_host = 1000;
    p->gid_inside = p->gid_host = 1000;
    p->network = RF_NET_NONE;
    p->net_log_fd = -1;
    return p;
}

static void compare(char **argv, const char *name, const char *desc)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/golden/%s", RF_SOURCE_DIR, name);
    size_t len = 0;
    for (size_t i = 0; argv && argv[i]; i++)
        len += strlen(argv[i]) + 1;
    char *got = calloc(1, len + 1);
    for (size_t i = 0; argv && argv[i]; i++)
        strcat(strcat(got, argv[i]), "\n");
    if (getenv("RF_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "w");
        ok(f && fputs(got, f) >= 0 && fclose(f) == 0, desc);
        free(got);
        return;
    }
    char want[16384] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(want, 1, sizeof want - 1, f) : 0;
    want[n] = 0;
    if (f)
        fclose(f);
    is_str(got, want, desc);
    free(got);
}

static void test_argv(void)
{
    rf_plan *p = sample_plan();
    rf_error *err = NULL;
    char **argv = NULL;

    /* An unprivileged caller: rootless podman, every limit, the seccomp profile. */
    p->limits = (rf_limits){ .memory_bytes = 256 << 20, .pids = 200, .cpu = 0.25 };
    rf_container_opts o = { .tool = RF_CT_PODMAN, .tool_path = "/usr/bin/podman", .rootless = true, .init = true,
                            .runtime = "runc", .name = "ringfence-1-0000abcd",
                            .rootfs = "/home/u/.ringfence/container/ringfence-1-0000abcd/rootfs",
                            .seccomp_path = "/home/u/.ringfence/container/ringfence-1-0000abcd/seccomp.json",
                            .nofile = 20000, .nproc = 200 };
    ok(rf_container_argv(p, &o, &argv, &err) == 0, "rootless podman: translated");
    compare(argv, "container-podman-rootless.argv", "rootless podman: the golden argv");
    rf_strv_free(argv);

    /* A root caller on rootful podman, no limits, seccomp off, host network. */
    p->limits = (rf_limits){ 0 };
    p->network = RF_NET_HOST;
    o.rootless = false;
    o.host_root = true;
    o.init = false;
    o.runtime = NULL;
    o.seccomp_path = NULL;
    o.nproc = 4096;
    ok(rf_container_argv(p, &o, &argv, &err) == 0, "rootful podman: translated");
    compare(argv, "container-podman-root.argv", "rootful podman, host network: the golden argv");
    rf_strv_free(argv);

    /* network: allowlist: podman joins the namespace ringfence made. */
    p->network = RF_NET_ALLOWLIST;
    o.netns_path = "/i/container/c/netns";
    ok(rf_container_argv(p, &o, &argv, &err) == 0 && rf_strv_contains(argv, "--network=ns:/i/container/c/netns") &&
           !rf_strv_contains(argv, "--network=none") && !rf_strv_contains(argv, "--network=host"),
       "allowlist: --network ns: the namespace ringfence made, never none or host");
    rf_strv_free(argv);
    o.netns_path = NULL;

    /* docker with an image: the image's userland, the plan's user mounts. */
    p->network = RF_NET_NONE;
    p->limits = (rf_limits){ .memory_bytes = 1 << 30 };
    o = (rf_container_opts){ .tool = RF_CT_DOCKER, .tool_path = "/usr/bin/docker", .init = true,
                             .name = "ringfence-2-0000beef", .image = "debian:bookworm-slim",
                             .seccomp_path = "/s.json", .nofile = 1024, .nproc = 4096 };
    ok(rf_container_argv(p, &o, &argv, &err) == 0, "docker with an image: translated");
    compare(argv, "container-docker-image.argv", "docker with an image: the golden argv");
    rf_strv_free(argv);

    /* A comma would split podman's --mount value: refused, not mangled. */
    mount_(p, RF_MOUNT_BIND, "/opt/a,b", "/opt/a,b", false, "expose", 0);
    argv = NULL;
    ok(rf_container_argv(p, &o, &argv, &err) < 0 && !argv, "a path with a comma is refused");
    like(err ? rf_error_message(err) : "", "comma", "the error says why");
    rf_error_free(err);
    rf_plan_free(p);
}

static void test_rootfs(void)
{
    char dir[] = "/tmp/rf-ct-XXXXXX";
    if (!mkdtemp(dir)) {
        ok(0, "mkdtemp");
        return;
    }
    char root[64], buf[512];
    snprintf(root, sizeof root, "%s/rootfs", dir);
    rf_plan *p = sample_plan();
    rf_error *err = NULL;
    ok(rf_container_rootfs_make(p, root, &err) == 0, "the --rootfs directory is made");
    struct stat st;
    snprintf(buf, sizeof buf, "%s/usr", root);
    ok(stat(buf, &st) == 0 && S_ISDIR(st.st_mode), "a directory where a directory is bound");
    snprintf(buf, sizeof buf, "%s/etc/passwd", root);
    ok(lstat(buf, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0, "an empty file where a file is bound");
    snprintf(buf, sizeof buf, "%s/bin", root);
    char link[64] = "";
    ok(readlink(buf, link, sizeof link - 1) > 0 && !strcmp(link, "usr/bin"), "the plan's symlinks");
    snprintf(buf, sizeof buf, "%s/home/u/ws/src", root);
    ok(stat(buf, &st) < 0, "nothing the plan does not mount");
    snprintf(buf, sizeof buf, "%s/dev/null", root);
    ok(lstat(buf, &st) < 0, "no /dev entries: the runtime's own");
    rf_container_dir_remove(dir);
    ok(lstat(dir, &st) < 0, "the directory is removed");
    rf_plan_free(p);
}

int main(void)
{
    test_argv();
    test_rootfs();
    return done_testing();
}
