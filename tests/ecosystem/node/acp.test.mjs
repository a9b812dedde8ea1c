// SPDX-License-Identifier: LGPL-2.1-or-later
// ACP round trip through the sandbox's stdio: a client written with
// @agentclientprotocol/sdk starts acp-agent.mjs inside `ringfence run`, then
// initialize, session/new, session/prompt (with the agent's fs request to
// the client and its session/update chunks) and the end of the connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { client, ndJsonStream, methods, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { RINGFENCE, MODULES, workspace, runArgs, secretOutside } from './lib.mjs';

test('ACP: initialize and a session round trip with an agent inside ringfence run', async () => {
  const ws = workspace('acp', ['acp-agent.mjs']);
  writeFileSync(join(ws, 'note.txt'), 'a note from the host');
  const secret = secretOutside();
  const t0 = Date.now();
  const child = spawn(RINGFENCE, [...runArgs(ws, ['--env', `ACP_PROBE_PATHS=${secret}:${ws}/note.txt`]),
    process.execPath, join(ws, 'acp-agent.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  const reads = [];
  const app = client({ name: 'ringfence-tests' })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      reads.push(params.path);
      return { content: readFileSync(params.path, 'utf8') };
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const out = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize,
      { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } } });
    const initMs = Date.now() - t0;
    return ctx.buildSession(ws).withSession(async (session) => {
      const done = session.prompt('hello from the client');
      const text = await session.readText();
      const resp = await done;
      return { init, initMs, sessionId: session.sessionId, text, stop: resp.stopReason };
    });
  });
  child.stdin.end();
  const { code } = await exited;
  console.log(`timing: ACP initialize answered ${out.initMs} ms after ringfence run started`);
  assert.equal(out.init.protocolVersion, PROTOCOL_VERSION, stderr);
  assert.equal(out.init.agentInfo.name, 'ringfence-test-agent');
  assert.equal(out.sessionId, 'rf-1');
  assert.equal(out.stop, 'end_turn');
  assert.deepEqual(reads, [join(ws, 'note.txt')], 'the agent asked the client for the file');
  assert.ok(out.text.startsWith('report: '), out.text);
  const report = JSON.parse(out.text.slice('report: '.length));
  assert.equal(report.asked, 'hello from the client');
  assert.equal(report.note, 'a note from the host');
  assert.equal(report.cwd, ws);
  assert.equal(report.pid > 1 && report.pid < 100, true, 'its own pid namespace: pid ' + report.pid);
  assert.equal(report.sees[secret], false, 'a file outside the workspace is not visible inside');
  assert.equal(report.sees[`${ws}/note.txt`], true, 'the workspace is (positive control)');
  assert.equal(readFileSync(join(ws, 'written-by-agent.txt'), 'utf8'), 'hello from the client\n');
  assert.equal(code, 0, 'the agent ends when its stdin does: ' + stderr);
});

// The real one: Zed's Claude Code ACP adapter, unchanged, with no network
// and a dummy key. initialize and session/new need no API; a prompt would
// wait on the API, so the client cancels it (session/cancel) and the agent
// must end the turn with stopReason "cancelled".
test('ACP: @zed-industries/claude-code-acp inside ringfence run: initialize, session/new, prompt, cancel', async () => {
  const ws = workspace('claude-acp');
  const t0 = Date.now();
  const child = spawn(RINGFENCE, [...runArgs(ws, ['--env', 'ANTHROPIC_API_KEY=sk-ant-test', '--timeout', '120']),
    process.execPath, join(MODULES, '@zed-industries/claude-code-acp/dist/index.js')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  const updates = [];
  const app = client({ name: 'ringfence-tests' })
    .onNotification(methods.client.session.update, ({ params }) => { updates.push(params.update.sessionUpdate); })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: 'cancelled' } }));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const out = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize,
      { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
    const initMs = Date.now() - t0;
    const session = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sessionMs = Date.now() - t0;
    const turn = ctx.request(methods.agent.session.prompt,
      { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    await new Promise((r) => setTimeout(r, 2000));
    await ctx.notify(methods.agent.session.cancel, { sessionId: session.sessionId });
    const end = await turn;
    return { init, initMs, session, sessionMs, end };
  });
  child.stdin.end();
  child.kill('SIGTERM');
  await exited;
  console.log(`timing: claude-code-acp initialize answered ${out.initMs} ms, session/new ${out.sessionMs} ms after ringfence run started`);
  assert.equal(out.init.protocolVersion, PROTOCOL_VERSION, stderr);
  assert.equal(out.init.agentInfo.name, '@zed-industries/claude-code-acp');
  assert.match(out.session.sessionId, /^[0-9a-f-]{36}$/, JSON.stringify(out.session).slice(0, 200));
  assert.equal(out.end.stopReason, 'cancelled');
});
