/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* files.on_hidden: ask: offering a hidden host file to the command's open
 * (offer.c). Used by the observer's thread only. */
#pragma once
#include "net/ask.h"
#include "model/plan.h"
#include "util/strv.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct rf_offer {
    rf_net_ask *ask;
    char **never; /* host paths never offered, nor anything below them */
} rf_offer;

/* The asker (plan->net's network.ask, or the library's callback) and the
 * paths never offered. 0, or -1 (then nothing is offered). */
int rf_offer_init(rf_offer *f, const rf_plan *plan, int stop_fd);
void rf_offer_clear(rf_offer *f);
/* The open of notification `id` asked for `host` (absolute, normalised,
 * hidden inside), read-only: ask, and on allow answer it with a descriptor
 * of ours. `pid` (the notification's) names who asked. true: answered;
 * false: the caller answers CONTINUE. */
bool rf_offer_try(rf_offer *f, int listener, uint64_t id, pid_t pid, const char *host, bool cloexec);
