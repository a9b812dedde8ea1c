/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 (FIPS 180-4), for the audit trail's hash chain. Here and not
 * from OpenSSL: libssl is dlopen()ed only when a route needs it
 * (net/route_ssl.h), and every start with auditing on hashes a record. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct rf_sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes so far */
    unsigned char buf[64];
    size_t used;
} rf_sha256;

void rf_sha256_init(rf_sha256 *s);
void rf_sha256_update(rf_sha256 *s, const void *data, size_t len);
void rf_sha256_final(rf_sha256 *s, unsigned char out[32]);
/* The digest of data as 64 lower-case hex digits and a NUL. */
void rf_sha256_hex(const void *data, size_t len, char out[65]);
