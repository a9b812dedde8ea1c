// SPDX-License-Identifier: LGPL-2.1-or-later
// Third-party MCP servers hosted inside `ringfence run`, driven by the
// official MCP SDK client through the sandbox's stdio: npm's
// @modelcontextprotocol/server-memory (its knowledge graph stored in the
// workspace) and a Python MCP server (mcp_server.py, stdlib only: the `mcp`
// package cannot be installed offline). (server-filesystem is in tests/mcp.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RINGFENCE, MODULES, workspace, runArgs, secretOutside } from './lib.mjs';

async function connect(args) {
  const transport = new StdioClientTransport({ command: RINGFENCE, args, stderr: 'pipe',
    env: { ...getDefaultEnvironment(), RINGFENCE_HOME: process.env.RINGFENCE_HOME } });
  let stderr = '';
  transport.stderr?.on('data', (b) => { stderr += b; });
  const client = new Client({ name: 'ringfence-tests', version: '1.0.0' });
  const t0 = Date.now();
  await client.connect(transport);
  return { client, ms: Date.now() - t0, stderr: () => stderr };
}
const json = (r) => JSON.parse(r.content.find((c) => c.type === 'text').text);

test('server-memory inside ringfence run: entities stored in the workspace, read back', async () => {
  const ws = workspace('memory');
  const store = join(ws, 'memory.jsonl');
  const s = await connect([...runArgs(ws, ['--env', `MEMORY_FILE_PATH=${store}`]), process.execPath,
    join(MODULES, '@modelcontextprotocol/server-memory/dist/index.js')]);
  try {
    console.log(`timing: server-memory initialized ${s.ms} ms after ringfence run started`);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('create_entities') && names.includes('read_graph'), names.join(','));
    await s.client.callTool({ name: 'create_entities', arguments: { entities: [
      { name: 'ringfence', entityType: 'project', observations: ['a sandbox written in C'] }] } });
    await s.client.callTool({ name: 'add_observations', arguments: { observations: [
      { entityName: 'ringfence', contents: ['hosts MCP servers'] }] } });
    const graph = await s.client.callTool({ name: 'read_graph', arguments: {} });
    const g = graph.structuredContent ?? json(graph);
    const e = g.entities.find((x) => x.name === 'ringfence');
    assert.deepEqual(e.observations, ['a sandbox written in C', 'hosts MCP servers'], s.stderr());
    assert.match(readFileSync(store, 'utf8'), /hosts MCP servers/, 'stored in the workspace on the host');
  } finally {
    await s.client.close();
  }
});

test('a Python MCP server inside ringfence run: its tools, its workspace, nothing outside', async () => {
  const ws = workspace('python', ['mcp_server.py']);
  const secret = secretOutside();
  const s = await connect([...runArgs(ws), '/usr/bin/python3', join(ws, 'mcp_server.py')]);
  try {
    console.log(`timing: the Python server initialized ${s.ms} ms after ringfence run started`);
    assert.equal(s.client.getServerVersion().name, 'ringfence-python-test-server');
    const names = (await s.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['can_read', 'whoami', 'write_note']);
    const who = json(await s.client.callTool({ name: 'whoami', arguments: {} }));
    assert.equal(who.cwd, ws);
    assert.ok(who.pid > 1 && who.pid < 100, 'its own pid namespace: pid ' + who.pid);
    const out = json(await s.client.callTool({ name: 'can_read', arguments: { path: secret } }));
    assert.equal(out.readable, false, 'a file outside the workspace is not visible: ' + JSON.stringify(out));
    const inside = json(await s.client.callTool({ name: 'can_read', arguments: { path: join(ws, 'mcp_server.py') } }));
    assert.equal(inside.first_line, '#!/usr/bin/env python3', 'the workspace is (positive control)');
    await s.client.callTool({ name: 'write_note', arguments: { text: 'from python' } });
    assert.equal(readFileSync(join(ws, 'note.txt'), 'utf8'), 'from python');
    await s.client.ping();
  } finally {
    await s.client.close();
  }
});
