/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence audit: the audit trail (docs/audit.md): where it is, its
 * records (filtered), whether its chain is whole, and an OCSF export. */
#include "cli.h"
#include "options.h"

#include "audit/audit.h"
#include "audit/system.h"
#include "util/cleanup.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { A_JSON = 256, A_SANDBOX, A_INSTANCE, A_EVENT, A_SINCE, A_UNTIL, A_FORMAT, A_HEAD, A_SYSTEM, A_LOG, A_HELP };

static const struct {
    const char *name;
    int has_arg, id;
    const char *metavar, *verbs, *help;
} aopts[] = {
    { "sandbox", required_argument, A_SANDBOX, "ID", "show, export", "only this sandbox's records" },
    { "instance", required_argument, A_INSTANCE, "NAME", "show, export", "only the records of runs in instance NAME" },
    { "event", required_argument, A_EVENT, "EVENT", "show, export",
      "only this event (run.start, net.refused, ...); a prefix ending in '.' (net.) takes a family" },
    { "since", required_argument, A_SINCE, "TIME", "show, export",
      "records from TIME on: 2026-01-02T03:04:05Z (or a prefix of it), or an age: 30s, 10m, 2h, 7d" },
    { "until", required_argument, A_UNTIL, "TIME", "show, export", "records before TIME (as --since)" },
    { "json", no_argument, A_JSON, NULL, "show", "print each record as it is stored, one JSON object a line" },
    { "format", required_argument, A_FORMAT, "ocsf", "export", "the format (ocsf: OCSF 1.3 events, one a line)" },
    { "head", required_argument, A_HEAD, "HASH", "verify",
      "also check that the record with this hash (a status record's audit_head) is still in the log" },
    { "system", no_argument, A_SYSTEM, NULL, NULL,
      "the system audit log (every user's runs, written by 'ringfence audit-daemon'; root can read it)" },
    { "log", required_argument, A_LOG, "PATH", NULL, "with --system: the system log at PATH (default "
      RF_AUDIT_SYSTEM_LOG ")" },
    { "help", no_argument, A_HELP, NULL, NULL, "show this help" },
};
#define N_AOPTS (sizeof aopts / sizeof aopts[0])

typedef struct audit_opts {
    const char *sandbox, *instance, *event, *format, *head, *log;
    long long since_ms, until_ms; /* 0: open */
    bool json, help, system;
} audit_opts;

static void help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence audit path|show|verify|export [OPTIONS]\n"
            "\n"
            "Every sandbox (run, exec, mcp, serve, a program using libringfence) appends\n"
            "its records to an append-only JSON-lines log in the instance root's audit/\n"
            "directory, which no sandbox can see: what ran under which policy, the\n"
            "network's destinations allowed and refused, questions and answers, limits\n"
            "hit, how it ended. Each record carries the hash of the one before it; the\n"
            "last hash is kept in audit/head and printed in the status record\n"
            "(audit_head), so an edited, removed, reordered or cut-off record is found.\n"
            "\n"
            "  path     print the log file's path\n"
            "  show     print the records, oldest first (--json: as stored)\n"
            "  verify   check every hash, the chain and the head; name the first bad record\n"
            "  export   print the records for a SIEM (--format ocsf)\n"
            "\n"
            "With --system, the same of the system audit log, where 'ringfence audit-daemon'\n"
            "keeps every user's records (each stamped with its sender's uid as the kernel\n"
            "gave it) when the managed boundary asks for one; only root can read it.\n"
            "\n"
            "Options:\n");
    for (size_t i = 0; i < N_AOPTS; i++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", aopts[i].name, aopts[i].metavar ? " " : "",
                 aopts[i].metavar ? aopts[i].metavar : "");
        fprintf(out, "  %-20s %s%s%s%s\n", left, aopts[i].verbs ? "(" : "", aopts[i].verbs ? aopts[i].verbs : "",
                aopts[i].verbs ? ") " : "", aopts[i].help);
    }
    fprintf(out, "\n"
                 "Examples:\n"
                 "  ringfence audit show --since 1h --event net.refused\n"
                 "  ringfence audit verify --head $(jq -r .audit_head status.json)\n"
                 "  ringfence audit export --format ocsf > ringfence.ocsf.jsonl\n"
                 "\n"
                 "Exit status: 0 done (verify: intact); 1 verify found damage (named on\n"
                 "stderr); 125 an error (a bad option, an unreadable log).\n");
}

