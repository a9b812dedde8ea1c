/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* network.on_blocked, ask, ask_timeout (issue 31, docs/network.md
 * "Asking"). Where the questions go is checked here: the answers must come
 * from outside the sandbox, so a socket the command could reach is refused
 * before anything runs. */
#include "policy/resolve.h"
#include "util/error.h"
#include "util/path.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#define RF_ASK_TIMEOUT_DEFAULT_MS 30000
#define RF_ASK_TIMEOUT_MAX_S 3600

/* Is `path` where the command could see it: the workspace, an exposed
 * path, ringfence's own instance tree, or anywhere when the backend leaves
 * the host's tree visible? Returns the reason, or NULL. */
static const char *visible_inside(const rf_policy *p, const char *path)
{
    if (p->backend == RF_BACKEND_LANDLOCK || p->backend == RF_BACKEND_NONE)
        return "this backend leaves the host's files visible to the command";
    if (p->workspace && rf_path_is_beneath(path, p->workspace))
        return "it is inside the workspace";
    if (p->instance_root && rf_path_is_beneath(path, p->instance_root))
        return "it is inside ringfence's instance root";
    for (size_t i = 0; i < p->n_exposes; i++)
        if (rf_path_is_beneath(path, p->exposes[i].source))
            return "it is inside an exposed path";
    return NULL;
}

static int check_via(rf_resolver *r, rf_policy *p, const char *via)
{
    static const char hint[] = "use --ask tty, or --ask socket:PATH with PATH outside the workspace and every "
                               "exposed path, on a listening unix socket of yours";
    if (!strcmp(via, "tty"))
        return 0; /* needs the command on a pty of its own: checked when it starts */
    if (!strcmp(via, "mcp"))
        return 0; /* ringfence mcp: the client asks its user (mcp/elicit.c) */
    if (strncmp(via, "socket:", 7) != 0) {
        rf_resolve_fail(r, "network.ask", "\"%s\": expected socket:PATH, tty or mcp", via);
        return rf_error_hint_set(r->err, "%s", hint);
    }
    const char *path = via + 7;
    if (path[0] != '/' || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        rf_resolve_fail(r, "network.ask", "\"%s\": the socket's path must be absolute and at most 107 bytes", path);
        return rf_error_hint_set(r->err, "%s", hint);
    }
    /* Compare the real path: a symbolic link outside may lead inside. */
    char *real = realpath(path, NULL);
    const char *why = visible_inside(p, real ? real : path);
    free(real);
    if (why) {
        rf_resolve_fail(r, "network.ask", "%s: the command could answer its own questions: %s", path, why);
        return rf_error_hint_set(r->err, "%s", hint);
    }
    return 0;
}

int rf_resolve_ask(rf_resolver *r, rf_policy *p)
{
    rf_net_policy *n = &p->net;
    const char *hidden = json_string_value(rf_json_path_get(r->tree, "files.on_hidden"));
    p->files_ask = hidden && !strcmp(hidden, "ask");
    const char *on = json_string_value(rf_json_path_get(r->tree, "network.on_blocked"));
    const char *via = json_string_value(rf_json_path_get(r->tree, "network.ask"));
    const json_t *t = rf_json_path_get(r->tree, "network.ask_timeout");
    n->ask = on && !strcmp(on, "ask");
    n->ask_timeout_ms = RF_ASK_TIMEOUT_DEFAULT_MS;
    if (json_is_number(t)) {
        double s = json_number_value(t);
        if (!isfinite(s) || s <= 0 || s > RF_ASK_TIMEOUT_MAX_S)
            return rf_resolve_fail(r, "network.ask_timeout", "expected seconds, more than 0 and at most %d",
                                   RF_ASK_TIMEOUT_MAX_S);
        n->ask_timeout_ms = (unsigned)(s * 1000);
        if (n->ask_timeout_ms == 0)
            n->ask_timeout_ms = 1;
    }
    if (p->files_ask && (!n->ask || !via)) {
        rf_resolve_fail(r, "files.on_hidden", "ask: no place to ask (network.ask)");
        return rf_error_hint_set(r->err, "pass --ask socket:PATH or --ask tty");
    }
    if (p->files_ask && p->backend != RF_BACKEND_NATIVE && p->backend != RF_BACKEND_AUTO) {
        rf_resolve_fail(r, "files.on_hidden", "ask: only the native backend observes the command's opens");
        return rf_error_hint_set(r->err, "use --backend native, or expose the file (--expose PATH)");
    }
    if (!n->ask)
        return 0;
    if (!via) {
        rf_resolve_fail(r, "network.on_blocked", "ask: no place to ask (network.ask)");
        return rf_error_hint_set(r->err, "pass --ask socket:PATH (a unix socket you listen on)");
    }
    if (check_via(r, p, via) < 0)
        return -1;
    if (!(n->ask_via = strdup(via)))
        return rf_error_set(r->err, ENOMEM, "network.ask");
    /* Asking is the proxy's: with no network otherwise, that is an
     * allowlist that allows no name until an answer does. */
    if (p->network == RF_NET_NONE)
        p->network = RF_NET_ALLOWLIST;
    return 0;
}
