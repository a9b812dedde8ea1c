// SPDX-License-Identifier: LGPL-2.1-or-later
// `ringfence mcp` at the wire level: what a well-behaved SDK never sends.
// Malformed JSON, wrong requests, over-long lines, batches and version
// negotiation, each followed by proof that the server is still serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { rawSession, rawInit, scratchDir } from './lib.mjs';

const ws = scratchDir('raw');
const open = () => rawSession(['--workspace', ws]);
const ping = (s, id) => s.send({ jsonrpc: '2.0', id, method: 'ping' });

test('malformed JSON gets -32700 and the server answers the next ping', async () => {
  const s = open();
  s.write('this is not json\n');
  s.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  const e = await s.next();
  assert.equal(e.error.code, -32700);
  assert.equal(e.id, null);
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 1, result: {} });
  assert.equal(await s.close(), 0);
});

test('every protocol version of the SDK is accepted as asked; an unknown one gets the newest', async () => {
  for (const v of [...SUPPORTED_PROTOCOL_VERSIONS, '1999-01-01']) {
    const s = open();
    const r = await rawInit(s, v);
    const want = SUPPORTED_PROTOCOL_VERSIONS.includes(v) ? v : LATEST_PROTOCOL_VERSION;
    assert.equal(r.result.protocolVersion, want, `asked ${v}`);
    assert.equal(r.result.serverInfo.name, 'ringfence');
    assert.deepEqual(r.result.capabilities, { tools: { listChanged: false }, logging: {} });
    await s.close();
  }
});

test('invalid requests get the right JSON-RPC errors, with their id when it is usable', async () => {
  const s = open();
  const cases = [
    [{ jsonrpc: '2.0', id: 2, method: 'no/such/method' }, -32601, 2],
    [{ id: 3, method: 'ping' }, -32600, 3],
    [{ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, -32600, null],
    [{ jsonrpc: '2.0', id: 4, method: 'ping', params: 'text' }, -32600, 4],
    [{ jsonrpc: '2.0', id: 5, method: 42 }, -32600, 5],
    [[], -32600, null],
    ['"just a string"', -32600, null],
    [{ jsonrpc: '2.0', id: 6, method: 'tools/list' }, -32600, 6], // before initialize
    [{ jsonrpc: '2.0', id: 7, method: 'initialize', params: {} }, -32602, 7],
  ];
  for (const [msg, code, id] of cases) {
    if (typeof msg === 'string') s.write(msg + '\n'); else s.send(msg);
    const r = await s.next();
    assert.equal(r.error?.code, code, JSON.stringify(msg));
    assert.equal(r.id, id, JSON.stringify(msg));
    assert.equal(typeof r.error.message, 'string');
  }
  await rawInit(s);
  s.send({ jsonrpc: '2.0', id: 8, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
  assert.equal((await s.next()).error.code, -32600, 'a second initialize');
  s.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } });
  assert.equal((await s.next()).error.code, -32602, 'tools/call without a name');
  s.send({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: { cursor: 'bogus' } });
  assert.equal((await s.next()).error.code, -32602, 'a cursor we never gave');
  s.send({ jsonrpc: '2.0', method: 'notifications/whatever' }); // never answered
  s.send({ jsonrpc: '2.0', id: 11, result: {} });               // a response: ignored
  ping(s, 'last');
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 'last', result: {} });
  assert.equal(await s.close(), 0);
});

test('an over-long message is refused and the server keeps serving', async () => {
  const s = open();
  s.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + 'x'.repeat(5 << 20) + '"}}\n');
  ping(s, 2);
  const e = await s.next(20000);
  assert.equal(e.error.code, -32600);
  assert.match(e.error.message, /longer than/);
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 2, result: {} });
  await s.close();
});

test('batches: refused under 2025-06-18, answered as an array under 2025-03-26', async () => {
  const s = open();
  await rawInit(s, '2025-06-18');
  s.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  const e = await s.next();
  assert.equal(e.error.code, -32600);
  await s.close();

  const b = open();
  await rawInit(b, '2025-03-26');
  b.send([
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/whatever' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'exec', arguments: { command: 'echo batched' } } },
    { jsonrpc: '2.0', id: 3, method: 'nope' },
  ]);
  const r = await b.next();
  assert.ok(Array.isArray(r), 'one array answers the batch');
  const byId = Object.fromEntries(r.map((m) => [m.id, m]));
  assert.deepEqual(Object.keys(byId).sort(), ['1', '2', '3']);
  assert.deepEqual(byId[1].result, {});
  assert.match(byId[2].result.content[0].text, /batched/);
  assert.equal(byId[2].result.structuredContent, undefined, 'no structuredContent before 2025-06-18');
  assert.equal(byId[3].error.code, -32601);
  await b.close();
});

test('protocol 2024-11-05: no output schemas, titles or annotations', async () => {
  const s = open();
  await rawInit(s, '2024-11-05');
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const { result } = await s.next();
  for (const t of result.tools) {
    assert.equal(t.outputSchema, undefined, t.name);
    assert.equal(t.annotations, undefined, t.name);
  }
  await s.close();
});

test('end of input: a call still running after the grace is stopped, unanswered, and the server exits 0', async () => {
  const s = open();
  await rawInit(s);
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec', arguments: { command: 'sleep 600' } } });
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  assert.equal(await s.close(), 0);
  assert.ok(Date.now() - t0 < 30000, 'stopped after the grace, not after the command');
  await new Promise((r) => setTimeout(r, 200)); // stdout may still be draining at 'exit'
  assert.equal(s.pending(), 0, 'no answer for the stopped call');
});

test('end of input: a call in flight that ends within the grace is answered first', async () => {
  const s = open();
  await rawInit(s);
  s.send({ jsonrpc: '2.0', id: 7, method: 'tools/call',
           params: { name: 'exec', arguments: { command: 'sleep 1; echo finished-after-eof' } } });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(await s.close(), 0);
  const r = await s.next();
  assert.equal(r.id, 7);
  assert.match(r.result.content[0].text, /finished-after-eof/);
});

test('logging/setLevel: log lines become notifications/message at that level and above, none before', async () => {
  const s = open();
  await rawInit(s);
  const blocked = (id) => s.send({ jsonrpc: '2.0', id, method: 'tools/call',
                                   params: { name: 'exec', arguments: { command: 'rm -rf build' } } });
  blocked(1); // logged at info, but the client has not asked for logs
  assert.equal((await s.next()).id, 1);
  s.send({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'loud' } });
  assert.equal((await s.next()).error.code, -32602, 'an unknown level');
  s.send({ jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'warning' } });
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 3, result: {} });
  blocked(4); // info is below warning: still nothing
  assert.equal((await s.next()).id, 4);
  s.send({ jsonrpc: '2.0', id: 5, method: 'logging/setLevel', params: { level: 'info' } });
  assert.equal((await s.next()).id, 5);
  blocked(6);
  const n = await s.next();
  assert.equal(n.method, 'notifications/message', JSON.stringify(n));
  assert.equal(n.params.level, 'info');
  assert.equal(n.params.logger, 'ringfence');
  assert.match(n.params.data, /^exec blocked: /);
  assert.equal((await s.next()).id, 6);
  assert.equal(await s.close(), 0);
});
