/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The floor of a sandboxed start, to compare ringfence with honestly: only
 * what no sandbox of this kind can skip. clone into new user, mount, pid,
 * network, IPC and UTS namespaces; a tmpfs root with /usr bound read-only
 * and the merged-/usr links; pivot_root; a fresh /proc; exec the command;
 * wait. No Landlock, no seccomp, no cgroup, no curated /etc, no checks.
 *
 *   floor PROGRAM [ARG...]      (exit status: the program's)
 *
 * Used by bench/startup.sh; never by tests. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
    perror(what);
    _exit(125);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0)
        die(path);
    close(fd);
}

static int sync_fd[2];

static int child(void *arg)
{
    char **argv = arg;
    char root[] = "/tmp";
    char go;
    close(sync_fd[1]);
    if (read(sync_fd[0], &go, 1) != 1) /* the id maps are written */
        die("sync");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount("tmpfs", root, "tmpfs", 0, "mode=0755") < 0)
        die("tmpfs");
    if (mkdir("/tmp/usr", 0755) < 0 || mount("/usr", "/tmp/usr", NULL, MS_BIND | MS_REC, NULL) < 0 ||
        mount(NULL, "/tmp/usr", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, NULL) < 0)
        die("usr");
    const char *links[][2] = { { "usr/bin", "/tmp/bin" }, { "usr/lib", "/tmp/lib" }, { "usr/lib64", "/tmp/lib64" },
                               { "usr/sbin", "/tmp/sbin" } };
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (symlink(links[i][0], links[i][1]) < 0)
            die("symlink");
    /* A new proc while the host's is still visible (the kernel wants one). */
    if (mkdir("/tmp/proc", 0555) < 0 || mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        die("proc");
    if (mkdir("/tmp/old", 0700) < 0 || chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", "old") < 0 || chdir("/") < 0 ||
        umount2("/old", MNT_DETACH) < 0 || rmdir("/old") < 0)
        die("pivot_root");
    pid_t cmd = fork();
    if (cmd == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(cmd, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: floor PROGRAM [ARG...]\n");
        return 125;
    }
    static char stack[256 * 1024];
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (pipe(sync_fd) < 0)
        die("pipe");
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
    pid_t pid = clone(child, stack + sizeof stack, flags, argv + 1);
    if (pid < 0)
        die("clone");
    char path[64], map[64];
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    write_file(path, map);
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    write_file(path, "deny");
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    write_file(path, map);
    if (write(sync_fd[1], "g", 1) != 1)
        die("sync");
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 125;
}
