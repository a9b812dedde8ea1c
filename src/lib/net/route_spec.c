/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A route's settings: the presets (each a layer a user could write by
 * hand, docs/network.md) and the checks the resolver runs on every name,
 * URL, header, source and rule, so a typo is an error at resolve time and
 * never a route that leaks or silently matches nothing. */
#include "net/route.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const anthropic_allow[] = { "POST /v1/messages*", "GET /v1/models*", NULL };
static const char *const anthropic_env[] = { "ANTHROPIC_BASE_URL={}", "ANTHROPIC_API_KEY=" RF_ROUTE_PLACEHOLDER,
                                             NULL };
static const char *const openai_allow[] = { "POST /v1/responses*", "POST /v1/chat/completions*",
                                            "GET /v1/models*", NULL };
static const char *const openai_env[] = { "OPENAI_BASE_URL={}/v1", "OPENAI_API_KEY=" RF_ROUTE_PLACEHOLDER, NULL };
static const char *const gemini_allow[] = { "POST /v1beta/models/*", "GET /v1beta/models*", NULL };
static const char *const gemini_env[] = { "GOOGLE_GEMINI_BASE_URL={}", "GEMINI_API_KEY=" RF_ROUTE_PLACEHOLDER,
                                          NULL };
/* git's smart HTTP: fetch and push, nothing of the web site or the API. */
static const char *const github_allow[] = { "GET /*/info/refs", "POST /*/git-upload-pack",
                                            "POST /*/git-receive-pack", NULL };
static const char *const github_env[] = { "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=url.{}/.insteadOf",
                                          "GIT_CONFIG_VALUE_0=https://github.com/", NULL };

static const rf_route_preset presets[] = {
    { "anthropic", "https://api.anthropic.com", "x-api-key", "env:ANTHROPIC_API_KEY", anthropic_allow,
      anthropic_env, "Claude Code, the Anthropic SDKs" },
    { "openai", "https://api.openai.com", "Authorization", "bearer:env:OPENAI_API_KEY", openai_allow, openai_env,
      "Codex CLI, the OpenAI SDKs" },
    { "gemini", "https://generativelanguage.googleapis.com", "x-goog-api-key", "env:GEMINI_API_KEY",
      gemini_allow, gemini_env, "Gemini CLI" },
    { "github", "https://github.com", "Authorization", "basic:x-access-token:env:GITHUB_TOKEN", github_allow,
      github_env, "git clone/fetch/push https://github.com/..." },
};

const rf_route_preset *rf_route_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].name, name))
            return &presets[i];
    return NULL;
}

const char *rf_route_preset_names(void)
{
    return "anthropic, openai, gemini, github";
}

/* Levenshtein distance, capped: names are short. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 32 || lb > 32)
        return 99;
    size_t d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

const char *rf_route_preset_suggest(const char *name)
{
    const char *best = NULL;
    size_t best_d = 3; /* further than two edits is no suggestion */
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        size_t d = distance(name, presets[i].name);
        if (d < best_d) {
            best_d = d;
            best = presets[i].name;
        }
    }
    return best;
}

/* Lower-case letters, digits and '-': the name is a path segment and,
 * upper-cased with '_', part of an environment variable's name. */
int rf_route_check_name(const char *name, const char **why)
{
    size_t len = strlen(name);
    if (len == 0 || len > RF_ROUTE_NAME_MAX) {
        *why = "a route's name has 1 to 32 characters";
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (!islower((unsigned char)name[i]) && !isdigit((unsigned char)name[i]) && name[i] != '-') {
            *why = "a route's name has only lower-case letters, digits and '-'";
            return -1;
        }
    if (name[0] == '-') {
        *why = "a route's name starts with a letter or digit";
        return -1;
    }
    return 0;
}

void rf_route_env_name(const char *name, char *buf, size_t size)
{
    int n = snprintf(buf, size, "RINGFENCE_ROUTE_%s_URL", name);
    for (int i = 16; n > 0 && i < n && (size_t)i < size; i++)
        buf[i] = buf[i] == '-' ? '_' : (char)toupper((unsigned char)buf[i]);
}

static int fail(const char **why, const char *text)
{
    *why = text;
    return -1;
}

static int parse_host_port(const char *s, size_t len, rf_route_url *out, const char **why)
{
    const char *colon = memchr(s, ':', len);
    size_t hlen = colon ? (size_t)(colon - s) : len;
    if (hlen == 0 || hlen >= sizeof out->host)
        return fail(why, "the URL needs a host name");
    for (size_t i = 0; i < hlen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '-' && c != '.')
            return fail(why, "the URL's host is a DNS name or an IPv4 address");
        out->host[i] = (char)tolower(c);
    }
    out->host[hlen] = '\0';
    out->port = out->tls ? 443 : 80;
    if (!colon)
        return 0;
    unsigned long port = 0;
    size_t plen = len - hlen - 1;
    if (plen == 0 || plen > 5)
        return fail(why, "bad port in the URL");
    for (size_t i = 0; i < plen; i++) {
        if (!isdigit((unsigned char)colon[1 + i]))
            return fail(why, "bad port in the URL");
        port = port * 10 + (unsigned long)(colon[1 + i] - '0');
    }
    if (port == 0 || port > 65535)
        return fail(why, "bad port in the URL");
    out->port = (uint16_t)port;
    return 0;
}

