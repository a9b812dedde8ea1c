// SPDX-License-Identifier: LGPL-2.1-or-later
// A minimal agent harness: the model (an Anthropic Messages API; here the
// suite's stand-in) asks for tool calls; the tools are an MCP server that
// runs inside ringfence, started with the ringfence package's spawn() and
// driven by the official MCP SDK client over the sandbox's stdio.
//   node harness.mjs WORKSPACE API_BASE_URL TOOL_SERVER
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import * as rf from 'ringfence';

const [workspace, api, toolServer] = process.argv.slice(2);

/** An MCP transport over a sandboxed process's stdin and stdout. */
class SandboxTransport {
  constructor(proc) {
    this.proc = proc;
    this.buf = new ReadBuffer();
  }

  async start() {
    this.proc.stdout.on('data', (chunk) => {
      this.buf.append(chunk);
      for (let m; (m = this.buf.readMessage()) !== null;)
        this.onmessage?.(m);
    });
    this.proc.on('close', () => this.onclose?.());
    this.proc.stdin.on('error', (e) => this.onerror?.(e));
  }

  async send(message) { this.proc.stdin.write(serializeMessage(message)); }

  async close() { this.proc.stdin.end(); }
}

/* The tool server in the sandbox: the workspace writable, the server's
 * own files read-only, no network, at most 100 processes, 2 minutes. */
const server = rf.spawn(['node', toolServer], {
  workspace, network: 'none', limits: { pids: 100, timeout: 120 },
  expose: [{ source: new URL('.', `file://${toolServer}`).pathname }, ...(process.env.HARNESS_EXPOSE || '').split(':').filter(Boolean).map((source) => ({ source }))],
  stdio: ['pipe', 'pipe', 'inherit'],
});
const client = new Client({ name: 'ringfence-node-harness', version: '1.0.0' });
await client.connect(new SandboxTransport(server));
const { tools } = await client.listTools();

/* The model's loop: ask, run each tool call through MCP, answer with the result. */
const messages = [{ role: 'user', content: 'fix the greeting in hello.txt' }];
const calls = [];
for (let turn = 0; turn < 5; turn++) {
  const res = await fetch(`${api}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-standin', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'standin', max_tokens: 1024, messages,
      tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })),
    }),
  });
  const msg = await res.json();
  messages.push({ role: 'assistant', content: msg.content });
  if (msg.stop_reason !== 'tool_use')
    break;
  const results = [];
  for (const block of msg.content.filter((b) => b.type === 'tool_use')) {
    const r = await client.callTool({ name: block.name, arguments: block.input });
    const text = r.content.map((c) => c.text).join('');
    calls.push({ command: block.input.command, result: text });
    results.push({ type: 'tool_result', tool_use_id: block.id, content: text });
  }
  messages.push({ role: 'user', content: results });
}
await client.close();
const status = await server.status;
const last = messages[messages.length - 1];
console.log(JSON.stringify({
  tools: tools.map((t) => t.name), calls,
  final: last.role === 'assistant' ? last.content.map((c) => c.text).join('') : null,
  server: { exitCode: status.exitCode, signal: status.signal, sandboxPid: server.sandboxPid },
}));
