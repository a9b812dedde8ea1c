/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Asking instead of refusing (issue 31, docs/network.md "Asking"): the
 * proxy holds a connection to a name allow_domains does not match and asks
 * whoever listens on the ask socket. ask.c: the decisions of this run, one
 * question per name at a time, the rate limit, the record; ask_socket.c:
 * the JSON-lines transport; ask_always.c: "always" answers written to the
 * user's own configuration. Internal to libringfence. */
#pragma once
#include "model/policy.h"
#include "util/printable.h"

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define RF_ASK_PER_MINUTE 30   /* questions a minute per sandbox */
#define RF_ASK_MAX_NAMES 1024  /* names remembered for this run */
#define RF_ASK_MAX_RECORDS 256 /* questions listed in the status record */
#define RF_ASK_LINE_MAX 4096   /* one answer line */

typedef struct rf_net_ask rf_net_ask;

typedef enum { RF_ASK_ONCE, RF_ASK_RUN, RF_ASK_ALWAYS } rf_ask_scope;

/* The process inside that asked (ask_who.c): a hint for whoever answers. */
typedef struct rf_ask_who {
    long pid;      /* as the sandbox numbers it */
    char name[17]; /* comm, printable ASCII only */
} rf_ask_who;

typedef struct rf_ask_question {
    uint64_t id;
    const char *host;
    uint16_t port;
    const char *protocol;  /* "http", "connect", "socks5" */
    const char *command;   /* the sandbox's command line */
    const rf_ask_who *who; /* NULL: not known */
} rf_ask_question;

typedef struct rf_ask_answer {
    bool allow;
    rf_ask_scope scope;
} rf_ask_answer;

/* NULL when the policy does not ask. `stop_fd` becomes readable when the
 * proxy stops: every question then ends, refused. Questions go to the
 * socket of network.ask, or to `fn` (the library's callback) when set. */
rf_net_ask *rf_net_ask_new(const rf_net_policy *policy, int stop_fd, rf_ask_fn fn, void *data);
void rf_net_ask_free(rf_net_ask *a);
/* The command line named in questions (copied, shortened). */
void rf_net_ask_set_command(rf_net_ask *a, char *const *argv);
/* The verdict on host:port, which allow_domains did not match: NULL when
 * allowed, else why not (static text). Blocks until answered, at most the
 * ask timeout. Any error while asking is a refusal. */
const char *rf_net_ask_decide(rf_net_ask *a, const char *host, uint16_t port, const char *protocol,
                              const rf_ask_who *who);
/* The status record's "asked" object (new reference). */
json_t *rf_net_ask_report(rf_net_ask *a);

/* ask_socket.c: one connection to the listener, kept between questions and
 * made again when the listener closed it. */
typedef struct rf_ask_socket {
    char *path;
    int fd;
    char buf[RF_ASK_LINE_MAX];
    size_t len;
} rf_ask_socket;
/* Ask q, wait until `deadline` (CLOCK_MONOTONIC) or stop_fd. 0 with *out;
 * -2: no answer in time; -1: any other failure; *why says (static text). */
int rf_ask_socket_ask(rf_ask_socket *s, const rf_ask_question *q, int stop_fd, const struct timespec *deadline,
                      rf_ask_answer *out, const char **why);
void rf_ask_socket_close(rf_ask_socket *s);

/* ask_tty.c: the question on the caller's terminal (/dev/tty), one key
 * the answer; the same returns as rf_ask_socket_ask. */
int rf_ask_tty_ask(const rf_ask_question *q, int stop_fd, const struct timespec *deadline, rf_ask_answer *out,
                   const char **why);

/* ask_always.c: append host:port to allow_domains (or deny_domains) in
 * the user's answers file ($XDG_CONFIG_HOME/ringfence/answers.yaml, else
 * ~/.config/ringfence/answers.yaml) with a comment saying when and for
 * which command; written to a temporary file and renamed over. */
int rf_ask_always_write(const char *host, uint16_t port, bool allow, const char *command);
/* The answers file's path (malloc'd), or NULL. */
char *rf_ask_always_path(void);

/* ask_who.c: who asked. 0 with *out, -1 when not known. A connection the
 * proxy accepted from inside (its sandbox's end found in the namespace's
 * TCP table, its holder among the namespace's processes); a process by
 * its pid as the caller sees it (a seccomp notification's). */
int rf_ask_who_of_connection(int fd, rf_ask_who *out);
int rf_ask_who_of_pid(pid_t host_pid, rf_ask_who *out);
/* The two ends of an IPv4 connection the proxy accepted (peer: the
 * sandbox's end) and the network namespace it lives in; -1 if not known. */
struct sockaddr_in;
struct stat;
int rf_ask_connection_ends(int fd, struct sockaddr_in *peer, struct sockaddr_in *self, struct stat *ns);
/* The pids (as the caller sees them) whose network namespace is `ns`, at
 * most max; the processes the caller may not look at are skipped. */
struct stat;
size_t rf_ask_pids_in_netns(const struct stat *ns, pid_t *pids, size_t max);
/* src as a terminal may show it: printable ASCII; anything else (escape
 * sequences a command could hide in a path or its name, C1 controls some
 * terminals take as CSI) becomes '?'; cut to size. util/printable.h's
 * rf_printable, under the name its callers know. */
static inline void rf_ask_printable(char *dst, size_t size, const char *src)
{
    rf_printable(dst, size, src);
}
