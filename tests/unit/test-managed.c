/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The managed boundary's check (src/lib/managed/check.c): each rule, a
 * policy within and one just beyond it, and the first excess named. */
#include "tap.h"
#include "managed/managed.h"

#include <string.h>

static const char boundary_text[] =
    "{\"network\": {\"mode\": \"allowlist\", \"allow_domains\": [\"*.example.com\", \"pypi.org:443\"],"
    " \"allow_ports\": [\"443\"], \"routes\": {\"api\": {\"url\": \"https://api.example.com\"}},"
    " \"allow_private_addresses\": false},"
    " \"expose\": [{\"source\": \"/opt\", \"mode\": \"ro\"}, {\"source\": \"/srv/data/\", \"mode\": \"rw\"}],"
    " \"accept_weaker\": false, \"restrict_to_workspace\": true, \"audit\": true, \"backend\": \"landlock\","
    " \"landlock\": \"best-effort\", \"seccomp\": {\"profile\": \"default\"},"
    " \"limits\": {\"memory\": \"1G\", \"pids\": 100, \"timeout\": 600}}";

static json_t *boundary;

/* A policy within the boundary, then `edit` (a JSON object merged over it). */
static int check(const char *edit, rf_managed_excess *x)
{
    json_t *p = json_loads("{\"network\": {\"mode\": \"allowlist\", \"allow_domains\": [\"api.example.com\","
                           " \"*.cdn.example.com\", \"pypi.org:443\"], \"allow_ports\": [\"443\"],"
                           " \"routes\": [{\"name\": \"api\", \"url\": \"https://api.example.com\"}],"
                           " \"allow_private_addresses\": false},"
                           " \"expose\": [{\"source\": \"/opt/node\", \"mode\": \"ro\"},"
                           " {\"source\": \"/srv/data/x\", \"mode\": \"rw\"}],"
                           " \"accept_weaker\": false, \"restrict_to_workspace\": true, \"backend\": \"native\","
                           " \"landlock\": \"required\", \"seccomp\": {\"profile\": \"strict\"},"
                           " \"limits\": {\"memory\": 1000, \"pids\": 0, \"cpu\": 0.0, \"timeout\": 60.0}}",
                           0, NULL);
    json_t *e = edit ? json_loads(edit, 0, NULL) : NULL;
    if (e)
        json_object_update_recursive(p, e);
    int r = rf_managed_check(boundary, p, x);
    json_decref(e);
    json_decref(p);
    return r;
}

static void beyond(const char *edit, const char *setting, const char *part, const char *desc)
{
    rf_managed_excess x;
    int r = check(edit, &x);
    ok(r == 1 && !strcmp(x.setting, setting) && strstr(x.what, part), desc);
    if (r != 1 || strcmp(x.setting, setting) || !strstr(x.what, part))
        printf("#   r=%d setting=%s what=%s\n", r, x.setting, x.what);
}

int main(void)
{
    boundary = json_loads(boundary_text, 0, NULL);
    rf_managed_excess x;
    is_int(check(NULL, &x), 0, "a policy within every rule is within");
    is_int(check("{\"network\": {\"mode\": \"none\"}}", &x), 0, "no network is within an allowlist boundary");
    is_int(check("{\"limits\": {\"memory\": 0}}", &x), 0, "an unset limit is within (the run gets the boundary's)");
    is_int(check("{\"backend\": \"bwrap\"}", &x), 0, "bwrap is as strong as the boundary asks");
    beyond("{\"network\": {\"mode\": \"host\"}}", "network.mode", "host", "network host beyond an allowlist");
    beyond("{\"network\": {\"allow_domains\": [\"evil.test\"]}}", "network.allow_domains[0]", "evil.test",
           "a domain the boundary lacks");
    beyond("{\"network\": {\"allow_domains\": [\"example.com\"]}}", "network.allow_domains[0]", "example.com",
           "*.example.com does not cover example.com itself");
    beyond("{\"network\": {\"allow_domains\": [\"*.com\"]}}", "network.allow_domains[0]", "*.com",
           "a wider pattern than the boundary's");
    beyond("{\"network\": {\"allow_domains\": [\"pypi.org\"]}}", "network.allow_domains[0]", "pypi.org",
           "every port where the boundary names one");
    beyond("{\"network\": {\"allow_domains\": [\"xexample.com\"]}}", "network.allow_domains[0]", "xexample",
           "a suffix that is not a subdomain");
    beyond("{\"network\": {\"allow_ports\": [\"443\", \"22\"]}}", "network.allow_ports", "22", "a port beyond");
    beyond("{\"network\": {\"routes\": [{\"name\": \"api\", \"url\": \"https://evil.test\"}]}}", "network.routes",
           "https://evil.test", "a route to another upstream");
    beyond("{\"network\": {\"routes\": [{\"name\": \"other\", \"url\": \"https://api.example.com\"}]}}",
           "network.routes", "other", "a route the boundary lacks");
    beyond("{\"network\": {\"allow_private_addresses\": true}}", "network.allow_private_addresses", "true",
           "private addresses where the boundary forbids them");
    beyond("{\"expose\": [{\"source\": \"/etc\", \"mode\": \"ro\"}]}", "expose[0]", "/etc", "a path outside every expose");
    beyond("{\"expose\": [{\"source\": \"/opt/node\", \"mode\": \"rw\"}]}", "expose[0]", "read-write",
           "read-write where the boundary has read-only");
    beyond("{\"expose\": [{\"source\": \"/optx\", \"mode\": \"ro\"}]}", "expose[0]", "/optx",
           "/optx is not beneath /opt");
    beyond("{\"accept_weaker\": true}", "accept_weaker", "true", "accept_weaker where forbidden");
    beyond("{\"restrict_to_workspace\": false}", "restrict_to_workspace", "false", "an unrestricted workspace");
    beyond("{\"audit\": false}", "audit", "false", "auditing off where required");
    beyond("{\"backend\": \"none\"}", "backend", "none", "backend none below landlock");
    beyond("{\"landlock\": \"off\"}", "landlock", "off", "landlock off");
    beyond("{\"seccomp\": {\"profile\": \"off\"}}", "seccomp.profile", "off", "seccomp off");
    beyond("{\"limits\": {\"memory\": 2147483648}}", "limits.memory", "2147483648", "more memory");
    beyond("{\"limits\": {\"pids\": 101}}", "limits.pids", "101", "more processes");
    beyond("{\"limits\": {\"timeout\": 601}}", "limits.timeout", "601", "a longer timeout");
    json_t *bad = json_loads("{\"network\": {\"mode\": \"sideways\"}}", 0, NULL);
    json_t *p = json_loads("{\"network\": {\"mode\": \"host\"}}", 0, NULL);
    is_int(rf_managed_check(bad, p, &x), -1, "a boundary value we do not know: an error, never 'within'");
    json_decref(bad);
    json_decref(p);
    rf_managed_limits l;
    rf_managed_limits_of(boundary, &l);
    ok(l.memory_bytes == 1073741824 && l.pids == 100 && l.timeout_s == 600 && l.cpu == 0,
       "the boundary's limits, for a policy without");
    json_decref(boundary);
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
