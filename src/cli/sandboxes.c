/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The running sandboxes as ps, top and stop see them (not a subcommand:
 * what those three share). */
#include "cli.h"
#include "options.h"

#include "registry/registry.h"
#include "util/cleanup.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *rf_cli_sandboxes(int *code)
{
    rf_cli_opts o;
    char *argv[] = { (char *)"ps", NULL };
    if (rf_cli_parse_sandbox_options("ps", 1, argv, &o) < 0) {
        *code = RF_EXIT_FAILURE;
        return NULL;
    }
    json_object_set_new(o.flags, "allow_sensitive_workspace", json_true());
    o.no_workspace_config = true; /* a file a command may have left must not stop or steer ps or stop */
    rf_policy *policy = rf_cli_policy(&o, code);
    _cleanup_free_ char *dir = policy ? rf_registry_dir(rf_policy_instance_root(policy)) : NULL;
    rf_policy_free(policy);
    rf_cli_opts_clear(&o);
    if (!dir)
        return NULL;
    json_t *all = json_array();
    rf_error *err = NULL;
    /* root: everyone's; anyone else: their own */
    if ((getuid() == 0 ? rf_registry_list_all(dir, all, &err) : rf_registry_list(dir, all, &err)) < 0) {
        *code = rf_cli_report(err);
        rf_error_free(err);
        json_decref(all);
        return NULL;
    }
    return all;
}

static const char *const sort_keys[] = { "cpu", "mem", "age", "procs", "id", "out", "refusals", NULL };
static const char *const sort_fields[] = { "cpu_seconds", "memory_bytes", "age_seconds", "processes", "id",
                                           "bytes_out", "refusals" };
static int sort_by;

bool rf_cli_sort_known(const char *key)
{
    for (size_t i = 0; sort_keys[i]; i++)
        if (!strcmp(sort_keys[i], key))
            return true;
    return false;
}

static int cmp_rows(const void *a, const void *b)
{
    const json_t *x = json_object_get(*(json_t *const *)a, sort_fields[sort_by]);
    const json_t *y = json_object_get(*(json_t *const *)b, sort_fields[sort_by]);
    if (json_is_string(x))
        return strcmp(json_string_value(x), json_string_value(y) ? json_string_value(y) : "");
    double dx = json_number_value(x), dy = json_number_value(y);
    return dx < dy ? 1 : dx > dy ? -1 : 0; /* the biggest first */
}

static void human_bytes(char *buf, size_t size, double b)
{
    static const char *const units[] = { "B", "K", "M", "G", "T" };
    size_t u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f%s" : "%.0f%s", b, units[u]);
}

static void human_age(char *buf, size_t size, long long s)
{
    if (s < 120)
        snprintf(buf, size, "%llds", s);
    else if (s < 7200)
        snprintf(buf, size, "%lldm", s / 60);
    else if (s < 172800)
        snprintf(buf, size, "%lldh", s / 3600);
    else
        snprintf(buf, size, "%lldd", s / 86400);
}

/* What a sandbox chose (its command's words, joined; its instance's
 * name), shown safely, as a malloc'd string. */
static char *safe_text(const json_t *v)
{
    char *buf = NULL;
    size_t len = 0, i;
    json_t *w;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return NULL;
    if (json_is_string(v))
        rf_cli_put_safe(mem, json_string_value(v));
    json_array_foreach(v, i, w) {
        if (i)
            fputc(' ', mem);
        rf_cli_put_safe(mem, json_string_value(w));
    }
    fclose(mem);
    return buf;
}

void rf_cli_print_sandboxes(FILE *out, json_t *rows, const char *sort)
{
    sort_by = 0;
    for (size_t i = 0; sort && sort_keys[i]; i++)
        if (!strcmp(sort_keys[i], sort))
            sort_by = (int)i;
    size_t n = json_array_size(rows);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_array_get(rows, i);
    if (v)
        qsort(v, n, sizeof *v, cmp_rows);
    fprintf(out, "%-12s %-8s %-8s %7s %5s %6s %7s %5s %7s %7s %-8s %-20s %s\n", "ID", "USER", "INSTANCE", "PID",
            "AGE", "CPU", "MEM", "PROCS", "OUT", "REFUSED", "BACKEND", "WORKSPACE", "COMMAND");
    for (size_t i = 0; v && i < n; i++) {
        const json_t *o = v[i];
        char mem[32], age[32], sent[32];
        human_bytes(mem, sizeof mem, (double)json_integer_value(json_object_get(o, "memory_bytes")));
        human_bytes(sent, sizeof sent, (double)json_integer_value(json_object_get(o, "bytes_out")));
        human_age(age, sizeof age, json_integer_value(json_object_get(o, "age_seconds")));
        const json_t *user = json_object_get(o, "user");
        _cleanup_free_ char *u = json_is_string(user) ? safe_text(user) : NULL;
        _cleanup_free_ char *inst = safe_text(json_object_get(o, "instance"));
        _cleanup_free_ char *ws = safe_text(json_object_get(o, "workspace"));
        _cleanup_free_ char *cmd = safe_text(json_object_get(o, "command"));
        fprintf(out, "%-12s %-8s %-8s %7lld %5s %6.2f %7s %5lld %7s %7lld %-8s %-20s %.60s",
                json_string_value(json_object_get(o, "id")),
                u ? u : "?", inst && *inst ? inst : "-", (long long)json_integer_value(json_object_get(o, "pid")), age,
                json_number_value(json_object_get(o, "cpu_seconds")), mem,
                (long long)json_integer_value(json_object_get(o, "processes")), sent,
                (long long)json_integer_value(json_object_get(o, "refusals")), json_string_value(json_object_get(o, "backend")), ws ? ws : "", cmd ? cmd : "");
        fprintf(out, "\n");
    }
    free(v);
}
