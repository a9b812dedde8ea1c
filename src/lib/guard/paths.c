/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* restrict_to_workspace for shell commands (seed 001): an absolute path
 * outside the working directory blocks the command, except the safe device
 * paths. Beyond the seed's absolute paths this also checks
 *   ~, ~user, ~/x, $HOME   (home is outside the workspace)
 *   ../x                   (resolved against the working directory, which
 *                          `cd DIR &&` moves; when a cd may or may not have
 *                          happened, against every directory it may be in)
 *   --opt=/x, -I/x, a:/b   (paths inside a word)
 *   file:///x              (other URLs are not paths)
 * and leaves out what is not a path: the pattern of grep/sed/awk/tr, the
 * delimiter of a heredoc, >&2, and /usr/bin/... as the command itself.
 *
 * All of it is lexical. Symlinks, variables set outside the command and
 * programs that read paths from files are beyond a string check; the
 * sandbox's mounts and Landlock rules are what hold there. */
#include "guard/guard.h"
#include "util/error.h"
#include "util/path.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CWDS 16

/* The directories the shell may be in: borrowed from the walk's pool. */
typedef struct cwdset {
    const char *dirs[MAX_CWDS];
    size_t n;
    bool unknown; /* a cd to somewhere the guard cannot know */
} cwdset;

typedef struct walk {
    rf_gcheck *c;
    rf_gwords pool;    /* owns the directory strings */
    size_t pool_bytes; /* bounded: past the limit, cd makes the cwd unknown */
} walk;

#define MAX_POOL_BYTES (4u * 1024u * 1024u)

static const char *const safe_paths[] = {
    "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", NULL,
};

static const char *const system_bin[] = {
    "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin", NULL,
};

static void set_add(cwdset *s, const char *dir)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->dirs[i], dir))
            return;
    if (s->n == MAX_CWDS)
        s->unknown = true; /* too many possibilities: stop trusting any */
    else
        s->dirs[s->n++] = dir;
}

static void set_union(cwdset *a, const cwdset *b)
{
    for (size_t i = 0; i < b->n; i++)
        set_add(a, b->dirs[i]);
    a->unknown = a->unknown || b->unknown;
}

static int block(walk *w, const char *path)
{
    char *d = strdup(path);
    if (!d)
        return -1;
    for (char *p = d; *p; p++)
        *p = *p == RF_GUARD_UNKNOWN ? '?' : *p == RF_GUARD_HOME ? '~' : *p;
    w->c->result = RF_GUARD_BLOCKED_PATH;
    w->c->detail = d;
    return 1;
}

static bool inside(const rf_guard *g, const char *norm)
{
    for (size_t i = 0; safe_paths[i]; i++)
        if (!strcmp(norm, safe_paths[i]))
            return true;
    return rf_path_is_beneath(norm, g->workspace);
}

static bool has_dotdot(const char *f)
{
    for (const char *p = f; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return true;
        p += n;
        while (*p == '/')
            p++;
    }
    return false;
}

typedef struct cand {
    const rf_gword *word;
    bool at_word_start; /* the candidate begins the word */
    bool whole_word;    /* the candidate is the word */
} cand;

/* ~ and ~user expand only unquoted at the start of a word; ~/ inside a
 * string is still taken for home (expanduser("~/.ssh") in a script). */
static int check_tilde(walk *w, const char *f, const cand *k)
{
    bool expands = k->at_word_start && k->word->tilde;
    if (f[0] == RF_GUARD_HOME || f[1] == '/' || (expands && (f[1] == '\0' || isalnum((unsigned char)f[1]) ||
                                                            f[1] == '_')))
        return block(w, f);
    return 0;
}

static int check_relative(walk *w, const char *f, const cwdset *in)
{
    if (in->unknown)
        return block(w, f);
    for (size_t i = 0; i < in->n; i++) {
        char *j = rf_path_join(in->dirs[i], f);
        if (!j)
            return -1;
        bool ok = inside(w->c->g, j);
        free(j);
        if (!ok)
            return block(w, f);
    }
    return 0;
}

