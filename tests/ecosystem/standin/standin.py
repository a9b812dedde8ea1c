#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for the model providers' HTTP APIs, for agent turns in tests.

One plain-HTTP server on loopback answers, in each provider's own format:
  POST .../v1/messages                        Anthropic Messages (stream or not)
  POST .../responses                          OpenAI Responses (stream)
  POST .../chat/completions                   OpenAI Chat Completions (stream or not)
  POST .../models/M:generateContent           Gemini
  POST .../models/M:streamGenerateContent     Gemini (?alt=sse)
and a few side requests the CLIs make (model lists, token counts).

Every request is scripted the same way, whatever the format. The stand-in
looks at the tools the request declares and at how many tool results its
conversation already holds:
  0 results: call the CLI's own shell tool with the EDIT command;
  1 result:  call it with the ESCAPE command;
  2 or more: a final answer quoting the tool results.
A request that declares no shell tool (titles, summaries, checks) gets a
short text answer. Every request is appended to LOG as one JSON line
(method, path, headers, body), so a test can check what reached the API.

    standin.py --log FILE --edit CMD --escape CMD [--port N] [--portfile F]
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOLS = ("bash", "shell", "run_shell_command", "exec_command", "local_shell", "shell_command")
lock = threading.Lock()
A = None


def shell_args(name, cmd):
    """The shell tool's arguments, shaped the way that tool takes them."""
    n = name.lower()
    if n == "shell":
        return {"command": ["bash", "-lc", cmd], "workdir": None, "timeout_ms": 60000}
    if n == "exec_command":
        return {"cmd": cmd}
    if n == "shell_command":
        return {"command": cmd}
    return {"command": cmd, "description": "stand-in step"}


