/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pool's request (src/lib/pool/wire.c) with a pty (RFP2): streams,
 * window size and TERM survive the trip; a head that names no stream, a
 * stream beyond 2, or a TERM that is no terminal type's name is refused;
 * the descriptors land in the slots of the streams that are not the pty,
 * and any beyond those are closed. The fuzzer (fuzz/fuzz-pool-request.c)
 * checks that whatever parses encodes back to the same bytes. */
#include "tap.h"
#include "pool/wire.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"tty", NULL };

/* Encode, then parse a copy of the bytes; 0 if it parsed. */
static int round_trip(const rf_pool_wire_tty *tty, rf_pool_wire_request *req, char **ret_buf)
{
    size_t len;
    char *buf = rf_pool_wire_encode("key", "/ws", argv, tty, &len);
    *ret_buf = buf;
    return buf ? rf_pool_wire_parse(buf, len, req) : -1;
}

static void encoding(void)
{
    static rf_pool_wire_request req;
    char *buf;
    rf_pool_wire_tty tty = { .streams = 5, .size = { 65535, 65535, 7, 9 }, .term = "xterm-256color" };
    is_int(round_trip(&tty, &req, &buf), 0, "an RFP2 request parses");
    ok(buf && !memcmp(buf, "RFP2", 4), "a pty makes it RFP2");
    is_int(req.tty.streams, 5, "the streams survive (stdin and stderr)");
    ok(req.tty.size.ws_row == 65535 && req.tty.size.ws_col == 65535 && req.tty.size.ws_xpixel == 7 &&
           req.tty.size.ws_ypixel == 9,
       "the window size survives, 65535x65535 included");
    is_str(req.tty.term, "xterm-256color", "TERM survives");
    is_str(req.argv[2], "tty", "the command after the head is whole");
    free(buf);
    tty.streams = 0;
    is_int(round_trip(&tty, &req, &buf), 0, "no pty: an RFP1 request");
    ok(buf && !memcmp(buf, "RFP1", 4) && req.tty.streams == 0, "RFP1, as older servers read it");
    free(buf);
    size_t len;
    static const char *const bad_terms[] = { "x=y", "a b", "\033[2J", "../../x" };
    for (size_t i = 0; i < 4; i++) {
        rf_pool_wire_tty t = { .streams = 1, .term = bad_terms[i] };
        ok(!rf_pool_wire_encode("k", "", argv, &t, &len), "a TERM that is no terminal type's name is not sent");
    }
    char longterm[RF_POOL_TERM_MAX + 2];
    memset(longterm, 'x', sizeof longterm - 1);
    longterm[sizeof longterm - 1] = '\0';
    rf_pool_wire_tty t = { .streams = 1, .term = longterm };
    ok(!rf_pool_wire_encode("k", "", argv, &t, &len), "nor one over RF_POOL_TERM_MAX");
}

/* Hand-made RFP2 heads the parser must refuse. */
static void refusals(void)
{
    static rf_pool_wire_request req;
    struct {
        const char *what;
        char bytes[64];
        size_t len;
    } cases[] = {
        { "streams 0", "RFP2\0\0\0\0\0\0\0\0\0\0k\0/\0sh", 23 },
        { "stream bit 3", "RFP2\x08\0\0\0\0\0\0\0\0\0k\0/\0sh", 23 },
        { "a TERM with '='", "RFP2\x01\0\0\0\0\0\0\0\0a=b\0k\0/\0sh", 26 },
        { "a head cut short", "RFP2\x01\0\0", 8 },
        { "no command after the head", "RFP2\x01\0\0\0\0\0\0\0\0\0k\0/", 20 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char desc[96];
        snprintf(desc, sizeof desc, "RFP2 with %s is malformed", cases[i].what);
        char buf[64];
        memcpy(buf, cases[i].bytes, cases[i].len);
        is_int(rf_pool_wire_parse(buf, cases[i].len, &req), -1, desc);
    }
    char good[] = "RFP2\x01\0\0\0\0\0\0\0\0\0k\0/\0sh";
    is_int(rf_pool_wire_parse(good, sizeof good, &req), 0, "control: the same head well-formed parses");
}

/* Send n descriptors of /dev/null over a socketpair, take them with
 * pty_streams; how many were carried, fds filled. */
static int carry(int n, unsigned pty_streams, int fds[3])
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    int sent[5];
    for (int i = 0; i < n; i++)
        sent[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    union {
        char b[CMSG_SPACE(8 * sizeof(int))];
        struct cmsghdr align;
    } u;
    char byte = 'x';
    struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = n ? u.b : NULL,
                         .msg_controllen = n ? CMSG_SPACE((size_t)n * sizeof(int)) : 0 };
    if (n) {
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        *c = (struct cmsghdr){ .cmsg_len = CMSG_LEN((size_t)n * sizeof(int)), .cmsg_level = SOL_SOCKET,
                               .cmsg_type = SCM_RIGHTS };
        memcpy(CMSG_DATA(c), sent, (size_t)n * sizeof(int));
    }
    int rc = (int)sendmsg(sv[0], &mh, 0);
    for (int i = 0; i < n; i++)
        close(sent[i]);
    struct msghdr rh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
    rc = rc < 0 ? -1 : (int)recvmsg(sv[1], &rh, MSG_CMSG_CLOEXEC);
    close(sv[0]);
    close(sv[1]);
    return rc < 0 ? -1 : rf_pool_wire_take_fds(&rh, pty_streams, fds);
}

static void descriptors(void)
{
    is_int(rf_pool_wire_nfds(0), 3, "no pty: three descriptors");
    is_int(rf_pool_wire_nfds(1), 2, "stdin the pty: two");
    is_int(rf_pool_wire_nfds(7), 0, "every stream the pty: none");
    int before = tap_count_fds(), fds[3];
    is_int(carry(2, 1, fds), 2, "stdin the pty, two carried");
    ok(fds[0] == -1 && fds[1] >= 0 && fds[2] >= 0, "they are stdout and stderr; stdin's slot stays empty");
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    is_int(carry(5, 1, fds), 5, "five carried where two belong: counted as five (the server refuses)");
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    is_int(tap_count_fds(), before, "and the three beyond were closed, none left behind");
    is_int(carry(3, 7, fds), 3, "three carried where none belong");
    ok(fds[0] == -1 && fds[1] == -1 && fds[2] == -1, "none kept");
    is_int(tap_count_fds(), before, "all three closed");
}

int main(void)
{
    encoding();
    refusals();
    descriptors();
    return done_testing();
}
