#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal MCP server in pure Python (stdlib only), over stdio.

The `mcp` package is not on Debian and pip cannot reach PyPI here, so this
speaks the protocol itself: newline-delimited JSON-RPC 2.0, initialize,
ping, tools/list and tools/call, notifications ignored. Its tools report
what the process sees of its sandbox, so a test can check the boundary
from the other end of the SDK client."""
import json
import os
import sys

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOLS = [
    {"name": "whoami", "description": "uid, pid and working directory of the server",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "can_read", "description": "whether a path can be read, and its first line",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    {"name": "write_note", "description": "write text to note.txt in the working directory",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]


def text_result(obj, error=False):
    return {"content": [{"type": "text", "text": json.dumps(obj)}], "isError": error}


def call_tool(name, args):
    if name == "whoami":
        return text_result({"uid": os.getuid(), "pid": os.getpid(), "cwd": os.getcwd(),
                            "python": sys.version.split()[0]})
    if name == "can_read":
        try:
            with open(args["path"], encoding="utf-8", errors="replace") as f:
                return text_result({"readable": True, "first_line": f.readline().rstrip("\n")})
        except OSError as e:
            return text_result({"readable": False, "error": e.strerror})
    if name == "write_note":
        with open("note.txt", "w", encoding="utf-8") as f:
            f.write(args["text"])
        return text_result({"written": len(args["text"])})
    return None


def handle(msg):
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:  # a notification (or a response): never answered
        return None
    params = msg.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        result = {"protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "ringfence-python-test-server", "version": "1.0.0"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = call_tool(params.get("name"), params.get("arguments") or {})
        if result is None:
            return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = handle(json.loads(line))
        except (ValueError, AttributeError) as e:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(e)}}
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
