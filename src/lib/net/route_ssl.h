/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* OpenSSL, loaded when a sandbox first has a credential route. Linked in,
 * libcrypto's 19,000 relocations and its data pages made every start and
 * every waiting `ringfence run` pay for routes (176 page faults for
 * `--version` instead of 64, ~450 KiB more per process), so only its
 * headers are compiled in and libssl.so.3 is dlopen()ed by
 * rf_route_ssl_load(). The names the route code calls are defined below
 * to the loaded table's pointers, so that code reads as plain OpenSSL;
 * OpenSSL's own macros (SSL_CTX_set_mode, SSL_set_tlsext_host_name...)
 * expand to SSL_CTX_ctrl/SSL_ctrl, which land in the table too.
 * Include this instead of the OpenSSL headers. Internal to libringfence. */
#pragma once
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

typedef struct rf_route_ssl_api {
    SSL_CTX *(*ctx_new)(const SSL_METHOD *);
    void (*ctx_free)(SSL_CTX *);
    long (*ctx_ctrl)(SSL_CTX *, int, long, void *);
    void (*ctx_set_verify)(SSL_CTX *, int, SSL_verify_cb);
    int (*ctx_set_default_verify_paths)(SSL_CTX *);
    int (*ctx_load_verify_locations)(SSL_CTX *, const char *, const char *);
    const SSL_METHOD *(*client_method)(void);
    SSL *(*ssl_new)(SSL_CTX *);
    void (*ssl_free)(SSL *);
    long (*ssl_ctrl)(SSL *, int, long, void *);
    int (*set_fd)(SSL *, int);
    int (*set1_host)(SSL *, const char *);
    int (*connect)(SSL *);
    int (*read)(SSL *, void *, int);
    int (*write)(SSL *, const void *, int);
    int (*get_error)(const SSL *, int);
    long (*get_verify_result)(const SSL *);
    const char *(*verify_cert_error_string)(long);
    unsigned long (*err_get_error)(void);
    void (*err_clear_error)(void);
    void (*err_error_string_n)(unsigned long, char *, size_t);
    int (*encode_block)(unsigned char *, const unsigned char *, int);
} rf_route_ssl_api;

extern rf_route_ssl_api rf_route_ssl;

/* Load libssl.so.3 once (thread-safe); 0, or -1 with *why (malloc'd):
 * what is missing and the package that brings it. */
int rf_route_ssl_load(char **why);

#define SSL_CTX_new rf_route_ssl.ctx_new
#define SSL_CTX_free rf_route_ssl.ctx_free
#define SSL_CTX_ctrl rf_route_ssl.ctx_ctrl
#define SSL_CTX_set_verify rf_route_ssl.ctx_set_verify
#define SSL_CTX_set_default_verify_paths rf_route_ssl.ctx_set_default_verify_paths
#define SSL_CTX_load_verify_locations rf_route_ssl.ctx_load_verify_locations
#define TLS_client_method rf_route_ssl.client_method
#define SSL_new rf_route_ssl.ssl_new
#define SSL_free rf_route_ssl.ssl_free
#define SSL_ctrl rf_route_ssl.ssl_ctrl
#define SSL_set_fd rf_route_ssl.set_fd
#define SSL_set1_host rf_route_ssl.set1_host
#define SSL_connect rf_route_ssl.connect
#define SSL_read rf_route_ssl.read
#define SSL_write rf_route_ssl.write
#define SSL_get_error rf_route_ssl.get_error
#define SSL_get_verify_result rf_route_ssl.get_verify_result
#define X509_verify_cert_error_string rf_route_ssl.verify_cert_error_string
#define ERR_get_error rf_route_ssl.err_get_error
#define ERR_clear_error rf_route_ssl.err_clear_error
#define ERR_error_string_n rf_route_ssl.err_error_string_n
#define EVP_EncodeBlock rf_route_ssl.encode_block
