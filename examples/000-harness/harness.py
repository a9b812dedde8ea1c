# SPDX-License-Identifier: LGPL-2.1-or-later
"""Seed 000: picoclaw's pkg/isolation, as a Python harness over libringfence.

One startup path (Isolation.prepare / start / run) for every child process
the agent host starts: the exec tool, a CLI provider, a process hook and an
MCP stdio server. The isolation config is picoclaw's config.json, read by
the library as it is; the instance root is $PICOCLAW_HOME. The mount plan
is logged once, as "linux isolation mount plan", before the first start.

    python3 harness.py CONFIG PICOCLAW_HOME SECRET_PATH   (JSON lines out)
"""
import json
import os
import sys

import ringfence

here = os.path.dirname(os.path.abspath(__file__))
CHILD = [sys.executable, os.path.join(here, "child.py")]


def log(msg, **kv):
    print(json.dumps({"log": msg, **kv}), flush=True)


class Isolation:
    """Configure once, then every child goes through prepare()."""

    def __init__(self, config_path, home):
        with ringfence.Config(files=[config_path]) as cfg:
            cfg.add({"instance_root": home}, origin="PICOCLAW_HOME")
            # The children's own code (child.py), read-only, as picoclaw
            # adds the executable's directory.
            cfg.add({"expose": [{"source": here, "target": here, "mode": "ro"}]}, origin="harness")
            self.policy = cfg.policy()
        self.logged = False
        self.started = []

    def prepare(self, kind, argv=None, shell=None):
        plan = self.policy.shell_plan(shell) if shell is not None else self.policy.plan(argv)
        if not self.logged:  # the plan once, whatever the child
            d = plan.to_dict()
            log("linux isolation mount plan", backend=plan.backend,
                mounts=[f'{m.get("source", m.get("link", ""))} -> {m["target"]} ({m.get("mode", m["type"])})'
                        for m in d["mounts"]], env=d["env"])
            self.logged = True
        self.started.append(kind)
        return plan

    def run(self, kind, argv=None, shell=None, input=None):
        with self.prepare(kind, argv, shell) as plan:
            return plan.run(input=input)

    def start(self, kind, argv):
        """Start with pipes on stdin and stdout (a stdio server)."""
        plan = self.prepare(kind, argv)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        proc = plan.spawn(stdin=in_r, stdout=out_w)
        os.close(in_r)
        os.close(out_w)
        return plan, proc, os.fdopen(in_w, "w"), os.fdopen(out_r, "r")


def exec_tool(iso, command):
    """picoclaw's exec tool: the guard first, then the startup path."""
    with iso.policy.guard() as g:
        v = g.check(command)
    if not v.allowed:
        return {"command": command, "blocked": v.message}
    r = iso.run("exec", shell=command)
    return {"command": command, "exit": r.exit_code, "stdout": r.stdout, "stderr": r.stderr}


def rpc(w, r, id_, method, params):
    w.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n")
    w.flush()
    return json.loads(r.readline())


def main():
    config, home, secret = sys.argv[1:4]
    iso = Isolation(config, home)

    # 1. the exec tool: one command that works, one the guard refuses
    log("child", kind="exec", result=exec_tool(iso, "echo from-exec > exec.txt && cat exec.txt"))
    log("child", kind="exec-refused", result=exec_tool(iso, "rm -rf ."))

    # 2. a CLI provider (claude-cli, codex-cli): prompt on stdin, answer on stdout
    r = iso.run("provider", CHILD + ["provider", secret], input="what is in the workspace?\n")
    log("child", kind="provider", exit=r.exit_code, report=json.loads(r.stdout or "null"), stderr=r.stderr)

    # 3. a process hook: an event in, a decision out
    r = iso.run("hook", CHILD + ["hook", secret], input=json.dumps({"event": "before_tool", "tool": "exec"}))
    log("child", kind="hook", exit=r.exit_code, report=json.loads(r.stdout or "null"), stderr=r.stderr)

    # 4. an MCP stdio server: JSON-RPC over the sandbox's stdio
    plan, proc, w, rd = iso.start("mcp", CHILD + ["mcp", secret])
    init = rpc(w, rd, 1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "harness", "version": "0"}})
    w.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    tools = rpc(w, rd, 2, "tools/list", {})
    call = rpc(w, rd, 3, "tools/call", {"name": "report", "arguments": {}})
    w.close()
    st = proc.wait()
    rd.close()
    plan.close()
    report = json.loads(call["result"]["content"][0]["text"])
    log("child", kind="mcp", exit=st.exit_code, server=init["result"]["serverInfo"],
        tools=[t["name"] for t in tools["result"]["tools"]], report=report)

    log("done", started=iso.started, backend=iso.policy.to_dict()["backend"])
    iso.policy.close()


if __name__ == "__main__":
    main()
