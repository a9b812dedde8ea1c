// SPDX-License-Identifier: LGPL-2.1-or-later
// One ACP prompt turn from a client written with @agentclientprotocol/sdk:
// spawns AGENT-COMMAND (e.g. `ringfence run ... -- claude-code-acp`), then
// initialize, session/new in CWD, session/prompt PROMPT; every permission
// the agent asks for is granted (the sandbox, not the prompt, is the wall).
// Prints one JSON line: agent info, stop reason, the text the agent sent,
// the tool calls it reported, the permissions asked, the exit status.
//   node acp-client.mjs CWD PROMPT -- AGENT-COMMAND...
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, methods, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';

const [cwd, prompt, sep, ...cmd] = process.argv.slice(2);
if (sep !== '--' || !cmd.length) throw new Error('usage: acp-client.mjs CWD PROMPT -- AGENT-COMMAND...');
const t0 = Date.now();
const child = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
let stderr = '';
child.stderr.on('data', (b) => { stderr += b; });
const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
const tools = [];
const permissions = [];
let text = '';
const app = client({ name: 'ringfence-acp-client' })
  .onNotification(methods.client.session.update, ({ params }) => {
    const u = params.update;
    if (u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text') text += u.content.text;
    if (u.sessionUpdate === 'tool_call') tools.push({ title: u.title, kind: u.kind });
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    const opt = params.options.find((o) => o.kind === 'allow_once') || params.options.find((o) => o.kind.startsWith('allow'));
    permissions.push(params.toolCall?.title ?? '?');
    return { outcome: { outcome: 'selected', optionId: opt.optionId } };
  });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
let out;
try {
  out = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize,
      { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
    const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    const end = await ctx.request(methods.agent.session.prompt,
      { sessionId: session.sessionId, prompt: [{ type: 'text', text: prompt }] });
    return { agent: init.agentInfo, protocolVersion: init.protocolVersion, sessionId: session.sessionId, stopReason: end.stopReason };
  });
} catch (e) {
  out = { error: String(e?.message ?? e) };
}
child.stdin.end();
const timer = setTimeout(() => child.kill('SIGTERM'), 5000);
const st = await exited;
clearTimeout(timer);
console.log(JSON.stringify({ ...out, text, tools, permissions, exit: st, ms: Date.now() - t0, stderr: stderr.slice(-2000) }));
