/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-only fault injection (see fault.h); built only with -Dtest_hooks=true. */
#include "util/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULT_ENV "RF_TEST_FAULT_STEP"

/* Read once (MCP workers spawn from several threads), before any clone:
 * the children only compare against it. */
static const char *chosen_step = "";
static pthread_once_t step_once = PTHREAD_ONCE_INIT;

static void read_step(void)
{
    const char *v = getenv(FAULT_ENV);
    if (v && *v)
        chosen_step = v;
}

static const char *chosen(void)
{
    pthread_once(&step_once, read_step);
    return chosen_step;
}

void rf_fault_point(const char *step)
{
    if (!strcmp(chosen(), step))
        kill(getpid(), SIGKILL);
}

static void *watch(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (n == 1)
        kill(getpid(), SIGKILL);
    close(fd); /* EOF: every child that could write is gone */
    return NULL;
}

int rf_fault_arm(void)
{
    if (!*chosen())
        return -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pthread_t t;
    if (pthread_create(&t, NULL, watch, (void *)(intptr_t)p[0]) != 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    pthread_detach(t);
    return p[1];
}

void rf_fault_disarm_parent(int fd)
{
    if (fd >= 0)
        close(fd);
}

void rf_fault_child_point(int fd, int chan, const char *name)
{
    if (fd < 0 || strcmp(chosen_step, name) != 0) /* fd >= 0: the parent read it */
        return;
    if (write(fd, "k", 1) != 1)
        return;
    struct pollfd p = { .fd = chan, .events = 0 };
    for (int i = 0; i < 100; i++) {
        if (poll(&p, 1, 100) > 0 && (p.revents & (POLLHUP | POLLERR)))
            return;
    }
}
