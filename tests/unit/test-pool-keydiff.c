/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a refused `run --via` is told (src/lib/pool/keydiff.c): the
 * settings in which its policy differs from the server's, the workspace
 * with both paths, never a byte a terminal would act on. */
#include "tap.h"
#include "pool/keydiff.h"

#include <string.h>

static const char server[] = "{\"env\":{\"keep\":[\"LANG\"],\"set\":{}},\"limits\":{\"pids\":0,\"timeout\":0.0},"
                             "\"network\":{\"mode\":\"none\"},\"workspace\":\"/home/u/proj\"}";

static void settings(void)
{
    char out[600];
    is_int((int)rf_pool_key_diff(server, server, out, sizeof out), 0, "the same key: nothing differs");
    is_str(out, "", "...and nothing is named");
    const char *timeout = "{\"env\":{\"keep\":[\"LANG\"],\"set\":{}},\"limits\":{\"pids\":0,\"timeout\":5.0},"
                          "\"network\":{\"mode\":\"none\"},\"workspace\":\"/home/u/proj\"}";
    is_int((int)rf_pool_key_diff(server, timeout, out, sizeof out), 1, "one option differs");
    is_str(out, "limits.timeout", "it is named with its section");
    const char *several = "{\"env\":{\"keep\":[\"LANG\",\"HOME\"],\"set\":{}},\"limits\":{\"pids\":9,\"timeout\":5.0},"
                          "\"network\":{\"mode\":\"host\"},\"workspace\":\"/home/u/proj\",\"extra\":1}";
    is_int((int)rf_pool_key_diff(server, several, out, sizeof out), 5, "five differ");
    is_str(out, "env.keep, limits.pids, limits.timeout, network.mode, ...", "four are named, then '...'");
    const char *elsewhere = "{\"env\":{\"keep\":[\"LANG\"],\"set\":{}},\"limits\":{\"pids\":0,\"timeout\":0.0},"
                            "\"network\":{\"mode\":\"none\"},\"workspace\":\"/home/u/other\"}";
    rf_pool_key_diff(server, elsewhere, out, sizeof out);
    is_str(out, "workspace (the server's /home/u/proj, this request's /home/u/other)",
           "another directory: both workspaces are shown");
    const char *less = "{\"limits\":{\"pids\":0,\"timeout\":0.0},\"network\":{\"mode\":\"none\"},"
                       "\"workspace\":\"/home/u/proj\"}";
    rf_pool_key_diff(server, less, out, sizeof out);
    is_str(out, "env", "a section only the server has is named");
}

static void hostile(void)
{
    char out[600];
    /* A directory named with escape sequences (clear the screen, set the
     * title), made by an agent and run from. */
    const char *evil = "{\"env\":{\"keep\":[\"LANG\"],\"set\":{}},\"limits\":{\"pids\":0,\"timeout\":0.0},"
                       "\"network\":{\"mode\":\"none\"},\"workspace\":\"/tmp/\\u001b[2J\\u001b]0;pwn\\u0007\","
                       "\"\\u001b[31m\":1}";
    rf_pool_key_diff(server, evil, out, sizeof out);
    ok(!strchr(out, '\033') && !strchr(out, '\007'), "no escape sequence reaches the text");
    like(out, "this request's /tmp/?[2J?]0;pwn?)", "the path is shown with '?' for them");
    like(out, "?[31m", "so is a key's name");
    is_int((int)rf_pool_key_diff(server, "key", out, sizeof out), 0, "a key that is not JSON: nothing named");
    is_str(out, "", "...and the text is empty");
    is_int((int)rf_pool_key_diff(server, "[1,2]", out, sizeof out), 0, "nor is one that is no object");
    char tiny[8];
    is_int((int)rf_pool_key_diff(server, "{\"workspace\":\"/a/long/path\"}", tiny, sizeof tiny), 4,
           "a buffer too small: the count is whole");
    is_str(tiny, "env, li", "...and the text is cut, ended");
}

int main(void)
{
    settings();
    hostile();
    return done_testing();
}