def text_of(x):
    """Flatten a tool result (str, list of blocks, dict) to text."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, list):
        return "\n".join(text_of(i) for i in x)
    if isinstance(x, dict):
        for k in ("text", "output", "content", "response", "result", "llmContent", "stdout"):
            if k in x:
                return text_of(x[k])
        return json.dumps(x)
    return str(x)


def step_of(kind, body):
    """(tool names declared, tool results so far) for each format."""
    results = []
    names = []
    if kind == "anthropic":
        names = [t.get("name", "") for t in body.get("tools", [])]
        for m in body.get("messages", []):
            c = m.get("content")
            if isinstance(c, list):
                results += [text_of(b.get("content")) for b in c if b.get("type") == "tool_result"]
    elif kind == "chat":
        names = [t.get("function", {}).get("name", "") for t in body.get("tools", [])]
        results = [text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
    elif kind == "responses":
        names = [t.get("name", t.get("type", "")) for t in body.get("tools", [])]
        inp = body.get("input", [])
        if isinstance(inp, list):
            results = [text_of(i.get("output")) for i in inp
                       if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output")]
    elif kind == "gemini":
        for t in body.get("tools", []):
            names += [f.get("name", "") for f in t.get("functionDeclarations", [])]
        for c in body.get("contents", []):
            results += [text_of(p["functionResponse"].get("response")) for p in c.get("parts", []) if "functionResponse" in p]
    shell = next((n for n in names if n.lower() in SHELL_TOOLS), None)
    return shell, results


def decide(kind, body):
    """("tool", name, args) or ("text", text)."""
    shell, results = step_of(kind, body)
    if kind == "gemini" and body.get("generationConfig", {}).get("responseMimeType") == "application/json":
        return ("text", json.dumps({"reasoning": "the stand-in's turn is complete", "next_speaker": "user"}))
    if shell is None:
        return ("text", "stand-in answer")
    if len(results) == 0:
        return ("tool", shell, shell_args(shell, A.edit))
    if len(results) == 1:
        return ("tool", shell, shell_args(shell, A.escape))
    quoted = " | ".join(r.strip().replace("\n", " / ")[:400] for r in results[:2])
    return ("text", f"STANDIN-FINAL: the tool results were: {quoted}")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def record(self, body):
        with lock, open(A.log, "a") as f:
            f.write(json.dumps({"time": time.time(), "method": self.command, "path": self.path,
                                "headers": dict(self.headers), "body": body}) + "\n")

    def send(self, code, obj, ctype="application/json"):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse(self, events):
        """events: (event name or None, data) pairs, sent as one SSE body."""
        out = b""
        for name, data in events:
            if name:
                out += f"event: {name}\n".encode()
            out += b"data: " + (data if isinstance(data, bytes) else json.dumps(data).encode()) + b"\n\n"
        self.send(200, out, "text/event-stream")

    def do_GET(self):
        self.record(None)
        p = self.path.split("?")[0]
        if p.endswith("/models"):
            self.send(200, {"object": "list", "data": [{"id": "standin-model", "object": "model", "created": 0, "owned_by": "standin"}],
                            "models": []})
        else:
            self.send(404, {"error": {"message": f"stand-in: no GET {p}"}})

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"raw": raw.decode(errors="replace")}
        self.record(body)
        p = self.path.split("?")[0]
        if p.endswith("/messages/count_tokens"):
            return self.send(200, {"input_tokens": 10})
        if p.endswith("/messages"):
            return self.anthropic(body)
        if p.endswith("/responses"):
            return self.openai_responses(body)
        if p.endswith("/chat/completions"):
            return self.chat(body)
        if ":streamGenerateContent" in p or ":generateContent" in p:
            return self.gemini(body, ":streamGenerateContent" in p)
        if ":countTokens" in p:
            return self.send(200, {"totalTokens": 10})
        self.send(404, {"error": {"message": f"stand-in: no POST {p}"}})

    # ── Anthropic Messages ──
    def anthropic(self, body):
        d = decide("anthropic", body)
        model = body.get("model", "standin")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if d[0] == "tool":
            block = {"type": "tool_use", "id": f"toolu_{int(time.time() * 1e6)}", "name": d[1], "input": d[2]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": d[1]}
            stop = "end_turn"
        msg = {"id": f"msg_{int(time.time() * 1e6)}", "type": "message", "role": "assistant", "model": model,
               "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return self.send(200, msg)
        start = dict(msg, content=[], stop_reason=None)
        ev = [("message_start", {"type": "message_start", "message": start})]
        if block["type"] == "tool_use":
            ev += [("content_block_start", {"type": "content_block_start", "index": 0, "content_block": dict(block, input={})}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})]
        else:
            ev += [("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": block["text"]}})]
        ev += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
               ("message_stop", {"type": "message_stop"})]
        self.sse(ev)

    # ── OpenAI Responses (always streamed by codex) ──
    def openai_responses(self, body):
        d = decide("responses", body)
        rid = f"resp_{int(time.time() * 1e6)}"
        if d[0] == "tool":
            item = {"type": "function_call", "id": "fc_" + rid, "call_id": "call_" + rid, "name": d[1],
                    "arguments": json.dumps(d[2]), "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_" + rid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": d[1], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model", "standin"),
                "status": "in_progress", "output": []}
        ev = [("response.created", {"type": "response.created", "sequence_number": 0, "response": resp}),
              ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                                              "item": dict(item, status="in_progress")})]
        if d[0] == "text":
            ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 2, "item_id": item["id"],
                                                      "output_index": 0, "content_index": 0, "delta": d[1]}))
        ev += [("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item}),
               ("response.completed", {"type": "response.completed", "sequence_number": 4,
                                       "response": dict(resp, status="completed", output=[item], usage=usage)})]
        if body.get("stream", True):
            self.sse(ev)
        else:
            self.send(200, dict(resp, status="completed", output=[item], usage=usage))

    # ── OpenAI Chat Completions ──
    def chat(self, body):
        d = decide("chat", body)
        cid = f"chatcmpl-{int(time.time() * 1e6)}"
        model = body.get("model", "standin")
        if d[0] == "tool":
            call = {"id": "call_" + cid, "type": "function", "function": {"name": d[1], "arguments": json.dumps(d[2])}}
            msg, fin = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            msg, fin = {"role": "assistant", "content": d[1]}, "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            return self.send(200, {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
                                   "choices": [{"index": 0, "message": msg, "finish_reason": fin}], "usage": usage})
        chunk = lambda delta, f: {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": f}]}
        if d[0] == "tool":
            first = {"role": "assistant", "tool_calls": [dict(call, index=0)]}
        else:
            first = {"role": "assistant", "content": d[1]}
        ev = [(None, chunk(first, None)), (None, dict(chunk({}, fin), usage=usage)), (None, b"[DONE]")]
        self.sse(ev)

    # ── Gemini ──
    def gemini(self, body, stream):
        d = decide("gemini", body)
        part = {"functionCall": {"name": d[1], "args": d[2]}} if d[0] == "tool" else {"text": d[1]}
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                "modelVersion": "standin"}
        if stream:
            self.sse([(None, resp)])
        else:
            self.send(200, resp)


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--portfile")
    ap.add_argument("--log", required=True)
    ap.add_argument("--edit", required=True)
    ap.add_argument("--escape", required=True)
    A = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", A.port), H)
    srv.daemon_threads = True
    if A.portfile:
        with open(A.portfile + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        import os
        os.rename(A.portfile + ".tmp", A.portfile)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
