/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_orphans_collect (util/orphans.h): only entries whose flock is free are
 * undone, with the prefix and dot-file rules, and an entry held by a live
 * run is left alone. The backends' use of it (container run directories,
 * placeholder journals) is tested by killing ringfence in
 * tests/security/fault-injection.sh. */
#include "tap.h"
#include "util/orphans.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char seen[8][256];
static int n_seen;

static void record(const char *path, void *ud)
{
    (void)ud;
    if (n_seen < 8)
        snprintf(seen[n_seen++], sizeof seen[0], "%s", strrchr(path, '/') + 1);
}

static bool was_seen(const char *name)
{
    for (int i = 0; i < n_seen; i++)
        if (!strcmp(seen[i], name))
            return true;
    return false;
}

static int make(const char *name, bool as_dir)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (as_dir)
        return mkdir(p, 0700) == 0 ? open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    return open(p, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rf-test-orphans.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    int held = make("ringfence-held", true);
    ok(held >= 0 && flock(held, LOCK_EX) == 0, "a run holds ringfence-held");
    int free_dir = make("ringfence-free", true), other = make("other", false), dot = make(".hidden", false);
    ok(free_dir >= 0 && other >= 0 && dot >= 0, "entries made");
    close(free_dir); /* nobody holds these */
    close(other);
    close(dot);

    rf_orphans_collect(dir, "ringfence-", record, NULL);
    is_int(n_seen, 1, "prefix ringfence-: one entry undone");
    ok(was_seen("ringfence-free"), "the one nobody holds");
    ok(!was_seen("ringfence-held"), "not the one a live run holds");

    n_seen = 0;
    rf_orphans_collect(dir, "", record, NULL);
    is_int(n_seen, 2, "no prefix: two entries undone");
    ok(was_seen("other") && was_seen("ringfence-free"), "every unheld name");
    ok(!was_seen(".hidden"), "but no dot-file");

    close(held); /* the run ends: its lock goes with it */
    n_seen = 0;
    rf_orphans_collect(dir, "ringfence-", record, NULL);
    ok(was_seen("ringfence-held"), "once its run is gone, an entry is undone");

    n_seen = 0;
    rf_orphans_collect("/nonexistent/rf-orphans", "", record, NULL);
    is_int(n_seen, 0, "a missing directory is nothing to do");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
