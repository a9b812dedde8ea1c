/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/hierarchy.h"

#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* /proc files are small; the cap keeps a pathological mount table from
 * costing more than it is worth. */
#define MAX_PROC_FILE (16u << 20)

static const char *const ctrl_names[RF_CTRL_N] = { "memory", "pids", "cpu" };

const char *rf_hierarchy_ctrl_name(rf_ctrl c)
{
    return c < RF_CTRL_N ? ctrl_names[c] : "?";
}

/* Is tok one of the comma-separated words of list? */
static bool has_token(const char *list, size_t len, const char *tok)
{
    size_t tl = strlen(tok);
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && list[j] != ',')
            j++;
        if (j - i == tl && memcmp(list + i, tok, tl) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

typedef struct mount_line {
    char *root, *mountpoint, *fstype, *superopts;
} mount_line;

/* Split one mountinfo line in place. Returns false if it is malformed. */
static bool split_mount_line(char *line, mount_line *m)
{
    char *field[6] = { 0 };
    char *save = NULL;
    char *tok = strtok_r(line, " ", &save);
    for (int i = 0; i < 6 && tok; i++, tok = strtok_r(NULL, " ", &save))
        field[i] = tok;
    if (!field[5])
        return false;
    /* Optional fields end with a lone "-"; fstype, source, options follow. */
    while (tok && strcmp(tok, "-") != 0)
        tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return false;
    m->root = field[3];
    m->mountpoint = field[4];
    m->fstype = strtok_r(NULL, " ", &save);
    char *source = strtok_r(NULL, " ", &save);
    m->superopts = strtok_r(NULL, " ", &save);
    if (!m->fstype || !source || !m->superopts)
        return false;
    unescape_octal(m->root);
    unescape_octal(m->mountpoint);
    return true;
}

/* The directory of cgroup `path` through a mount of the hierarchy whose
 * root is `root`, or NULL if path is not visible through that mount. */
static char *dir_through_mount(const char *mountpoint, const char *root, const char *path)
{
    size_t rl = strlen(root);
    if (strcmp(root, "/") == 0)
        rl = 0;
    else if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
        return NULL;
    const char *rel = path + rl;
    if (strcmp(rel, "/") == 0)
        rel = "";
    const char *mp = strcmp(mountpoint, "/") == 0 ? "" : mountpoint;
    char *dir = NULL;
    if (asprintf(&dir, "%s%s", *mp || *rel ? mp : "/", rel) < 0)
        return NULL;
    return dir;
}

typedef struct proc_entry {
    int id;
    const char *path; /* into the parsed copy */
} proc_entry;

typedef struct proc_cgroups {
    proc_entry v2;
    proc_entry v1[RF_CTRL_N];
} proc_cgroups;

static void parse_proc_cgroup(char *text, proc_cgroups *pc)
{
    *pc = (proc_cgroups){ .v2 = { -1, NULL } };
    for (int c = 0; c < RF_CTRL_N; c++)
        pc->v1[c].id = -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        int id = atoi(line);
        size_t clen = (size_t)(c2 - c1 - 1);
        if (id == 0 && clen == 0) {
            pc->v2 = (proc_entry){ 0, c2 + 1 };
            continue;
        }
        for (int c = 0; c < RF_CTRL_N; c++)
            if (has_token(c1 + 1, clen, ctrl_names[c]))
                pc->v1[c] = (proc_entry){ id, c2 + 1 };
    }
}

static int fill_from_mount(const mount_line *m, const proc_cgroups *pc, rf_hierarchies *h)
{
    bool v2 = strcmp(m->fstype, "cgroup2") == 0;
    if (v2 && !h->v2.dir && pc->v2.id == 0) {
        h->v2.dir = dir_through_mount(m->mountpoint, m->root, pc->v2.path);
        if (h->v2.dir)
            h->v2.id = 0;
        return 0;
    }
    if (strcmp(m->fstype, "cgroup") != 0)
        return 0;
    size_t olen = strlen(m->superopts);
    for (int c = 0; c < RF_CTRL_N; c++) {
        if (h->v1[c].dir || pc->v1[c].id < 0 || !has_token(m->superopts, olen, ctrl_names[c]))
            continue;
        h->v1[c].dir = dir_through_mount(m->mountpoint, m->root, pc->v1[c].path);
        if (h->v1[c].dir)
            h->v1[c].id = pc->v1[c].id;
    }
    return 0;
}

static void hier_reset(rf_hierarchies *h)
{
    *h = (rf_hierarchies){ .v2 = { -1, NULL } };
    for (int c = 0; c < RF_CTRL_N; c++)
        h->v1[c].id = -1;
}

int rf_hierarchy_parse(const char *proc_cgroup, const char *mountinfo, rf_hierarchies *h,
                       rf_error **err)
{
    hier_reset(h);
    _cleanup_free_ char *cg = strdup(proc_cgroup);
    _cleanup_free_ char *mi = strdup(mountinfo);
    if (!cg || !mi)
        return rf_error_set(err, ENOMEM, "reading the cgroup hierarchies");
    proc_cgroups pc;
    parse_proc_cgroup(cg, &pc);
    char *save = NULL;
    for (char *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        mount_line m;
        if (split_mount_line(line, &m))
            fill_from_mount(&m, &pc, h);
    }
    return 0;
}

char *rf_hierarchy_read_text(const char *path)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 8192, len = 0;
    _cleanup_free_ char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            if (cap >= MAX_PROC_FILE)
                return NULL;
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                return NULL;
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return NULL;
        if (n == 0) {
            buf[len] = '\0';
            return steal_ptr(&buf);
        }
        len += (size_t)n;
    }
    return NULL;
}

int rf_hierarchy_discover(rf_hierarchies *h, rf_error **err)
{
    return rf_hierarchy_discover_pid(0, h, err);
}

int rf_hierarchy_discover_pid(pid_t pid, rf_hierarchies *h, rf_error **err)
{
    char cg_path[64];
    if (pid > 0)
        snprintf(cg_path, sizeof cg_path, "/proc/%d/cgroup", (int)pid);
    else
        snprintf(cg_path, sizeof cg_path, "/proc/self/cgroup");
    _cleanup_free_ char *cg = rf_hierarchy_read_text(cg_path);
    _cleanup_free_ char *mi = rf_hierarchy_read_text("/proc/self/mountinfo");
    if (!cg || !mi) {
        hier_reset(h);
        return rf_error_set(err, errno, "reading %s", cg ? "/proc/self/mountinfo" : cg_path);
    }
    if (rf_hierarchy_parse(cg, mi, h, err) < 0)
        return -1;
    if (h->v2.dir) {
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s/cgroup.controllers", h->v2.dir) < 0)
            return rf_error_set(err, ENOMEM, "reading the cgroup hierarchies");
        _cleanup_free_ char *ctl = rf_hierarchy_read_text(p);
        size_t len = ctl ? strcspn(ctl, "\n") : 0;
        for (size_t i = 0; i < len; i++)
            if (ctl[i] == ' ')
                ctl[i] = ',';
        for (int c = 0; ctl && c < RF_CTRL_N; c++)
            h->v2_has[c] = has_token(ctl, len, ctrl_names[c]);
    }
    return 0;
}

void rf_hierarchy_clear(rf_hierarchies *h)
{
    free(h->v2.dir);
    for (int c = 0; c < RF_CTRL_N; c++)
        free(h->v1[c].dir);
    hier_reset(h);
}
