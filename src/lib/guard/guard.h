/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec guard's internals. A shell command string goes through:
 *
 *   parse.c/word.c  the command → lists of simple commands ("segments") of
 *                   normalised words (quotes and escapes removed, $'..'
 *                   decoded, in-command variables expanded, braces
 *                   expanded by brace.c); $(..), `..`, (..), <(..),
 *                   heredocs and `sh -c STR` become nested lists
 *   view.c          each segment → the strings the patterns see: its raw
 *                   text, all words, the "core" (wrappers such as env/nice/
 *                   timeout stripped, command basename), and with canon.c
 *                   the canonical spellings and regrouped options; with
 *                   position.c what stands in command position
 *   forkbomb.c      functions that run themselves twice with | or &
 *   patterns.c      PCRE2 deny/allow patterns, compiled once, bounded matches
 *   scan.c          deny patterns over every string, allow exemptions
 *   paths.c         restrict_to_workspace: absolute, ~ and .. paths, cd
 *   guard.c         the public API
 *
 * It is a seatbelt, not the wall: a determined process gets past any string
 * check, so the sandbox (mounts, Landlock, seccomp) is what confines it. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* Limits on every input, so a hostile command or pattern cannot hang or
 * exhaust the check. Hitting one fails closed (an error: do not run). */
#define RF_GUARD_MAX_COMMAND (64u * 1024u)   /* bytes of a command */
#define RF_GUARD_MAX_PATTERNS 1000u          /* custom deny + allow */
#define RF_GUARD_MAX_PATTERN_LEN 4096u       /* bytes of one pattern */
#define RF_GUARD_MAX_DEPTH 16                /* nesting of $(..), sh -c, ... */
#define RF_GUARD_MAX_LISTS 1024u
#define RF_GUARD_MAX_SEGMENTS 4096u
#define RF_GUARD_MAX_WORDS 16384u
#define RF_GUARD_MAX_BRACE_WORDS 256u       /* words from one brace expansion */
#define RF_GUARD_MAX_HEREDOCS 64u           /* pending on one line */
#define RF_GUARD_MAX_VARS 256u               /* in-command assignments */
#define RF_GUARD_MAX_VALUE (16u * 1024u)     /* bytes of one assigned value */
#define RF_GUARD_MAX_EXPANSION (1024u * 1024u) /* bytes added by expansion */
#define RF_GUARD_MAX_OPT_VARIANTS 8u         /* per-option variants per segment */
#define RF_GUARD_MAX_MATCHES 4000000u       /* pattern matches per check */
#define RF_GUARD_MATCH_LIMIT 1000000u
#define RF_GUARD_DEPTH_LIMIT 10000u
#define RF_GUARD_HEAP_LIMIT_KIB 20000u

/* ── buf.c: a growing string; a failed allocation sticks in `failed` ── */
typedef struct rf_gbuf {
    char *s;
    size_t len, cap;
    bool failed;
} rf_gbuf;
void rf_guard_buf_add(rf_gbuf *b, const char *p, size_t n);
void rf_guard_buf_addc(rf_gbuf *b, char c);
void rf_guard_buf_fill(rf_gbuf *b, char c, size_t n);
void rf_guard_buf_reset(rf_gbuf *b);
void rf_guard_buf_adds(rf_gbuf *b, const char *s);
/* The string (never NULL unless allocation failed); the buffer is reset. */
char *rf_guard_buf_steal(rf_gbuf *b);
void rf_guard_buf_free(rf_gbuf *b);

/* ── parse.c / word.c: the command's structure ── */
/* In a word's path text: an expansion whose value the guard cannot know. */
#define RF_GUARD_UNKNOWN '\x01'
/* In a word's path text: $HOME (home is outside the workspace). */
#define RF_GUARD_HOME '\x02'

typedef enum {
    RF_GOP_END, RF_GOP_PIPE, RF_GOP_AND, RF_GOP_OR, RF_GOP_SEQ, RF_GOP_BG,
} rf_gop;

typedef enum {
    RF_GWORD_ARG,          /* a command word or argument */
    RF_GWORD_REDIR,        /* the target of < > >> <> >| &> */
    RF_GWORD_FD_DUP,       /* the target of >&N / <&N / >&- (not a path) */
    RF_GWORD_HEREDOC,      /* the delimiter of << / <<- (not a path) */
    RF_GWORD_HERESTRING,   /* the word of <<< (data fed to stdin) */
} rf_gword_kind;

typedef struct rf_gword {
    char *text;          /* normalised */
    char *ptext;         /* the same for the path check (see word.c) */
    rf_gword_kind kind;
    const char *op;      /* the redirection operator, static; NULL for ARG */
    bool tilde;          /* begins with an unquoted ~ (tilde expansion) */
} rf_gword;

typedef struct rf_gseg {
    rf_gword *words;
    size_t n_words, cap_words;
    int *children;       /* nested lists started inside this segment */
    size_t n_children, cap_children;
    size_t raw_start, raw_end; /* span in the list's source */
    rf_gop op;           /* the operator after this segment */
} rf_gseg;

