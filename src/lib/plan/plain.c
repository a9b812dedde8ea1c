/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Commands the shell would only split into words: `ls -la src`, `git
 * status`, `python3 -m pytest tests/unit`. The exec tool (MCP, `ringfence
 * exec`) runs such a command's words directly: one exec instead of two
 * (/bin/sh, then the program), about a third of a warm call on a small
 * machine. The meaning stays that of `/bin/sh -c COMMAND`, so anything the
 * shell would do more than split makes the command not plain:
 *
 *   - a byte outside [A-Za-z0-9] and _ - . / , + : @ % = (quotes,
 *     backslash, $, `, globs, ~, #, operators, redirections, newlines,
 *     non-ASCII): the shell parses or expands it;
 *   - an = in the first word: maybe an assignment;
 *   - a first word the shell runs itself: a builtin or reserved word of
 *     dash, bash or busybox ash, whichever /bin/sh is (`cd`, `echo`,
 *     `true`, `if`, ...).
 *
 * What is left is looked up in PATH and executed as the shell would. Where
 * that could fail (not found, not executable, no #! line) the shell runs
 * the command after all, so the error message and exit code are its own:
 * mcp/exec.c reruns a pool command whose exec failed (nothing ran), and
 * rf_plan_build_command checks the program on the host first. */
#include "plan/build.h"

#include <stdlib.h>
#include <string.h>

/* Sorted only for the reader. */
static const char *const shell_own_words[] = {
    "!", ".", ":", "[", "[[", "]]", "{", "}",
    "alias", "bg", "bind", "break", "builtin", "caller", "case", "cd", "chdir", "command", "compgen",
    "complete", "compopt", "continue", "coproc", "declare", "dirs", "disown", "do", "done", "echo",
    "elif", "else", "enable", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi",
    "for", "function", "getopts", "hash", "help", "history", "if", "in", "jobs", "kill", "let",
    "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
    "return", "select", "set", "shift", "shopt", "source", "suspend", "test", "then", "time", "times",
    "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
};

static bool plain_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("_-./,+:@%=", c));
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool shell_runs_itself(const char *word, size_t n)
{
    for (size_t i = 0; i < sizeof shell_own_words / sizeof *shell_own_words; i++)
        if (strlen(shell_own_words[i]) == n && !memcmp(shell_own_words[i], word, n))
            return true;
    return false;
}

/* The number of words, or 0 if the command is not plain. */
static size_t count_plain_words(const char *command)
{
    size_t words = 0;
    bool in_word = false;
    for (const char *p = command; *p; p++) {
        if (blank(*p)) {
            in_word = false;
            continue;
        }
        if (!plain_byte(*p))
            return 0;
        words += !in_word;
        in_word = true;
    }
    if (!words)
        return 0;
    const char *first = command + strspn(command, " \t");
    size_t n = strcspn(first, " \t");
    if (memchr(first, '=', n) || shell_runs_itself(first, n))
        return 0;
    return words;
}

char **rf_plan_plain_argv(const char *command)
{
    size_t words = count_plain_words(command);
    if (!words)
        return NULL;
    size_t len = strlen(command);
    /* One block: the pointers, then a copy of the command cut into words. */
    char **argv = malloc((words + 1) * sizeof *argv + len + 1);
    if (!argv)
        return NULL;
    char *p = memcpy((char *)(argv + words + 1), command, len + 1);
    size_t i = 0;
    while (*(p += strspn(p, " \t"))) {
        argv[i++] = p;
        p += strcspn(p, " \t");
        if (*p)
            *p++ = '\0';
    }
    argv[i] = NULL;
    return argv;
}
