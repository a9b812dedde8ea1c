/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_plan_set_ask: the library's callback decides on names allow_domains
 * does not match (issue 31). A native sandbox with an allowlist CONNECTs
 * twice to a mapped name; the callback's answers: allow for the run (one
 * call, both through), deny (refused), nonsense (refused: fail closed). */
#include "tap.h"
#include "ringfence.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[64], ws[96], home[96];

static void skip(const char *desc, const char *why)
{
    printf("ok %d - %s # SKIP %s\n", ++tap_n, desc, why);
}
static rf_context ctx;

typedef struct answers {
    int allow, scope, calls;
    char host[64], protocol[16];
    unsigned port;
} answers;

static int decide(void *data, const rf_ask_request *q, int *ret_scope)
{
    answers *a = data;
    a->calls++;
    snprintf(a->host, sizeof a->host, "%s", q->host);
    snprintf(a->protocol, sizeof a->protocol, "%s", q->protocol);
    a->port = q->port;
    *ret_scope = a->scope;
    return a->allow;
}

/* Exit status of the command: 0 when both CONNECTs got 200, 3 when the
 * first got 403, 4 otherwise. */
static int run_with(answers *a, unsigned port)
{
    char json[256], script[600];
    snprintf(json, sizeof json,
             "{\"backend\": \"native\", \"network\": {\"mode\": \"allowlist\", \"hosts\": {\"cb.test\": "
             "\"127.0.0.1\"}}}");
    snprintf(script, sizeof script,
             "import socket, sys\n"
             "codes = []\n"
             "for i in range(2):\n"
             "    s = socket.create_connection(('127.0.0.1', 3128))\n"
             "    s.sendall(b'CONNECT cb.test:%u HTTP/1.1\\r\\nHost: cb.test\\r\\n\\r\\n')\n"
             "    codes.append(s.recv(12)[9:12])\n"
             "sys.exit(0 if codes == [b'200', b'200'] else 3 if codes[0] == b'403' else 4)\n",
             port);
    char *const argv[] = { (char *)"python3", (char *)"-c", script, NULL };
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    rf_policy *policy = NULL;
    rf_plan *plan = NULL;
    if (rf_config_add_json(cfg, "test", json, &err) == 0 && (policy = rf_policy_resolve(cfg, &ctx, &err)))
        plan = rf_plan_build(policy, argv, &err);
    rf_status st = { 0 };
    int rc = -1;
    if (plan) {
        rf_plan_set_ask(plan, decide, a);
        if (rf_run(plan, NULL, &st, &err) == 0)
            rc = st.exit_code;
        rf_status_clear(&st);
    }
    if (err)
        printf("# %s\n", rf_error_message(err));
    rf_error_free(err);
    rf_plan_free(plan);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return rc;
}

int main(void)
{
    if (access("/usr/bin/python3", X_OK) != 0) {
        skip("the callback decides", "no /usr/bin/python3");
        return done_testing();
    }
    snprintf(top, sizeof top, "/tmp/rf-ask.XXXXXX");
    if (!mkdtemp(top))
        return ok(0, "scratch directory"), done_testing();
    snprintf(ws, sizeof ws, "%s/ws", top);
    snprintf(home, sizeof home, "%s/home", top);
    chmod(top, 0755);
    mkdir(ws, 0777);
    ctx = (rf_context){ .cwd = ws, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp", .rf_home = home };
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    if (srv < 0 || bind(srv, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(srv, 8) < 0 ||
        getsockname(srv, (struct sockaddr *)&sa, &len) < 0)
        return ok(0, "a listener on the host's loopback"), done_testing();
    unsigned port = ntohs(sa.sin_port);

    answers a = { .allow = 1, .scope = RF_ASK_SCOPE_RUN };
    int rc = run_with(&a, port);
    if (rc < 0) {
        skip("the callback decides", "no native sandbox with a network namespace here");
        return done_testing();
    }
    is_int(rc, 0, "allow for the run: both connections through");
    is_int(a.calls, 1, "allow for the run: one call for two connections");
    is_str(a.host, "cb.test", "the call names the host");
    is_int((int)a.port, (int)port, "the call names the port");
    is_str(a.protocol, "connect", "the call names the protocol");

    answers d = { .allow = 0, .scope = RF_ASK_SCOPE_ONCE };
    is_int(run_with(&d, port), 3, "deny: refused (403)");
    answers n = { .allow = 7, .scope = RF_ASK_SCOPE_RUN };
    is_int(run_with(&n, port), 3, "an answer that is neither 0 nor 1: refused (fail closed)");
    close(srv);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", top);
    return done_testing();
}