typedef enum {
    RF_GLIST_TOP, RF_GLIST_SUBST, RF_GLIST_BACKTICK, RF_GLIST_PROCSUB,
    RF_GLIST_SUBSHELL, RF_GLIST_HEREDOC, RF_GLIST_SCRIPT,
} rf_glist_kind;

typedef struct rf_glist {
    const char *src;     /* the text this list was parsed from */
    size_t start, end;   /* its range in src */
    char *owned;         /* src when it is decoded text (backticks, sh -c) */
    rf_glist_kind kind;
    int parent;          /* list index, -1 for the top */
    size_t parent_seg;
    int depth;
    rf_gseg *segs;
    size_t n_segs, cap_segs;
} rf_glist;

typedef struct rf_gvar {
    char *name, *value;
} rf_gvar;

typedef struct rf_gheredoc {
    const char *src;     /* the buffer whose next newline starts the body */
    int list;
    size_t seg;
    char *delim;
    bool strip_tabs;
} rf_gheredoc;

typedef struct rf_gparse {
    rf_glist **lists;    /* [0] is the whole command; children follow parents */
    size_t n_lists, cap_lists;
    rf_gvar *vars;
    size_t n_vars;
    size_t expanded, n_segs, n_words;
    rf_gheredoc *heredocs;
    size_t n_heredocs;
    const char *limit;   /* the limit that was hit, or NULL */
    bool oom;
} rf_gparse;

/* Parse command into p (zeroed by the caller). Returns 0, or -1 with *err
 * set when a limit was hit or memory ran out; p must be freed either way. */
int rf_guard_parse(rf_gparse *p, const char *command, rf_error **err);
void rf_guard_parse_free(rf_gparse *p);

/* Internal to parse.c/word.c. */
int rf_guard_parse_list(rf_gparse *p, int li, size_t pos, char close, size_t *end);
int rf_guard_parse_new_list(rf_gparse *p, rf_glist_kind kind, int parent, size_t parent_seg,
                            const char *src, size_t start, size_t end, char *owned);
int rf_guard_lex_word(rf_gparse *p, int li, size_t si, size_t *pos, rf_gword_kind kind, const char *op);
int rf_guard_seg_add_word(rf_gparse *p, rf_gseg *s, rf_gbuf *b, rf_gword_kind kind, const char *op, bool tilde);
int rf_guard_seg_add_child(rf_gparse *p, rf_gseg *s, int child);
const char *rf_guard_var_get(const rf_gparse *p, const char *name, size_t n);
int rf_guard_var_set(rf_gparse *p, const char *name, size_t n, const char *value);
bool rf_guard_is_name_start(char c);
bool rf_guard_is_name_char(char c);

/* ── view.c: the strings a segment is matched as ── */
typedef struct rf_gview {
    char *raw;           /* the segment's source text */
    char *full;          /* every word, normalised, single-spaced */
    char *programs;      /* full with each program named canonically */
    char *core;          /* assignments, keywords and wrappers dropped */
    char *canon;         /* core with aliases applied and flags split */
    char **variants;     /* canon with options regrouped (NULL-terminated) */
    char **commands;     /* command position: each program with its words (position.c) */
    char **code;         /* inline code handed to another interpreter */
    char cmd[64];        /* the canonical command name, "" if none */
    size_t core_index;   /* words[] index of the command word, or SIZE_MAX */
    bool exempt;         /* an allow pattern matched this segment */
} rf_gview;

int rf_guard_view_build(const rf_glist *l, const rf_gseg *s, rf_gview *v);
void rf_guard_view_clear(rf_gview *v);
/* words[] index of the command word after assignments, keywords and
 * wrappers (env, nice, timeout, ...), or SIZE_MAX when there is none. */
size_t rf_guard_core_index(const rf_gseg *s);
/* The last path component of word (a pointer into it). */
const char *rf_guard_basename(const char *word);
bool rf_guard_is_assignment(const char *word);
bool rf_guard_is_shell(const char *name);

/* ── position.c: the strings command patterns and code see (NULL-terminated
 * lists appended to *out; programs[i] marks the wrapper chain) ── */
int rf_guard_position_commands(const rf_gseg *s, const bool *programs, size_t core, char ***out);
int rf_guard_position_code(const rf_gseg *s, size_t core, char ***out);

/* ── canon.c: the canonical words of one command (v[0] is its name) ── */
typedef struct rf_gwords {
    char **v; /* NULL-terminated */
    size_t n, cap;
} rf_gwords;
int rf_guard_words_push(rf_gwords *w, const char *s);
void rf_guard_words_free(rf_gwords *w);
const char *rf_guard_alias(const char *name);   /* bash → sh, apt-get → apt, ... */
int rf_guard_canonicalise(rf_gwords *w, const char *name);
/* The regrouped-option variants of w (NULL-terminated, malloc'd). */
int rf_guard_variants(const rf_gwords *w, char ***out);

