# SPDX-License-Identifier: LGPL-2.1-or-later
"""A child of the harness (examples/000-harness): a CLI provider, a hook or
an MCP stdio server, each reporting what it sees from inside its sandbox."""
import json
import os
import sys


def report(secret):
    r = {k: os.environ.get(k) for k in ("HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")}
    r["cwd"] = os.getcwd()
    r["pid"] = os.getpid()
    r["secret_visible"] = os.path.exists(secret)
    r["docs_exposed"] = os.path.isdir("/opt/picoclaw-docs")
    try:
        open("/opt/picoclaw-docs/planted", "w").close()
        r["docs_writable"] = True
    except OSError:
        r["docs_writable"] = False
    try:
        open(os.path.join(os.path.dirname(secret), "written-from-inside"), "w").close()
        r["wrote_outside"] = True
    except OSError:
        r["wrote_outside"] = False
    with open(os.path.join(r["HOME"], "home-note"), "w") as f:
        f.write(sys.argv[1])
    r["home_writable"] = True
    return r


def main():
    kind, secret = sys.argv[1], sys.argv[2]
    if kind == "provider":
        prompt = sys.stdin.read()
        print(json.dumps({"answer": f"{len(prompt)} bytes of prompt read", **report(secret)}))
    elif kind == "hook":
        event = json.loads(sys.stdin.read())
        print(json.dumps({"decision": "allow", "event": event["event"], **report(secret)}))
    elif kind == "mcp":
        for line in sys.stdin:
            msg = json.loads(line)
            if "id" not in msg:
                continue
            if msg["method"] == "initialize":
                res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "child-mcp", "version": "1"}}
            elif msg["method"] == "tools/list":
                res = {"tools": [{"name": "report", "description": "what the server sees",
                                  "inputSchema": {"type": "object", "properties": {}}}]}
            else:
                res = {"content": [{"type": "text", "text": json.dumps(report(secret))}]}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}), flush=True)


if __name__ == "__main__":
    main()
