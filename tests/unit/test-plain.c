/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plain.c: which commands the exec tool may run without a shell, and that
 * their words are the shell's. Checked against the real shells of this
 * machine: every word /bin/sh or bash runs itself must be refused, and a
 * plain command must split into exactly the words /bin/sh splits it into. */
#include "plan/build.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The argv joined as [w0][w1]..., or "NULL". */
static char *joined(const char *command)
{
    char **argv = rf_plan_plain_argv(command);
    if (!argv)
        return strdup("NULL");
    size_t n = 1;
    for (size_t i = 0; argv[i]; i++)
        n += strlen(argv[i]) + 2;
    char *out = calloc(1, n);
    for (size_t i = 0; out && argv[i]; i++) {
        strcat(out, "[");
        strcat(out, argv[i]);
        strcat(out, "]");
    }
    free(argv);
    return out;
}

static void is_plain(const char *command, const char *want)
{
    char *got = joined(command);
    char desc[256];
    snprintf(desc, sizeof desc, "plain: '%s'", command);
    is_str(got, want, desc);
    free(got);
}

static void test_examples(void)
{
    is_plain("ls -la src", "[ls][-la][src]");
    is_plain("  git\tstatus  --short\t", "[git][status][--short]");
    is_plain("python3 -m pytest tests/unit -k a,b", "[python3][-m][pytest][tests/unit][-k][a,b]");
    is_plain("make CFLAGS=-O2 -j4", "[make][CFLAGS=-O2][-j4]");
    is_plain("./configure --prefix=/usr", "[./configure][--prefix=/usr]");
    is_plain("/usr/bin/true", "[/usr/bin/true]");
    is_plain("date +%s user@host:a", "[date][+%s][user@host:a]");

    const char *shell[] = {
        "", " \t ", "ls *.c", "ls ?", "ls [ab]", "echo hi", "cd src", "true", "exit 3", "if", "{", "!",
        "time make", "FOO=1 make", "a=b", "ls ~/x", "ls #c", "ls $HOME", "ls `pwd`", "ls \"a b\"", "ls 'a'",
        "ls a\\ b", "ls; rm x", "ls && x", "ls | cat", "ls > out", "ls < in", "ls &", "(ls)", "ls\nrm x",
        "ls\rx", "ls caf\xc3\xa9", "ls {a,b}", "ls a^b", "source x", "[[ -e x ]]", "command ls", "exec ls",
        "kill 1", "printf x", "test -e x", "pwd", "type ls",
    };
    for (size_t i = 0; i < sizeof shell / sizeof *shell; i++)
        is_plain(shell[i], "NULL");
}

/* The words /bin/sh splits a plain command into, as [w0][w1]... */
static char *shell_split(const char *command)
{
    char script[1024];
    snprintf(script, sizeof script, "/bin/sh -c 'printf \"[%%s]\" %s'", command);
    FILE *f = popen(script, "r");
    if (!f)
        return NULL;
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    pclose(f);
    return strdup(buf);
}

static void test_same_words_as_the_shell(void)
{
    const char *commands[] = {
        "ls -la src", " \tgit  status\t--short ", "a,b c+d e@f g:h i%j k=l m.n o/p q-r s_t",
        "make V=1 -j4 --jobs=4", "x -- -y --z=", "%s %d %%", "1 2 3 4 5 6 7 8 9 10 11 12",
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char *mine = joined(commands[i]), *sh = shell_split(commands[i]);
        char desc[256];
        snprintf(desc, sizeof desc, "the words /bin/sh splits '%s' into", commands[i]);
        is_str(mine, sh ? sh : "(popen failed)", desc);
        free(mine);
        free(sh);
    }
}

/* Every word SHELL runs itself, among the names of /usr/bin, the words
 * plain.c knows and, for bash, all its builtins and keywords, is refused. */
static void test_shell_words_refused(const char *binary, const char *shell)
{
    if (access(binary, X_OK) != 0) {
        printf("ok %d - %s: its own words refused # SKIP %s is not installed\n", ++tap_n, shell, binary);
        return;
    }
    char script[1024];
    /* The candidates: the names in /usr/bin, bash's builtins and keywords
     * (when there is a bash), and the other shells' words we know of. */
    snprintf(script, sizeof script,
             "cd /usr/bin && names=$(ls) && set -f && %s -c 'for n in \"$@\"; do command -V \"$n\"; done' sh $names "
             "$(bash -c 'compgen -b -k' 2>/dev/null) if then fi do done case esac while until for in { } ! time "
             "function select coproc chdir source let 2>&1 | grep -E ' is (a )?(special )?(shell )?(builtin|keyword|"
             "reserved word)'",
             shell);
    FILE *f = popen(script, "r");
    if (!f)
        return (void)ok(0, "popen");
    char line[512];
    size_t seen = 0, refused = 0;
    char missed[512] = "";
    while (fgets(line, sizeof line, f)) {
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        seen++;
        char **argv = rf_plan_plain_argv(line);
        if (!argv)
            refused++;
        else if (strlen(missed) + strlen(line) + 2 < sizeof missed)
            strcat(strcat(missed, " "), line);
        free(argv);
    }
    pclose(f);
    char desc[256];
    snprintf(desc, sizeof desc, "%s: found its own words (%zu)", shell, seen);
    ok(seen >= 20, desc);
    snprintf(desc, sizeof desc, "%s: every word it runs itself is refused (missed:%s)", shell, missed);
    ok(seen == refused, desc);
}

int main(void)
{
    test_examples();
    test_same_words_as_the_shell();
    test_shell_words_refused("/bin/sh", "/bin/sh");
    test_shell_words_refused("/bin/bash", "/bin/bash");
    test_shell_words_refused("/bin/busybox", "/bin/busybox sh");
    done_testing();
}
