// SPDX-License-Identifier: LGPL-2.1-or-later
// Issue 31 in `ringfence mcp`: a call whose command was refused a name
// says which host, so the agent can tell its user (elicitation/create is
// not available yet).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RINGFENCE, scratchDir, connect, text } from './lib.mjs';

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
