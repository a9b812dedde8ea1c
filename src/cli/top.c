/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence top: the running sandboxes, redrawn every interval (as
 * `docker stats`), until Ctrl-C or q. */
#include "cli.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static void help(FILE *out)
{
    fprintf(out, "Usage: ringfence top [--sort cpu|mem|age|procs|id|out|refusals] [--interval SECONDS] [--once]\n"
                 "\n"
                 "What 'ringfence ps' lists, redrawn every interval in the terminal, the\n"
                 "busiest first. q or Ctrl-C ends it.\n"
                 "\n"
                 "Options:\n"
                 "  --sort COLUMN          cpu (default), mem, age, procs, id,\n"
                 "                         out (bytes out) or refusals\n"
                 "  --interval SECONDS     between redraws (default 2)\n"
                 "  --once                 draw once and exit (for scripts: prefer ps --json)\n"
                 "  --help                 show this help\n");
}

/* q typed (stdin a terminal, read without waiting for Enter). */
static bool wait_for_q(int ms)
{
    struct pollfd p = { .fd = 0, .events = POLLIN };
    char c;
    return poll(&p, 1, ms) > 0 && read(0, &c, 1) == 1 && (c == 'q' || c == 'Q');
}

int rf_cli_top(int argc, char **argv)
{
    const char *sort = "cpu";
    double interval = 2;
    bool once = false;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--sort") && i + 1 < argc && rf_cli_sort_known(argv[i + 1])) {
            sort = argv[++i];
        } else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
            interval = strtod(argv[++i], &end);
            if (*end || !(interval >= 0.2 && interval <= 3600))
                return rf_cli_usage_error("top", "--interval %s: expected seconds from 0.2 to 3600", argv[i]);
        } else if (!strcmp(argv[i], "--once")) {
            once = true;
        } else {
            return rf_cli_usage_error("top", "unexpected '%s'", argv[i]);
        }
    }
    struct termios saved, raw;
    bool tty = isatty(0) && tcgetattr(0, &saved) == 0;
    if (tty && !once) {
        raw = saved;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        tcsetattr(0, TCSANOW, &raw);
    }
    int code = 0;
    for (;;) {
        json_t *rows = rf_cli_sandboxes(&code);
        if (!rows)
            break;
        if (!once && isatty(1))
            fputs("\033[H\033[2J", stdout); /* home, clear: ours, never the commands' bytes */
        printf("%zu sandbox(es) running\n", json_array_size(rows));
        rf_cli_print_sandboxes(stdout, rows, sort);
        fflush(stdout);
        json_decref(rows);
        if (once || wait_for_q((int)(interval * 1000)))
            break;
    }
    if (tty && !once)
        tcsetattr(0, TCSANOW, &saved);
    return code;
}
