/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cache of compiled filters: libseccomp's compile is a few hundred
 * microseconds of every start; reading the bytes back is a few. The key
 * hashes everything that shapes the program: the request, the rule table,
 * libseccomp's version, the architecture, and the identity (inode, size,
 * mtime) of the object file this code lives in, so a rebuilt ringfence
 * never reuses an older build's filter. The cache directory is the instance
 * root's cache/, which no sandbox can see; a file that is not ours, or is
 * writable by others, is ignored. */
#include "seccomp/seccomp.h"
#include "seccomp/seccomp-table.h"
#include "util/cleanup.h"
#include "util/hash.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void mix_strv(uint64_t *h, char *const *v)
{
    for (size_t i = 0; v && v[i]; i++)
        rf_hash_mix_str(h, v[i]);
    rf_hash_mix(h, "|", 1);
}

static uint64_t cache_key(const rf_seccomp_request *req)
{
    uint64_t h = RF_HASH_INIT;
    rf_hash_mix_str(&h, RF_VERSION);
    const struct scmp_version *v = seccomp_version();
    if (v)
        rf_hash_mix(&h, v, sizeof *v);
    uint32_t arch = seccomp_arch_native();
    rf_hash_mix(&h, &arch, sizeof arch);
    Dl_info info;
    struct stat st;
    if (dladdr((void *)cache_key, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0) {
        rf_hash_mix(&h, &st.st_ino, sizeof st.st_ino);
        rf_hash_mix(&h, &st.st_size, sizeof st.st_size);
        rf_hash_mix(&h, &st.st_mtim, sizeof st.st_mtim);
    }
    size_t n;
    const rf_seccomp_rule *rules = rf_seccomp_rules(&n);
    for (size_t i = 0; i < n; i++) {
        rf_hash_mix_str(&h, rules[i].name);
        int row[4] = { rules[i].fallback_nr, rules[i].errnum, (int)rules[i].args, rules[i].strict_only };
        rf_hash_mix(&h, row, sizeof row);
    }
    int flags[2] = { (int)req->profile, req->deny_inet };
    rf_hash_mix(&h, flags, sizeof flags);
    mix_strv(&h, req->deny);
    mix_strv(&h, req->allow);
    return h;
}

static int read_cached(const char *path, void **bpf, size_t *len)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
        st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)))
        return -1;
    char *buf = malloc((size_t)st.st_size);
    if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
        free(buf);
        return -1;
    }
    *bpf = buf;
    *len = (size_t)st.st_size;
    return 0;
}

/* Best effort: a temporary file renamed into place, so a reader never sees
 * half a filter. Failure only costs the next start a compile. */
static void write_cached(const char *path, const void *bpf, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    bool ok = write(fd, bpf, len) == (ssize_t)len && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, path) < 0)
        unlink(tmp);
}

int rf_seccomp_compile_cached(const rf_seccomp_request *req, const char *cache_dir, void **bpf, size_t *len,
                              rf_error **err)
{
    if (!cache_dir || (req->profile == RF_SECCOMP_OFF && !(req->deny && req->deny[0]) && !req->deny_inet))
        return rf_seccomp_compile(req, bpf, len, err);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/seccomp-%016llx.bpf", cache_dir,
                         (unsigned long long)cache_key(req)) >= sizeof path)
        return rf_seccomp_compile(req, bpf, len, err);
    if (read_cached(path, bpf, len) == 0)
        return 0;
    if (rf_seccomp_compile(req, bpf, len, err) < 0)
        return -1;
    if (*bpf && *len)
        write_cached(path, *bpf, *len);
    return 0;
}