/* https://host[:port][/prefix]: an origin, optionally with a path prefix;
 * no user, query or fragment. http:// parses too: whether it is allowed
 * is the caller's check (allow_http). */
int rf_route_url_parse(const char *url, rf_route_url *out, const char **why)
{
    memset(out, 0, sizeof *out);
    const char *rest;
    if (!strncmp(url, "https://", 8)) {
        out->tls = true;
        rest = url + 8;
    } else if (!strncmp(url, "http://", 7)) {
        rest = url + 7;
    } else {
        return fail(why, "a route's URL starts with https://");
    }
    size_t alen = strcspn(rest, "/?#@");
    if (rest[alen] == '@')
        return fail(why, "no credentials in a route's URL: give them as --route-header");
    if (rest[alen] == '?' || rest[alen] == '#')
        return fail(why, "a route's URL has no query or fragment");
    if (parse_host_port(rest, alen, out, why) < 0)
        return -1;
    const char *prefix = rest + alen;
    size_t plen = strlen(prefix);
    while (plen && prefix[plen - 1] == '/')
        plen--;
    if (plen >= sizeof out->prefix || strpbrk(prefix, "?#") || !rf_route_path_safe(prefix, plen))
        return fail(why, "a route's URL path is a plain prefix like /v1 (no query, no '..')");
    for (size_t i = 0; i < plen; i++)
        if ((unsigned char)prefix[i] <= ' ' || (unsigned char)prefix[i] >= 0x7f)
            return fail(why, "a route's URL path has no spaces or control characters");
    memcpy(out->prefix, prefix, plen);
    out->prefix[plen] = '\0';
    return 0;
}

/* An HTTP field name: a token (RFC 9110 5.1). */
static bool is_tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

int rf_route_check_header_name(const char *name, const char **why)
{
    size_t len = strlen(name);
    if (len == 0 || len > 64)
        return fail(why, "a header name has 1 to 64 characters");
    for (size_t i = 0; i < len; i++)
        if (!is_tchar((unsigned char)name[i]))
            return fail(why, "a header name is a token: letters, digits, '-' (no CR, LF, NUL or spaces)");
    static const char *const reserved[] = { "host", "content-length", "transfer-encoding", "connection",
                                            "te", "upgrade", "trailer", "keep-alive", "expect", NULL };
    for (size_t i = 0; reserved[i]; i++)
        if (!strcasecmp(name, reserved[i]))
            return fail(why, "the proxy sets this header itself");
    return 0;
}

/* [bearer:|basic:USER:](env:VAR|file:/PATH|cmd:COMMAND) */
int rf_route_check_source(const char *source, const char **why)
{
    for (const char *c = source; *c; c++)
        if (*c == '\r' || *c == '\n')
            return fail(why, "CR or LF in a header's source");
    const char *s = source;
    if (!strncmp(s, "bearer:", 7)) {
        s += 7;
    } else if (!strncmp(s, "basic:", 6)) {
        const char *colon = strchr(s + 6, ':');
        if (!colon || colon == s + 6)
            return fail(why, "basic: needs a user name, e.g. basic:x-access-token:env:GITHUB_TOKEN");
        s = colon + 1;
    }
    if (!strncmp(s, "env:", 4)) {
        if (!s[4])
            return fail(why, "env: needs a variable's name, e.g. env:ANTHROPIC_API_KEY");
        for (const char *c = s + 4; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_')
                return fail(why, "env:VAR: a variable's name has letters, digits and '_'");
        return 0;
    }
    if (!strncmp(s, "file:", 5))
        return s[5] == '/' ? 0 : fail(why, "file: needs an absolute path, e.g. file:/home/me/.config/key");
    if (!strncmp(s, "cmd:", 4))
        return s[4] ? 0 : fail(why, "cmd: needs a command, e.g. cmd:gh auth token");
    return fail(why, "a header's source is env:VAR, file:PATH or cmd:COMMAND (optionally after bearer: "
                     "or basic:USER:)");
}

/* "METHOD /glob": METHOD upper case or "*"; the glob's '*' matches any
 * characters, '/' included. */
int rf_route_check_rule(const char *rule, const char **why)
{
    const char *sp = strchr(rule, ' ');
    if (!sp || sp == rule || sp[1] != '/')
        return fail(why, "a rule is \"METHOD /path\", e.g. \"POST /v1/messages*\"");
    if (!(sp - rule == 1 && rule[0] == '*'))
        for (const char *c = rule; c < sp; c++)
            if (!isupper((unsigned char)*c))
                return fail(why, "a rule's method is upper case (GET, POST...) or *");
    for (const char *c = sp + 1; *c; c++)
        if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || *c == '?' || *c == '[' || *c == '\\')
            return fail(why, "a rule's path has no spaces, '?', '[' or '\\' (only '*' is special)");
    return 0;
}