/* One path candidate f (NUL-terminated). */
static int check_candidate(walk *w, const char *f, const cand *k, const cwdset *in)
{
    if (f[0] == '~' || f[0] == RF_GUARD_HOME)
        return check_tilde(w, f, k);
    /* A lone / or .. inside other text ("a / b") is not a path. */
    if ((!strcmp(f, "/") || !strcmp(f, "..")) && !k->whole_word)
        return 0;
    if (f[0] == '/') {
        char *norm = rf_path_normalize(f);
        if (!norm)
            return -1;
        bool ok = inside(w->c->g, norm);
        free(norm);
        return ok ? 0 : block(w, f);
    }
    return has_dotdot(f) ? check_relative(w, f, in) : 0;
}

/* Inside a run, these separate pieces that may each be a path:
 * --file=/x, PATH=/a:/b, --dirs=/a,/b, $UNKNOWN/x. (Brace expansion has
 * already made one word per alternative: see brace.c.) */
static bool is_soft(char ch)
{
    return ch == ',' || ch == '=' || ch == ':' || ch == RF_GUARD_UNKNOWN;
}

/* A URL is not a path, except file://. Returns 1 when r is a URL (and
 * sets *file to its path for file://), 0 otherwise. */
static int url(const char *r, const char **file)
{
    const char *sep = strstr(r, "://");
    if (!sep || sep == r)
        return 0;
    for (const char *p = r; p < sep; p++)
        if (!isalnum((unsigned char)*p) && !strchr("+.-", *p))
            return 0;
    *file = NULL;
    if (sep - r == 4 && !strncasecmp(r, "file", 4))
        *file = strchr(sep + 3, '/');
    return 1;
}

/* A run of a word between blanks, quotes and operators. */
static int check_run(walk *w, char *r, const cand *k, const cwdset *in)
{
    const char *file;
    if (url(r, &file))
        return file ? check_candidate(w, file, &(cand){ k->word, false, false }, in) : 0;
    const char *at = strchr(r, '@');
    if (at && strchr(at, ':')) /* user@host:path is on another machine */
        return 0;
    int rc = check_candidate(w, r, k, in);
    if (rc == 0 && r[0] == '-' && isalpha((unsigned char)r[1]) && r[2] && strchr("/~.", r[2]) && r[3])
        rc = check_candidate(w, r + 2, &(cand){ k->word, false, false }, in); /* -I/usr/include */
    if (rc || !r[strcspn(r, ",=:\x01")])
        return rc;
    /* The pieces between , = : and unknown expansions. */
    for (char *p = r; rc == 0 && *p;) {
        size_t n = 0;
        while (p[n] && !is_soft(p[n]))
            n++;
        bool after_unknown = p > r && p[-1] == RF_GUARD_UNKNOWN;
        char saved = p[n];
        p[n] = '\0';
        if (!after_unknown && n > 0)
            rc = check_candidate(w, p, &(cand){ k->word, k->at_word_start && p == r, false }, in);
        p[n] = saved;
        p += n + (saved != '\0');
    }
    return rc;
}

static bool is_hard(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || strchr("'\"`;|&<>()", ch);
}

static int check_word(walk *w, const rf_gword *word, const cwdset *in)
{
    char *t = strdup(word->ptext);
    if (!t)
        return -1;
    size_t len = strlen(t);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < len;) {
        if (is_hard(t[i])) {
            i++;
            continue;
        }
        size_t n = 0;
        while (i + n < len && !is_hard(t[i + n]))
            n++;
        t[i + n] = '\0';
        rc = check_run(w, t + i, &(cand){ word, i == 0, i == 0 && n == len }, in);
        i += n + 1;
    }
    free(t);
    return rc;
}

static bool is_system_program(const char *ptext)
{
    char *norm = rf_path_normalize(ptext);
    bool yes = false;
    for (size_t i = 0; norm && system_bin[i] && !yes; i++)
        yes = rf_path_is_beneath(norm, system_bin[i]) && strcmp(norm, system_bin[i]);
    free(norm);
    return yes;
}

/* Programs whose first operand (or -e/-F/-v value) is a pattern or a
 * script, not a path: `sed -n '/^#/d'`, `awk -F/ ...`, `tr / _`. */
static const struct pattern_program {
    const char *const *names;
    const char *pattern_opts; /* their value is a pattern */
    const char *script_opts;  /* when given, the first operand is a file */
    const char *value_opts;   /* other options that take a value */
    bool all_operands;        /* every operand is a pattern (tr) */
} pattern_programs[] = {
    { (const char *const[]){ "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", NULL }, "e", "ef", "fmABCDd", false },
    { (const char *const[]){ "sed", NULL }, "e", "ef", "fl", false },
    { (const char *const[]){ "awk", "gawk", "mawk", "nawk", NULL }, "Fv", "f", "f", false },
    { (const char *const[]){ "tr", NULL }, "", "", "", true },
};

