/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The user's configuration directory (config.h): read by the standard
 * stack (policy/standard.c) and by the floors below the resolver that keep
 * a file there (net/ask_always.c, observe/offer.c), so it lives here. */
#include "config/config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *rf_config_default_user_dir(const char *home)
{
    char *d = NULL;
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/')
        return asprintf(&d, "%s/ringfence", xdg) < 0 ? NULL : d;
    if (!home || home[0] != '/')
        home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || home[0] != '/')
        return NULL;
    return asprintf(&d, "%s/.config/ringfence", home) < 0 ? NULL : d;
}
