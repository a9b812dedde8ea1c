# SPDX-License-Identifier: LGPL-2.1-or-later
# The other end of `ringfence run --ask socket:PATH` for tests/security/ask.sh:
# listens on PATH, writes every question it gets to LOG (one JSON line each)
# and answers as scripted: RULES is "host=decision/scope,..." with "*" for
# any other host (a file question: its "path"); the decision "silent" never answers, "garbage" sends a
# line that is not an answer; "allow/once/slow" answers after a second. --close: close the connection after each
# answer (ringfence connects again for the next question).
import json, os, socket, sys, threading, time

path, log, rules = sys.argv[1], sys.argv[2], sys.argv[3]
close_each = "--close" in sys.argv
script = dict(r.split("=", 1) for r in rules.split(",") if r)
lock = threading.Lock()

def answer_for(host):
    return script.get(host, script.get("*", "deny/once"))

def serve(conn):
    f = conn.makefile("rwb", buffering=0)
    for line in f:
        q = json.loads(line)
        with lock, open(log, "a") as lf:
            lf.write(json.dumps(q) + "\n")
        what = answer_for(q.get("path") or q["host"])
        if what == "silent":
            continue
        if what == "garbage":
            f.write(b'{"id": "x", "decision": "allow"}\n' + json.dumps({"id": q["id"], "decision": "yes"}).encode() + b"\n")
            continue
        decision, scope, *slow = what.split("/")
        if slow:  # "allow/once/slow": answer after a second
            time.sleep(1)
        f.write((json.dumps({"id": q["id"], "decision": decision, "scope": scope}) + "\n").encode())
        if close_each:
            break
    conn.close()

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(64)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
