/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Windows plan as JSON, under the name seed 000 logs it by. */
#include "backend/windows/windows.h"
#include "util/strv-json.h"

#include <jansson.h>

static json_t *limits_json(const rf_win_plan *p)
{
    json_t *l = json_object();
    if (p->memory)
        json_object_set_new(l, "memory", json_integer((json_int_t)p->memory));
    if (p->pids)
        json_object_set_new(l, "pids", json_integer((json_int_t)p->pids));
    if (p->cpu > 0)
        json_object_set_new(l, "cpu", json_real(p->cpu));
    if (p->timeout > 0)
        json_object_set_new(l, "timeout", json_real(p->timeout));
    return l;
}

static json_t *rules_json(const rf_win_plan *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->n_rules; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "path", p->rules[i].path, "access",
                                           p->rules[i].access, "why", p->rules[i].why));
    return a;
}

RF_EXPORT char *rf_win_plan_to_json(const rf_win_plan *p)
{
    static const char *const net[] = { "none", "host", "allowlist" };
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "log",
                          "windows isolation access rules", "backend", "windows", "workspace", p->workspace,
                          "instance_root", p->instance_root, "access_rules", rules_json(p), "token",
                          json_pack("{s:s, s:[s,s], s:s}", "integrity", "low", "deny_only", "BUILTIN\\Administrators",
                                    "BUILTIN\\Power Users", "privileges", "SeChangeNotifyPrivilege only"),
                          "job", json_pack("{s:b, s:b}", "kill_on_close", 1, "breakaway", 0), "limits",
                          limits_json(p), "env", rf_strv_json(p->env), "network", net[p->network], "argv",
                          rf_strv_json(p->argv), "cannot", rf_strv_json(p->cannot), "warnings", rf_strv_json(p->warnings));
    if (!o)
        return NULL;
    json_object_set_new(o, "dirs", rf_strv_json(p->dirs));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}
