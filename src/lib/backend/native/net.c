/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backend/native/sandbox.h"

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A fresh network namespace has only "lo", and it is down: programs that
 * talk to themselves over 127.0.0.1 (test servers, language servers) need
 * it up. Nothing else exists, so nothing leaves the sandbox. */
int rf_net_loopback_up(rf_setup_fail *f)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return rf_fail(f, "loopback socket", "lo");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    close(s);
    return rc < 0 ? rf_fail(f, "bring loopback up", "lo") : 0;
}