/* ISO (or a prefix of it) or an age (30s, 10m, 2h, 7d): ms since the epoch. */
static long long parse_time(const char *s)
{
    char *end;
    double n = strtod(s, &end);
    static const struct { char unit; long long ms; } ages[] = { { 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 },
                                                                  { 'd', 86400000 } };
    for (size_t i = 0; end != s && n >= 0 && i < sizeof ages / sizeof ages[0]; i++)
        if (end[0] == ages[i].unit && !end[1])
            return (long long)time(NULL) * 1000 - (long long)(n * (double)ages[i].ms);
    char full[32] = "1970-01-01T00:00:00.000Z";
    size_t len = strlen(s);
    if (len < 4 || len > 24)
        return -1;
    memcpy(full, s, len);
    long long ms = rf_audit_time_ms(full);
    return ms > 0 ? ms : -1;
}

static int parse(int argc, char **argv, audit_opts *ao)
{
    struct option lo[N_AOPTS + 1];
    memset(lo, 0, sizeof lo);
    for (size_t i = 0; i < N_AOPTS; i++)
        lo[i] = (struct option){ aopts[i].name, aopts[i].has_arg, NULL, aopts[i].id };
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        switch (c) {
        case A_JSON: ao->json = true; break;
        case A_SANDBOX: ao->sandbox = optarg; break;
        case A_INSTANCE: ao->instance = optarg; break;
        case A_EVENT: ao->event = optarg; break;
        case A_FORMAT: ao->format = optarg; break;
        case A_HEAD: ao->head = optarg; break;
        case A_SYSTEM: ao->system = true; break;
        case A_LOG: ao->log = optarg; break;
        case A_SINCE:
        case A_UNTIL: {
            long long t = parse_time(optarg);
            if (t < 0)
                return rf_cli_usage_error("audit", "--%s %s: expected a time (2026-01-02T03:04:05Z) or an age "
                                                   "(30s, 10m, 2h, 7d)", c == A_SINCE ? "since" : "until", optarg), -1;
            *(c == A_SINCE ? &ao->since_ms : &ao->until_ms) = t;
            break;
        }
        case 'h':
        case A_HELP: ao->help = true; break;
        default: return rf_cli_usage_error("audit", "unknown option '%s'", argv[optind - 1]), -1;
        }
    }
    return optind;
}

/* The instance root as `run` finds it (RINGFENCE_HOME, config files). */
static char *audit_dir(int *code)
{
    rf_cli_opts o;
    char *argv[] = { (char *)"audit", NULL };
    if (rf_cli_parse_sandbox_options("audit", 1, argv, &o) < 0) {
        *code = RF_EXIT_FAILURE;
        return NULL;
    }
    json_object_set_new(o.flags, "allow_sensitive_workspace", json_true());
    o.no_workspace_config = true; /* a file a command may have left must not stop or steer the reader */
    rf_policy *policy = rf_cli_policy(&o, code);
    char *dir = policy ? rf_audit_dir(rf_policy_instance_root(policy)) : NULL;
    rf_policy_free(policy);
    rf_cli_opts_clear(&o);
    return dir;
}

/* The system log's directory (--system, --log PATH). */
static char *system_dir(const audit_opts *ao)
{
    rf_error *err = NULL;
    char *dir = rf_audit_system_dir(ao->log ? ao->log : RF_AUDIT_SYSTEM_LOG, &err);
    if (!dir) {
        rf_cli_report(err);
        rf_error_free(err);
    }
    return dir;
}

static bool str_is(const json_t *rec, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(rec, key));
    return v && !strcmp(v, want);
}

static bool wanted(const audit_opts *ao, const json_t *rec)
{
    const char *event = json_string_value(json_object_get(rec, "event"));
    if (!event)
        return false;
    if (ao->event) {
        size_t n = strlen(ao->event);
        if (n && ao->event[n - 1] == '.' ? strncmp(event, ao->event, n) != 0 : strcmp(event, ao->event) != 0)
            return false;
    }
    if (ao->sandbox && !str_is(rec, "sandbox", ao->sandbox))
        return false;
    if (ao->instance && !str_is(rec, "instance", ao->instance))
        return false;
    long long t = rf_audit_time_ms(json_string_value(json_object_get(rec, "time")));
    return !(ao->since_ms && t < ao->since_ms) && !(ao->until_ms && t >= ao->until_ms);
}

/* A string as it is, a list of strings (a command) as words, anything
 * else as JSON (which escapes control characters itself); all shown safely. */
static void print_value(const json_t *v)
{
    size_t i;
    json_t *w;
    bool words = json_is_array(v) && json_array_size(v) > 0;
    json_array_foreach(v, i, w)
        words = words && json_is_string(w);
    if (json_is_string(v)) {
        rf_cli_put_safe(stdout, json_string_value(v));
    } else if (words) {
        json_array_foreach(v, i, w) {
            if (i)
                printf(" ");
            rf_cli_put_safe(stdout, json_string_value(w));
        }
    } else {
        _cleanup_free_ char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        rf_cli_put_safe(stdout, text);
    }
}

