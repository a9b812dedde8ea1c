/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TLS to a route's upstream, with OpenSSL: the host's CA store plus the
 * route's own CA file (--route-ca), TLS 1.2 or later, SNI, and the
 * certificate's name checked against the upstream's host. The real
 * credential is sent only after this handshake succeeded, so a wrong,
 * expired or self-signed certificate means the key never leaves. */
#include "net/route.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *ssl_why(const char *what)
{
    char buf[256] = "";
    unsigned long e = ERR_get_error();
    if (e)
        ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    char *w = NULL;
    return asprintf(&w, "%s%s%s", what, *buf ? ": " : "", buf) < 0 ? NULL : w;
}

SSL_CTX *rf_route_tls_ctx(const char *ca_file, char **why)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        *why = ssl_why("TLS setup failed");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* Idle keep-alive connections give their buffers back. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_AUTO_RETRY);
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        *why = ssl_why("the host's CA store cannot be loaded");
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (ca_file && SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
        char *w = NULL;
        *why = asprintf(&w, "CA file %s cannot be loaded (a PEM bundle of certificates)", ca_file) < 0 ? NULL : w;
        ERR_clear_error();
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static char *verify_why(SSL *ssl, const char *host)
{
    long v = SSL_get_verify_result(ssl);
    char *w = NULL;
    if (v == X509_V_OK)
        return ssl_why("TLS handshake failed");
    if (asprintf(&w, "the certificate of %s is refused: %s", host, X509_verify_cert_error_string(v)) < 0)
        w = NULL;
    ERR_clear_error();
    return w;
}

/* The handshake on a blocking socket with a deadline by poll. */
SSL *rf_route_tls_connect(SSL_CTX *ctx, int fd, const char *host, int timeout_ms, char **why)
{
    SSL *ssl = SSL_new(ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_set_tlsext_host_name(ssl, host) != 1 ||
        SSL_set1_host(ssl, host) != 1) {
        *why = ssl_why("TLS setup failed");
        SSL_free(ssl);
        return NULL;
    }
    for (;;) {
        int rc = SSL_connect(ssl);
        if (rc == 1)
            return ssl;
        int e = SSL_get_error(ssl, rc);
        struct pollfd pf = { .fd = fd, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT };
        if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && poll(&pf, 1, timeout_ms) > 0)
            continue;
        *why = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? strdup("TLS handshake timed out")
                                                                     : verify_why(ssl, host);
        SSL_free(ssl);
        return NULL;
    }
}