static const struct pattern_program *pattern_program(const char *name)
{
    for (size_t i = 0; i < sizeof pattern_programs / sizeof pattern_programs[0]; i++)
        for (size_t k = 0; pattern_programs[i].names[k]; k++)
            if (!strcmp(name, pattern_programs[i].names[k]))
                return &pattern_programs[i];
    return NULL;
}

/* A short option word: mark its value (attached or the next word) when the
 * option takes a pattern; returns how many extra words it consumed. */
static size_t short_option(const char *t, const struct pattern_program *pp, bool *skip, size_t j,
                           size_t n, bool *script_given)
{
    for (size_t k = 1; t[k]; k++) {
        bool pat = strchr(pp->pattern_opts, t[k]) != NULL;
        *script_given = *script_given || strchr(pp->script_opts, t[k]);
        if (!pat && !strchr(pp->value_opts, t[k]))
            continue;
        if (t[k + 1]) {
            skip[j] = skip[j] || pat;
            return 0;
        }
        if (j + 1 < n)
            skip[j + 1] = pat;
        return 1;
    }
    return 0;
}

static void long_option(const char *t, bool *skip, size_t j, size_t n, bool *script_given, size_t *extra)
{
    static const char *const pat[] = { "--regexp", "--expression", "--field-separator", "--assign", NULL };
    size_t len = strcspn(t, "=");
    bool is_pat = false;
    for (size_t i = 0; pat[i]; i++)
        is_pat = is_pat || (strlen(pat[i]) == len && !strncmp(t, pat[i], len));
    bool is_file = len == 6 && !strncmp(t, "--file", 6);
    *script_given = *script_given || is_file || (is_pat && len < 17 && strncmp(t, "--assign", 8) &&
                                                 strncmp(t, "--field", 7));
    if (t[len] == '=') {
        skip[j] = is_pat;
    } else if ((is_pat || is_file) && j + 1 < n) {
        skip[j + 1] = is_pat;
        *extra = 1;
    }
}

/* skip[i] for words that are patterns of grep/sed/awk/tr. */
static void pattern_operands(const rf_gseg *s, size_t core, bool *skip)
{
    if (core == SIZE_MAX)
        return;
    const struct pattern_program *pp = pattern_program(rf_guard_basename(s->words[core].text));
    if (!pp)
        return;
    bool script_given = false, end_opts = false;
    size_t first = SIZE_MAX;
    for (size_t j = core + 1; j < s->n_words; j++) {
        const char *t = s->words[j].text;
        if (s->words[j].kind != RF_GWORD_ARG)
            continue;
        if (!end_opts && !strcmp(t, "--")) {
            end_opts = true;
        } else if (!end_opts && t[0] == '-' && t[1] == '-') {
            size_t extra = 0;
            long_option(t, skip, j, s->n_words, &script_given, &extra);
            j += extra;
        } else if (!end_opts && t[0] == '-' && t[1]) {
            j += short_option(t, pp, skip, j, s->n_words, &script_given);
        } else if (pp->all_operands) {
            skip[j] = true;
        } else if (first == SIZE_MAX) {
            first = j;
        }
    }
    if (first != SIZE_MAX && !script_given)
        skip[first] = true;
}

static int walk_list(walk *w, size_t li, const cwdset *in);

/* The directories after `cd TARGET` from each of `in`. */
static int cd_apply(walk *w, const rf_gseg *s, size_t core, const cwdset *in, cwdset *out)
{
    *out = (cwdset){ 0 };
    const char *name = rf_guard_basename(s->words[core].text);
    const char *target = NULL;
    for (size_t j = core + 1; j < s->n_words && !target; j++)
        if (s->words[j].kind == RF_GWORD_ARG && (s->words[j].ptext[0] != '-' || !s->words[j].ptext[1]))
            target = s->words[j].ptext;
    if (!strcmp(name, "popd") || !target || !strcmp(target, "-") || strchr(target, RF_GUARD_UNKNOWN) ||
        target[0] == '~') {
        out->unknown = true; /* home, OLDPWD, the stack, a variable */
        return 0;
    }
    out->unknown = in->unknown;
    for (size_t i = 0; i < in->n && !out->unknown; i++) {
        char *d = rf_path_join(in->dirs[i], target);
        int r = d ? rf_guard_words_push(&w->pool, d) : -1;
        w->pool_bytes += d ? strlen(d) : 0;
        free(d);
        if (r < 0)
            return -1;
        set_add(out, w->pool.v[w->pool.n - 1]);
        out->unknown = out->unknown || w->pool_bytes > MAX_POOL_BYTES;
    }
    return 0;
}

