#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Test servers for tests/security/network-allowlist.sh, on loopback only:
# an HTTP server and an HTTPS server (certificate from a CA made at test
# time, valid for every name the test uses), both serving DIR (files and a
# dumb-HTTP git repository). Prints "http PORT" and "https PORT", then
# serves until killed.
import http.server
import resource
import socketserver
import ssl
import sys
import threading


class Quiet(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers: connection reuse is tested

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 2048  # the connection-cap test opens 1100 at once


def serve(directory, wrap=None):
    handler = lambda *a, **k: Quiet(*a, directory=directory, **k)  # noqa: E731
    srv = Server(("127.0.0.1", 0), handler)
    if wrap:
        srv.socket = wrap.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    directory, cert, key = sys.argv[1:4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    print("http", serve(directory), flush=True)
    print("https", serve(directory, ctx), flush=True)
    threading.Event().wait()


main()
