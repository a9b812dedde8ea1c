/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's pure parts: path normalisation, what the sandbox shows at
 * a path (observe/classify.c, against a plan's mounts built here), and the
 * rules learn suggests (learn/suggest.c): grouping, read-write only where
 * written, secrets flagged, PATH kept when it names an exposed directory. */
#include "tap.h"
#include "observe/observe.h"
#include "learn/suggest.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void normalise(void)
{
    char a[] = "/a//b/./c/../d/", b[] = "/../..", c[] = "rel/x", d[] = "/x/..";
    ok(rf_view_normalise(a) && !strcmp(a, "/a/b/d"), "// . .. collapsed");
    ok(rf_view_normalise(b) && !strcmp(b, "/"), ".. above / stays at /");
    ok(!rf_view_normalise(c), "a relative path is not classified");
    ok(rf_view_normalise(d) && !strcmp(d, "/"), "/x/.. is /");
}

static void classify(void)
{
    char home[128], inst[128], hidden[160], host[PATH_MAX], gitconfig[160];
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(inst, sizeof inst, "%s/inst", root);
    snprintf(hidden, sizeof hidden, "%s/.pyenv", home);
    snprintf(gitconfig, sizeof gitconfig, "%s/.gitconfig", home);
    mkdir(home, 0755);
    mkdir(inst, 0755);
    mkdir(hidden, 0755);
    fclose(fopen(gitconfig, "w"));
    char hooks[160], hook[200];
    snprintf(hooks, sizeof hooks, "%s/hooks", inst);
    snprintf(hook, sizeof hook, "%s/pre-commit", hooks);
    mkdir(hooks, 0755);
    rf_mount m[] = {
        { .type = RF_MOUNT_BIND, .source = (char *)"/usr", .target = (char *)"/usr" },
        { .type = RF_MOUNT_TMPFS, .target = (char *)"/tmp", .writable = true },
        { .type = RF_MOUNT_BIND, .source = inst, .target = inst, .writable = true },
        { .type = RF_MOUNT_RO_SELF, .target = hooks, .why = "protected" },
    };
    char envh[160];
    snprintf(envh, sizeof envh, "HOME=%s", inst);
    char *env[] = { envh, NULL };
    rf_plan plan = { .mounts = m, .n_mounts = 4, .env = env };
    rf_view *v = rf_view_new(&plan, home);
    is_int(rf_view_classify(v, hidden, false, host, sizeof host), RF_SEEN_HIDDEN,
           "a path of the host under the private /tmp: hidden");
    is_int(rf_view_classify(v, "/usr/bin/sh", false, host, sizeof host), RF_SEEN_VISIBLE, "/usr/bin/sh: visible");
    is_int(rf_view_classify(v, "/usr/bin/sh", true, host, sizeof host), RF_SEEN_READONLY,
           "a write to /usr: read-only");
    is_int(rf_view_classify(v, "/proc/self/status", false, host, sizeof host), RF_SEEN_IGNORED, "/proc: ignored");
    is_int(rf_view_classify(v, "/nonexistent-rf-test", false, host, sizeof host), RF_SEEN_IGNORED,
           "nothing on the host: nothing to suggest");
    char in_home[200];
    snprintf(in_home, sizeof in_home, "%s/.gitconfig", inst);
    is_int(rf_view_classify(v, in_home, false, host, sizeof host), RF_SEEN_HOME,
           "the sandbox's own ~/.gitconfig, which the caller's home has: home");
    is_str(host, gitconfig, "and the host path is the caller's");
    is_int(rf_view_classify(v, "/", false, host, sizeof host), RF_SEEN_IGNORED, "a parent of mounts: ignored");
    is_int(rf_view_classify(v, "/usr/rf-new-file", true, host, sizeof host), RF_SEEN_READONLY,
           "a new file in a read-only directory: read-only");
    is_int(rf_view_classify(v, hook, true, host, sizeof host), RF_SEEN_PROTECTED,
           "a new hook under a protected path: protected");
    char other[200];
    snprintf(other, sizeof other, "%s/new-file", inst);
    is_int(rf_view_classify(v, other, true, host, sizeof host), RF_SEEN_IGNORED,
           "a new file in a writable directory: nothing to say");
    rf_view_free(v);
}

static json_t *suggest(const char *obs, const char *net, char *const *envp)
{
    char *s = rf_observe_suggest(obs, net, "/home/u", envp, NULL);
    json_t *j = s ? json_loads(s, 0, NULL) : NULL;
    free(s);
    return j;
}

static void rules(void)
{
    char g[PATH_MAX];
    rf_suggest_group("/home/u/.pyenv/versions/3.12/bin/python3", "/home/u", g, sizeof g);
    is_str(g, "/home/u/.pyenv", "a dot-directory of the home is one rule");
    rf_suggest_group("/home/u/.config/git/config", "/home/u", g, sizeof g);
    is_str(g, "/home/u/.config/git", "~/.config/NAME, not all of ~/.config");
    rf_suggest_group("/home/u/.local/share/uv/python/x", "/home/u", g, sizeof g);
    is_str(g, "/home/u/.local/share/uv", "~/.local/share/NAME");
    rf_suggest_group("/opt/node/bin/node", "/home/u", g, sizeof g);
    is_str(g, "/opt/node", "/opt/NAME");
    rf_suggest_group("/etc/foo/bar.conf", "/home/u", g, sizeof g);
    is_str(g, "/etc/foo/bar.conf", "/etc: the file itself");
    ok(rf_suggest_flag("/home/u/.ssh/id_ed25519", "/home/u") != NULL, "~/.ssh/id_* is flagged");
    ok(rf_suggest_flag("/home/u/.aws/credentials", "/home/u") != NULL, "~/.aws is flagged");
    ok(rf_suggest_flag("/home/u/.config/gh/hosts.yml", "/home/u") != NULL, "~/.config/gh is flagged");
    ok(rf_suggest_flag("/var/run/docker.sock", "/home/u") != NULL, "the docker socket is flagged");
    ok(rf_suggest_flag("/home/u/.bashrc", "/home/u") != NULL, "a shell rc file is flagged");
    ok(rf_suggest_flag("/home/u/.pyenv/shims/python3", "/home/u") == NULL, "~/.pyenv is not");

    char *envp[] = { (char *)"PATH=/home/u/.pyenv/shims:/usr/bin", (char *)"PYENV_ROOT=/home/u/.pyenv",
                     (char *)"NVM_DIR=/elsewhere", NULL };
    json_t *j = suggest("{\"paths\":["
                        "{\"path\":\"/home/u/.pyenv/shims/python3\",\"host\":\"/home/u/.pyenv/shims/python3\","
                        "\"seen\":\"hidden\",\"write\":false},"
                        "{\"path\":\"/home/u/.pyenv/version\",\"host\":\"/home/u/.pyenv/version\","
                        "\"seen\":\"hidden\",\"write\":false},"
                        "{\"path\":\"/home/u/.cache/x/y\",\"host\":\"/home/u/.cache/x/y\",\"seen\":\"hidden\","
                        "\"write\":true},"
                        "{\"path\":\"/i/.gitconfig\",\"host\":\"/home/u/.gitconfig\",\"seen\":\"home\"},"
                        "{\"path\":\"/home/u/.ssh/id_rsa\",\"host\":\"/home/u/.ssh/id_rsa\",\"seen\":\"hidden\"}]}",
                        "{\"blocked_destinations\":[{\"host\":\"pypi.org\",\"port\":443,\"reason\":\"x\"}]}", envp);
    json_t *e = json_object_get(j, "expose");
    is_int(json_array_size(e), 4, "two ~/.pyenv paths are one rule: four rules");
    size_t i;
    json_t *r;
    int seen = 0;
    json_array_foreach(e, i, r) {
        const char *src = json_string_value(json_object_get(r, "source"));
        const char *mode = json_string_value(json_object_get(r, "mode"));
        if (!strcmp(src, "/home/u/.pyenv")) {
            seen |= 1;
            ok(!strcmp(mode, "ro") && json_integer_value(json_object_get(r, "count")) == 2,
               "~/.pyenv: read-only, two paths");
        } else if (!strcmp(src, "/home/u/.cache/x")) {
            seen |= 2;
            ok(!strcmp(mode, "rw"), "a written cache: read-write");
        } else if (!strcmp(src, "/home/u/.gitconfig")) {
            seen |= 4;
            is_str(json_string_value(json_object_get(r, "target")), "/i/.gitconfig",
                   "~/.gitconfig: at the sandbox's own home");
        } else if (!strcmp(src, "/home/u/.ssh")) {
            seen |= 8;
            ok(json_object_get(r, "flagged") != NULL, "~/.ssh: flagged");
        }
    }
    is_int(seen, 15, "every rule is there");
    json_t *env = json_object_get(j, "keep_env");
    ok(json_object_get(env, "PATH") != NULL, "PATH kept: it names ~/.pyenv/shims");
    ok(json_object_get(env, "PYENV_ROOT") != NULL, "PYENV_ROOT kept: it names ~/.pyenv");
    ok(json_object_get(env, "NVM_DIR") == NULL, "NVM_DIR not: no rule for it");
    is_str(json_string_value(json_object_get(json_array_get(json_object_get(j, "allow_domain"), 0), "name")),
           "pypi.org", "a refused name: allow_domain");
    json_decref(j);
    ok(rf_observe_suggest("not json", NULL, "/home/u", envp, NULL) == NULL, "bad observations: an error");
}

/* The narrowest rule: a table of what was seen, the caller's home and
 * workspace, and the source suggested, the wider one refused and why. */
static void narrowest(void)
{
    static const struct {
        const char *host, *ws, *source, *wider, *why;
    } t[] = {
        { "/home", "/tmp/x/ws", "", "/home", "a top-level directory as a whole" },
        { "/", "/tmp/x/ws", "", "/", "the whole host" },
        { "/etc", "/tmp/x/ws", "", "/etc", "a top-level directory as a whole" },
        { "/usr", "/tmp/x/ws", "", "/usr", "a top-level directory as a whole" },
        { "/root", "/tmp/x/ws", "", "/root", "a top-level directory as a whole" },
        { "/tmp/x/hostdata/config.txt", "/tmp/x/ws", "/tmp/x/hostdata", "/tmp/x",
          "it holds the workspace (and what lies beside it)" },
        { "/tmp/x/notes.txt", "/tmp/x/ws", "/tmp/x/notes.txt", "/tmp/x",
          "it holds the workspace (and what lies beside it)" },
        { "/tmp/x", "/tmp/x/ws", "", "/tmp/x", "it holds the workspace (and what lies beside it)" },
        { "/tmp/x/ws", "/tmp/x/ws", "", "/tmp/x/ws", "it holds the workspace (and what lies beside it)" },
        { "/home/u", "/tmp/x/ws", "", "/home/u", "your home directory as a whole" },
        { "/srv/data/a/b.csv", "/srv/data/ws", "/srv/data/a", "/srv/data",
          "it holds the workspace (and what lies beside it)" },
        { "/opt/node/bin/node", "/tmp/x/ws", "/opt/node", "", NULL },
        { "/srv/data/a/b.csv", "/tmp/x/ws", "/srv/data", "", NULL },
        { "/home/u/.pyenv/shims/python3", "/home/u/proj", "/home/u/.pyenv", "", NULL },
        { "/home/u/notes.txt", "/home/u/proj", "/home/u/notes.txt", "", NULL },
        { "/etc/foo.conf", NULL, "/etc/foo.conf", "", NULL },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char out[PATH_MAX], wider[PATH_MAX], desc[512];
        const char *why = rf_suggest_source(t[i].host, "/home/u", t[i].ws, out, sizeof out, wider, sizeof wider);
        snprintf(desc, sizeof desc, "%s (workspace %s): %s%s%s", t[i].host, t[i].ws ? t[i].ws : "-",
                 t[i].source[0] ? t[i].source : "nothing", t[i].why ? ", not " : "", t[i].why ? t[i].wider : "");
        is_str(out, t[i].source, desc);
        is_str(wider, t[i].wider, desc);
        is_str(why ? why : "(none)", t[i].why ? t[i].why : "(none)", desc);
    }
    ok(rf_suggest_flag("/home/other/.cache/x", "/home/u") != NULL, "another user's home is flagged");
    ok(rf_suggest_flag("/home/u/src/x", "/home/u") == NULL, "your own home is not");
    ok(rf_suggest_flag("/home/uu/x", "/home/u") != NULL, "/home/uu is not /home/u's");
    ok(rf_suggest_flag("/var/home/b/x", "/var/home/a") != NULL, "/var/home/NAME is another user's home");
    ok(rf_suggest_flag("/tmp/t/data/x", "/tmp/t/home") == NULL, "a sibling of a home elsewhere is not (its owner is checked)");
    ok(rf_suggest_flag("/home/u", "/home/u") == NULL, "your home itself is no other user's");

    /* Through the builder: ls /home, a file beside the workspace. */
    char *envp[] = { NULL };
    char *text = rf_observe_suggest_in("{\"paths\":["
                                       "{\"path\":\"/home\",\"host\":\"/home\",\"seen\":\"hidden\"},"
                                       "{\"path\":\"/tmp/x/hostdata/config.txt\",\"host\":"
                                       "\"/tmp/x/hostdata/config.txt\",\"seen\":\"hidden\"},"
                                       "{\"path\":\"/home/other/.cache/x\",\"host\":\"/home/other/.cache/x\","
                                       "\"seen\":\"hidden\"}]}",
                                       NULL, "/home/u", "/tmp/x/ws", envp, NULL);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    size_t i;
    json_t *r;
    int seen = 0;
    json_array_foreach(json_object_get(j, "expose"), i, r) {
        const char *src = json_string_value(json_object_get(r, "source"));
        bool flagged = json_object_get(r, "flagged") != NULL, never = json_is_true(json_object_get(r, "never"));
        if (!strcmp(src, "/home"))
            seen |= flagged && never ? 1 : 0x100;
        else if (!strcmp(src, "/tmp/x"))
            seen |= flagged && never ? 2 : 0x100;
        else if (!strcmp(src, "/tmp/x/hostdata"))
            seen |= !flagged ? 4 : 0x100;
        else if (!strcmp(src, "/home/other"))
            seen |= flagged ? 8 : 0x100;
        else
            seen |= 0x200;
    }
    is_int(seen, 15, "/home and /tmp/x flagged, never offered; /tmp/x/hostdata suggested; /home/other flagged");
    json_decref(j);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/rf-observe.XXXXXX");
    if (!mkdtemp(root))
        return 1;
    normalise();
    classify();
    narrowest();
    rules();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", root);
    printf("1..%d\n", tap_n);
    return tap_failed != 0;
}