static bool is_cd(const rf_gseg *s, size_t core)
{
    if (core == SIZE_MAX)
        return false;
    const char *name = s->words[core].text;
    return !strcmp(name, "cd") || !strcmp(name, "pushd") || !strcmp(name, "popd");
}

static bool is_bare_cd(const rf_gseg *s, size_t core)
{
    if (core == SIZE_MAX || strcmp(s->words[core].text, "cd"))
        return false;
    for (size_t j = core + 1; j < s->n_words; j++)
        if (s->words[j].kind == RF_GWORD_ARG && (s->words[j].text[0] != '-' || !strcmp(s->words[j].text, "-")))
            return false;
    return true;
}

static int check_segment(walk *w, size_t li, size_t si, const cwdset *in)
{
    const rf_gseg *s = &w->c->parse.lists[li]->segs[si];
    size_t core = w->c->views[li][si].core_index;
    bool *skip = calloc(s->n_words + 1, sizeof(*skip));
    if (!skip)
        return -1;
    pattern_operands(s, core, skip);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n_words; i++) {
        const rf_gword *word = &s->words[i];
        if (skip[i] || word->kind == RF_GWORD_FD_DUP || word->kind == RF_GWORD_HEREDOC ||
            (i == core && is_system_program(word->ptext)))
            continue;
        rc = check_word(w, word, in);
    }
    free(skip);
    for (size_t k = 0; rc == 0 && k < s->n_children; k++)
        rc = walk_list(w, (size_t)s->children[k], in);
    return rc;
}

/* Which directories each segment may start in, following && || ; & | as
 * the shell does: a cd in a pipeline or a background job changes nothing
 * after it; after `cd x ||` only the failed cd's directory remains. */
static int walk_list(walk *w, size_t li, const cwdset *in)
{
    const rf_glist *l = w->c->parse.lists[li];
    cwdset succ = *in, fail = { 0 }, start = *in, pipe_in = *in, input;
    rf_gop prev = RF_GOP_SEQ, eff = RF_GOP_SEQ;
    for (size_t si = 0; si < l->n_segs; si++) {
        const rf_gseg *s = &l->segs[si];
        if (prev == RF_GOP_PIPE) {
            input = pipe_in;
        } else {
            eff = prev;
            if (prev == RF_GOP_BG) /* the job before & changed nothing here */
                succ = start, fail = (cwdset){ 0 };
            input = eff == RF_GOP_AND ? succ : eff == RF_GOP_OR ? fail : succ;
            if (eff != RF_GOP_AND && eff != RF_GOP_OR) {
                set_union(&input, &fail);
                start = input;
            }
            pipe_in = input;
        }
        int rc = check_segment(w, li, si, &input);
        if (rc)
            return rc;
        if (is_bare_cd(s, w->c->views[li][si].core_index))
            return block(w, "~"); /* cd alone goes home */
        cwdset ok = input;
        size_t core = w->c->views[li][si].core_index;
        bool piped = prev == RF_GOP_PIPE || s->op == RF_GOP_PIPE;
        if (!piped && is_cd(s, core) && cd_apply(w, s, core, &input, &ok) < 0)
            return -1;
        if (eff == RF_GOP_AND) {
            succ = ok;
            set_union(&fail, &input);
        } else if (eff == RF_GOP_OR) {
            set_union(&succ, &ok);
            fail = input;
        } else {
            succ = ok;
            fail = input;
        }
        prev = s->op;
    }
    return 0;
}

int rf_guard_scan_paths(rf_gcheck *c, rf_error **err)
{
    if (!c->g->restrict_to_workspace)
        return 0;
    walk w = { .c = c };
    cwdset start = { .dirs = { c->g->cwd }, .n = 1 };
    int rc = walk_list(&w, 0, &start);
    rf_guard_words_free(&w.pool);
    if (rc < 0)
        return rf_error_set(err, ENOMEM, "checking the command's paths");
    return 0;
}