/* For people: time, event, sandbox, then key=value; every value shown safely. */
static void print_record(const json_t *rec)
{
    static const char *const skip[] = { "seq", "time", "event", "sandbox", "prev", "hash", NULL };
    rf_cli_put_safe(stdout, json_string_value(json_object_get(rec, "time")));
    printf("  %-13s ", json_string_value(json_object_get(rec, "event")));
    rf_cli_put_safe(stdout, json_string_value(json_object_get(rec, "sandbox")));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)rec, k, v) {
        size_t i = 0;
        while (skip[i] && strcmp(skip[i], k))
            i++;
        if (skip[i] || json_is_null(v))
            continue;
        printf(" ");
        rf_cli_put_safe(stdout, k);
        printf("=");
        print_value(v);
    }
    printf("\n");
}

typedef struct show_state {
    const audit_opts *ao;
    bool ocsf;
    unsigned long long damaged;
} show_state;

static int show_one(void *ud, const json_t *rec, const char *line)
{
    show_state *s = ud;
    if (!rec) {
        s->damaged++;
        return 0;
    }
    if (!wanted(s->ao, rec))
        return 0;
    if (s->ocsf) {
        json_t *o = rf_audit_ocsf(rec);
        _cleanup_free_ char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (text)
            puts(text);
    } else if (s->ao->json) {
        puts(line); /* JSON escapes every control character */
    } else {
        print_record(rec);
    }
    return 0;
}

typedef struct find_state {
    const char *hash;
    bool found;
} find_state;

static int find_hash(void *ud, const json_t *rec, const char *line)
{
    find_state *f = ud;
    (void)line;
    if (str_is(rec, "hash", f->hash))
        f->found = true;
    return f->found ? -1 : 0;
}

static int verify(const char *dir, const audit_opts *ao)
{
    rf_audit_check c;
    rf_error *err = NULL;
    find_state f = { .hash = ao->head };
    if (rf_audit_verify(dir, &c, &err) < 0 || (ao->head && rf_audit_read(dir, find_hash, &f, &err) < 0)) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    if (!c.intact) {
        fprintf(stderr, "ringfence: audit verify: %s/" RF_AUDIT_LOG ": %s\n", dir, c.problem);
        return 1;
    }
    if (ao->head && !f.found) {
        fprintf(stderr, "ringfence: audit verify: no record has the hash %s: the log was rewritten or "
                        "rotated away after it\n", ao->head);
        return 1;
    }
    printf("intact: %llu records", (unsigned long long)c.records);
    if (c.first_seq > 1)
        printf(" (from record %llu: the files before it were removed)", (unsigned long long)c.first_seq);
    printf(", head %s\n", c.records ? c.head : "none");
    return 0;
}

static int run_verb(const char *dir, const char *verb, const audit_opts *ao)
{
    if (!strcmp(verb, "path")) {
        printf("%s/" RF_AUDIT_LOG "\n", dir);
        return 0;
    }
    if (!strcmp(verb, "verify"))
        return verify(dir, ao);
    show_state s = { .ao = ao, .ocsf = !strcmp(verb, "export") };
    rf_error *err = NULL;
    if (rf_audit_read(dir, show_one, &s, &err) < 0) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    if (s.damaged)
        fprintf(stderr, "ringfence: audit: %llu line(s) are not records; 'ringfence audit verify' names the "
                        "first\n", s.damaged);
    return 0;
}

int rf_cli_audit(int argc, char **argv)
{
    static const char *const verbs[] = { "path", "show", "verify", "export", NULL };
    audit_opts ao = { 0 };
    int idx = parse(argc, argv, &ao), code = RF_EXIT_FAILURE;
    if (idx < 0)
        return code;
    const char *verb = idx < argc ? argv[idx] : NULL;
    if (ao.help || !verb) {
        help(ao.help ? stdout : stderr);
        return ao.help ? 0 : RF_EXIT_FAILURE;
    }
    size_t v = 0;
    while (verbs[v] && strcmp(verbs[v], verb))
        v++;
    if (!verbs[v])
        return rf_cli_usage_error("audit", "unknown action '%s': expected path, show, verify or export", verb);
    if (idx + 1 < argc)
        return rf_cli_usage_error("audit", "%s takes no argument ('%s')", verb, argv[idx + 1]);
    if (!strcmp(verb, "export") && (!ao.format || strcmp(ao.format, "ocsf")))
        return rf_cli_usage_error("audit", "export needs --format ocsf (the one format there is)");
    if (ao.log && !ao.system)
        return rf_cli_usage_error("audit", "--log names the system log: it goes with --system");
    _cleanup_free_ char *dir = ao.system ? system_dir(&ao) : audit_dir(&code);
    return dir ? run_verb(dir, verb, &ao) : code;
}
