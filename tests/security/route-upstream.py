#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The upstream of a credential route, for tests/security/route-keys.sh and
# bench/net-proxy.sh: HTTPS servers on loopback, one per certificate given
# (NAME CERT KEY ...), printing "NAME PORT" for each. Each request is
# recorded as a JSON line in LOG (method, path, headers, body length):
# the test checks where the real key arrived. Answers never echo a header,
# so a key cannot come back into the sandbox through a response.
#   POST /v1/messages      {"ok": true, "bytes": N} (reads Content-Length or chunked bodies)
#   GET  /v1/sse           text/event-stream, chunked: "event one" at once, then
#                          "event two" 300 ms later; stamps when each was sent.
#                          To an HTTP/1.0 request, as a server must: not
#                          chunked, the end of the body is the connection's
#   GET  /v1/big?n=BYTES   BYTES of data (Content-Length)
#   POST /v1/upload        reads the body, answers its length
#   anything else          {"ok": true}
import http.server
import json
import socket
import socketserver
import ssl
import sys
import threading
import time

LOG = None
LOCK = threading.Lock()


def record(entry):
    with LOCK, open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        # As event-stream servers do: each event leaves at once (no Nagle).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            n = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return n
                left = size
                while left:
                    left -= len(self.rfile.read(min(left, 1 << 20)))
                self.rfile.readline()
                n += size
        left = n = int(self.headers.get("Content-Length", "0"))
        while left:
            got = len(self.rfile.read(min(left, 1 << 20)))
            if not got:
                break
            left -= got
        return n

    def reply(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        n = self.read_body()
        path = self.path.split("?")[0]
        record({"server": self.server.name, "method": self.command, "path": self.path,
                "version": self.request_version, "headers": dict(self.headers.items()), "body": n})
        if path == "/v1/sse":
            return self.sse()
        if path == "/v1/big":
            size = int(self.path.split("n=")[1]) if "n=" in self.path else 1 << 20
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = b"x" * (1 << 20)
            while size:
                self.wfile.write(block[:min(size, len(block))])
                size -= min(size, len(block))
            return
        self.reply({"ok": True, "bytes": n})

    def sse(self):
        chunked = self.request_version != "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        for i, word in enumerate(("one", "two")):
            if i:
                time.sleep(0.3)
            ev = f"data: event {word}\n\n".encode()
            record({"server": self.server.name, "sse_sent": word, "t": time.time()})
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev) if chunked else ev)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 512


def main():
    global LOG
    LOG = sys.argv[1]
    args = sys.argv[2:]
    for i in range(0, len(args), 3):
        name, cert, key = args[i:i + 3]
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv = Server(("127.0.0.1", 0), Handler)
        srv.name = name
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        print(name, srv.server_address[1], flush=True)
    threading.Event().wait()


main()