/* ── brace.c: text with mask[i] == 0 for unquoted bytes → words ── */
int rf_guard_brace_expand(const char *text, const char *mask, size_t len, rf_gwords *out, bool *over);

/* ── patterns.c ── */
/* The set of bytes a string holds: a needle with a byte outside a
 * subject's set cannot occur in it, which rules most needles out without a
 * strstr. */
typedef struct rf_gbytes {
    unsigned long long bits[4];
} rf_gbytes;
size_t rf_guard_bytes_of(const char *s, rf_gbytes *out); /* returns strlen(s) */

#define RF_GUARD_MAX_NEEDLES 8
typedef struct rf_gpattern {
    char *source;        /* as written (the seed's text for a default) */
    pcre2_code *code;
    pcre2_code *command; /* a command pattern's anchored form, else NULL */
    const char *const *needles; /* a match holds one of these (static), or NULL */
    rf_gbytes needle_bytes[RF_GUARD_MAX_NEEDLES];
} rf_gpattern;

typedef struct rf_gpatterns {
    rf_gpattern *items;
    size_t n;
} rf_gpatterns;

/* The seed's default deny patterns; `command` is the anchored form that a
 * command pattern matches in command position (NULL: a text pattern).
 * Ends with { NULL, NULL }. */
typedef struct rf_guard_default {
    const char *source;
    const char *command;
    const char *const *needles; /* literals one of which every match holds */
} rf_guard_default;
extern const rf_guard_default rf_guard_defaults[];
/* rf_guard_new_for_shell for a guard that checks a single command
 * (`ringfence exec`): its patterns are not JIT-compiled, which for one
 * check costs more than it saves (0.3 to 0.6 ms of a start). */
rf_guard *rf_guard_new_for_one_command(const rf_policy *policy, rf_error **err);
/* rf_guard_new, with or without the JIT. */
rf_guard *rf_guard_new_jit(const rf_guard_options *opts, bool jit, rf_error **err);

/* With `jit`, each pattern is also JIT-compiled: worth it for a guard that
 * checks many commands, not for one (the JIT costs more than it saves). */
int rf_guard_patterns_add_defaults(rf_gpatterns *set, bool jit, rf_error **err);

/* Compile `sources` (NULL-terminated) into set; `what` names the list in
 * errors ("custom_deny_patterns"). */
int rf_guard_patterns_add(rf_gpatterns *set, const char *const *sources, const char *what, bool jit,
                          rf_error **err);
void rf_guard_patterns_free(rf_gpatterns *set);

typedef enum {
    RF_GMATCH_NO = 0, RF_GMATCH_YES = 1,
    RF_GMATCH_LIMIT = 2, /* a match or memory limit was hit: undecided */
} rf_gmatch;

static inline bool rf_guard_has_bytes(const rf_gbytes *have, const rf_gbytes *need)
{
    for (size_t k = 0; k < 4; k++)
        if ((have->bits[k] & need->bits[k]) != need->bits[k])
            return false;
    return true;
}

/* Can p match subject at all? false when it has needles and subject holds
 * none of them (much cheaper than a PCRE2 call). Inline: it runs for every
 * pattern on every string a command is seen as. */
static inline bool rf_guard_pattern_may_match(const rf_gpattern *p, const char *subject, const rf_gbytes *bytes)
{
    if (!p->needles)
        return true;
    for (size_t i = 0; p->needles[i]; i++)
        if (rf_guard_has_bytes(bytes, &p->needle_bytes[i]) && strstr(subject, p->needles[i]))
            return true;
    return false;
}
/* Match one pattern against subject; whole = the match must span all of it. */
rf_gmatch rf_guard_pattern_match(const rf_gpattern *p, const char *subject, size_t len, bool whole,
                                 pcre2_match_data *md, pcre2_match_context *mctx);

/* ── scan.c / paths.c ── */
struct rf_guard {
    bool deny_enabled;
    bool restrict_to_workspace;
    char *workspace;      /* normalised, absolute */
    char *cwd;            /* where relative paths start (in the workspace) */
    rf_gpatterns deny;    /* defaults first, then custom */
    rf_gpatterns allow;
    pcre2_match_context *mctx;
};

typedef struct rf_gcheck {
    const rf_guard *g;
    const char *command;
    rf_gparse parse;
    rf_gview **views;     /* views[list][seg] */
    pcre2_match_data *md;
    size_t matches;       /* pattern matches run, against RF_GUARD_MAX_MATCHES */
    /* the verdict found, if any */
    rf_guard_result result;
    const char *pattern;  /* borrowed from the guard */
    char *detail;
} rf_gcheck;

/* 0 with c->result set (ALLOWED or BLOCKED_*), -1 with *err on failure. */
int rf_guard_scan_patterns(rf_gcheck *c, rf_error **err);
int rf_guard_scan_paths(rf_gcheck *c, rf_error **err);
/* forkbomb.c: 1 with the verdict set, 0 none, -1 out of memory. */
int rf_guard_scan_forkbomb(rf_gcheck *c);
