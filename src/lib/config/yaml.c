/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* YAML → the same JSON tree the JSON reader makes, so there is one schema
 * and one validator. Plain scalars follow the YAML 1.2 core schema (true,
 * false, null, ~, integers, floats); quoted scalars are strings. Aliases
 * are expanded, so the node count and depth are capped ("billion laughs"). */
#include "config/config.h"
#include "util/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YAML_MAX_DEPTH 64
#define YAML_MAX_NODES 100000

typedef struct conv {
    yaml_document_t *doc;
    const char *origin;
    size_t nodes;
    rf_error **err;
} conv;

static int fail_at(conv *c, const yaml_node_t *n, const char *what, const char *detail)
{
    rf_error_set(c->err, 0, "%s:%zu:%zu: %s%s", c->origin, n->start_mark.line + 1,
                 n->start_mark.column + 1, what, detail ? detail : "");
    return -1;
}

static bool all_digits(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

static json_t *plain_scalar(const char *s)
{
    static const char *const t[] = { "true", "True", "TRUE", NULL };
    static const char *const f[] = { "false", "False", "FALSE", NULL };
    static const char *const nul[] = { "", "~", "null", "Null", "NULL", NULL };
    for (size_t i = 0; t[i]; i++)
        if (!strcmp(s, t[i]))
            return json_true();
    for (size_t i = 0; f[i]; i++)
        if (!strcmp(s, f[i]))
            return json_false();
    for (size_t i = 0; nul[i]; i++)
        if (!strcmp(s, nul[i]))
            return json_null();
    char *end = NULL;
    if (all_digits(s)) {
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!errno && !*end)
            return json_integer(v);
    }
    const char *p = s + (*s == '+' || *s == '-');
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        errno = 0;
        double d = strtod(s, &end);
        if (!errno && !*end && isfinite(d))
            return json_real(d);
    }
    return json_string(s);
}

static json_t *convert(conv *c, yaml_node_t *n, int depth);

static json_t *convert_mapping(conv *c, yaml_node_t *n, int depth)
{
    json_t *obj = json_object();
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) {
            fail_at(c, k ? k : n, "a key must be a plain string", NULL);
            goto fail;
        }
        const char *key = (const char *)k->data.scalar.value;
        if (strlen(key) != k->data.scalar.length) {
            fail_at(c, k, "a key contains a NUL byte", NULL);
            goto fail;
        }
        if (json_object_get(obj, key)) {
            fail_at(c, k, "duplicate key: ", key);
            goto fail;
        }
        json_t *jv = convert(c, v, depth + 1);
        if (!jv)
            goto fail;
        json_object_set_new(obj, key, jv);
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static json_t *convert(conv *c, yaml_node_t *n, int depth)
{
    if (depth > YAML_MAX_DEPTH || ++c->nodes > YAML_MAX_NODES) {
        fail_at(c, n, "the document is nested too deeply or has too many nodes", NULL);
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE: {
        const char *s = (const char *)n->data.scalar.value;
        if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
            return json_stringn(s, n->data.scalar.length);
        if (strlen(s) != n->data.scalar.length) {
            fail_at(c, n, "a value contains a NUL byte", NULL);
            return NULL;
        }
        return plain_scalar(s);
    }
    case YAML_SEQUENCE_NODE: {
        json_t *arr = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            yaml_node_t *child = yaml_document_get_node(c->doc, *it);
            json_t *jv = child ? convert(c, child, depth + 1) : NULL;
            if (!jv) {
                json_decref(arr);
                return NULL;
            }
            json_array_append_new(arr, jv);
        }
        return arr;
    }
    case YAML_MAPPING_NODE:
        return convert_mapping(c, n, depth);
    default:
        fail_at(c, n, "empty node", NULL);
        return NULL;
    }
}

static void parser_error(const yaml_parser_t *p, const char *origin, rf_error **err)
{
    const yaml_mark_t *m = &p->problem_mark;
    if (p->context)
        rf_error_set(err, 0, "%s:%zu:%zu: %s %s", origin, m->line + 1, m->column + 1,
                     p->problem ? p->problem : "syntax error", p->context);
    else
        rf_error_set(err, 0, "%s:%zu:%zu: %s", origin, m->line + 1, m->column + 1,
                     p->problem ? p->problem : "syntax error");
    rf_error_hint_set(err, "fix the YAML syntax at that position (indent with spaces, "
                           "quote values that contain ': ')");
}

json_t *rf_yaml_parse(const char *text, size_t len, const char *origin, rf_error **err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        rf_error_set(err, ENOMEM, "%s: initialising the YAML parser", origin);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    json_t *root = NULL;
    if (!yaml_parser_load(&parser, &doc)) {
        parser_error(&parser, origin, err);
        yaml_parser_delete(&parser);
        return NULL;
    }
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    conv c = { .doc = &doc, .origin = origin, .err = err };
    root = top ? convert(&c, top, 0) : json_object();
    yaml_document_delete(&doc);
    if (root) {
        /* One document per file: a second one would be silently ignored. */
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            parser_error(&parser, origin, err);
            json_decref(root);
            root = NULL;
        } else {
            if (yaml_document_get_root_node(&next)) {
                rf_error_set(err, 0, "%s:%zu:%zu: a second YAML document; only one is read",
                             origin, next.start_mark.line + 1, next.start_mark.column + 1);
                json_decref(root);
                root = NULL;
            }
            yaml_document_delete(&next);
        }
    }
    yaml_parser_delete(&parser);
    if (root && json_is_null(root)) {
        json_decref(root);
        root = json_object(); /* an empty or all-comments file */
    }
    return root;
}
