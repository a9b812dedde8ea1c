/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dlopen() of OpenSSL for the credential routes (why: route_ssl.h). */
#include "net/route_ssl.h"
#include "util/cleanup.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rf_route_ssl_api rf_route_ssl;

#define RF_LIBSSL "libssl.so.3"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void)
{
    /* RTLD_NODELETE: the pointers stay valid for the life of the process.
     * libssl pulls in libcrypto, and dlsym on libssl's handle searches its
     * dependencies too. */
    void *lib = dlopen(RF_LIBSSL, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load " RF_LIBSSL " (%s); install OpenSSL's library "
                 "(Debian: apt-get install libssl3)", dlerror());
        return;
    }
    rf_route_ssl_api api;
    struct { void **slot; const char *name; } syms[] = {
#define SYM(field, name) { (void **)&api.field, name }
        SYM(ctx_new, "SSL_CTX_new"), SYM(ctx_free, "SSL_CTX_free"), SYM(ctx_ctrl, "SSL_CTX_ctrl"),
        SYM(ctx_set_verify, "SSL_CTX_set_verify"),
        SYM(ctx_set_default_verify_paths, "SSL_CTX_set_default_verify_paths"),
        SYM(ctx_load_verify_locations, "SSL_CTX_load_verify_locations"),
        SYM(client_method, "TLS_client_method"), SYM(ssl_new, "SSL_new"), SYM(ssl_free, "SSL_free"),
        SYM(ssl_ctrl, "SSL_ctrl"), SYM(set_fd, "SSL_set_fd"), SYM(set1_host, "SSL_set1_host"),
        SYM(connect, "SSL_connect"), SYM(read, "SSL_read"), SYM(write, "SSL_write"),
        SYM(get_error, "SSL_get_error"), SYM(get_verify_result, "SSL_get_verify_result"),
        SYM(verify_cert_error_string, "X509_verify_cert_error_string"),
        SYM(err_get_error, "ERR_get_error"), SYM(err_clear_error, "ERR_clear_error"),
        SYM(err_error_string_n, "ERR_error_string_n"), SYM(encode_block, "EVP_EncodeBlock"),
#undef SYM
    };
    for (size_t i = 0; i < RF_ARRAY_SIZE(syms); i++) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot) {
            snprintf(load_error, sizeof load_error, RF_LIBSSL " lacks %s: OpenSSL 3 is needed", syms[i].name);
            return;
        }
    }
    rf_route_ssl = api;
}

int rf_route_ssl_load(char **why)
{
    pthread_once(&once, load);
    if (rf_route_ssl.ctx_new)
        return 0;
    *why = strdup(load_error);
    return -1;
}
