// SPDX-License-Identifier: LGPL-2.1-or-later
// Issue 31 in `ringfence mcp`: a call whose command was refused a name
// says which host, so the agent can tell its user; with --ask mcp and a
// client that declared `elicitation`, the client is asked instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { RINGFENCE, scratchDir, connect, text, serverEnv } from './lib.mjs';

const ws = scratchDir('ask-ws');
let s;
before(async () => {
  s = await connect(RINGFENCE, ['mcp', '--workspace', ws, '--allow-domain', 'allowed.test']);
});
after(async () => {
  await s?.client.close();
});

test('exec: the result names the host the proxy refused', async () => {
  const py = "import socket; s = socket.create_connection(('127.0.0.1', 3128)); " +
    "s.sendall(b'CONNECT needed.example:443 HTTP/1.1\\r\\nHost: needed.example\\r\\n\\r\\n'); print(s.recv(12))";
  const r = await s.client.callTool({ name: 'exec', arguments: { command: `python3 -c "${py}"` } });
  const t = text(r);
  assert.match(t, /HTTP\/1.1 403/, t);
  assert.match(t, /\[network: refused needed\.example:443 \(not in allow_domains\)\]/, t);
});

test('exec: nothing refused, no network line', async () => {
  const r = await s.client.callTool({ name: 'exec', arguments: { command: 'echo quiet' } });
  assert.doesNotMatch(text(r), /\[network:/);
});

// network.ask: mcp with a client that declared `elicitation`: the proxy's
// question arrives as elicitation/create; accept lets the connection
// through, decline refuses it.

test('elicitation: accept lets the connection through, decline refuses it', async () => {
  const srv = net.createServer((c) => c.end());
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  const asked = [];
  let answer = { action: 'accept', content: { scope: 'once' } };
  const transport = new StdioClientTransport({
    command: RINGFENCE, args: ['mcp', '--workspace', ws, '--ask', 'mcp', '--ask-timeout', '5',
      '--add-host', 'e.test:127.0.0.1'], env: serverEnv(), stderr: 'pipe' });
  const client = new Client({ name: 'ringfence-ask-tests', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  let stderr = '';
  transport.stderr?.on('data', (b) => { stderr += b; });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return answer;
  });
  await client.connect(transport);
  const py = "import socket; s = socket.create_connection(('127.0.0.1', 3128)); " +
    `s.sendall(b'CONNECT e.test:${port} HTTP/1.1\\r\\nHost: e.test\\r\\n\\r\\n'); print(s.recv(12))`;
  const run = async () => text(await client.callTool({ name: 'exec', arguments: { command: `python3 -c "${py}"` } }));
  try {
    const yes = await run().catch((e) => { throw new Error(`${e.message}; server stderr: ${stderr}`); });
    assert.match(yes, /HTTP\/1.1 200/, yes);
    assert.equal(asked.length, 1);
    assert.match(asked[0], new RegExp(`e\\.test:${port} \\(connect\\)`));
    answer = { action: 'decline' };
    const no = await run().catch((e) => { throw new Error(`${e.message}; server stderr: ${stderr}`); });
    assert.match(no, /HTTP\/1.1 403/, no);
    assert.match(no, /\[network: refused e\.test:\d+ \(refused when asked\)\]/, no);
    assert.equal(asked.length, 2, 'asked again: "once" is not remembered');
  } finally {
    await client.close();
    srv.close();
  }
});

test('elicitation: a client without the capability is not asked; the result names the host', async () => {
  const s2 = await connect(RINGFENCE, ['mcp', '--workspace', ws, '--ask', 'mcp', '--add-host', 'e.test:127.0.0.1']);
  try {
    const py = "import socket; s = socket.create_connection(('127.0.0.1', 3128)); " +
      "s.sendall(b'CONNECT e.test:443 HTTP/1.1\\r\\nHost: e.test\\r\\n\\r\\n'); print(s.recv(12))";
    const t = text(await s2.client.callTool({ name: 'exec', arguments: { command: `python3 -c "${py}"` } }));
    assert.match(t, /HTTP\/1.1 403/, t);
    assert.match(t, /\[network: refused e\.test:443 \(not in allow_domains\)\]/, t);
  } finally {
    await s2.client.close();
  }
});
