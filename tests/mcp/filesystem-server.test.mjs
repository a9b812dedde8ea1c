// SPDX-License-Identifier: LGPL-2.1-or-later
// A third-party MCP server inside `ringfence run`: the real
// @modelcontextprotocol/server-filesystem, spoken to by the SDK client
// through the sandbox's untouched stdio. It must work in its workspace and
// see nothing outside it, even a directory it was told it may serve.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { RINGFENCE, scratchDir, connect, text } from './lib.mjs';

const require = createRequire(import.meta.url);
const serverPkg = dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json'));
const nodeModules = dirname(dirname(serverPkg));
const ws = scratchDir('fsws');
const outside = scratchDir('fsout');
const SECRET = 'filesystem-secret-' + process.pid;
writeFileSync(join(ws, 'hello.txt'), 'hello from the workspace\n');
writeFileSync(join(outside, 'secret.txt'), SECRET + '\n');
let s;

before(async () => {
  // `outside` is on the server's own allow-list: only the sandbox keeps it out.
  // A Node.js installed outside /usr (nvm, /opt) must be exposed too.
  const exposeNode = process.execPath.startsWith('/usr/') ? [] : ['--expose', dirname(dirname(process.execPath))];
  s = await connect(RINGFENCE, ['run', '--workspace', ws, '--expose', nodeModules, ...exposeNode, '--',
    process.execPath, join(serverPkg, 'dist/index.js'), ws, outside]);
});
after(async () => {
  await s?.client.close();
});

// The server answers a refusal either as an error result or a thrown error.
async function attempt(name, args) {
  try {
    const r = await s.client.callTool({ name, arguments: args });
    return { error: r.isError === true, text: text(r) };
  } catch (e) {
    return { error: true, text: String(e?.message ?? e) };
  }
}

test('the filesystem server starts inside ringfence run and lists its tools', async () => {
  const { tools } = await s.client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes('list_directory'), names.join(','));
  assert.ok(names.includes('read_text_file'), names.join(','));
});

test('it lists the workspace', async () => {
  const r = await attempt('list_directory', { path: ws });
  assert.equal(r.error, false, r.text);
  assert.match(r.text, /hello\.txt/);
});

test('it reads a file in the workspace', async () => {
  const r = await attempt('read_text_file', { path: join(ws, 'hello.txt') });
  assert.equal(r.error, false, r.text);
  assert.match(r.text, /hello from the workspace/);
});

test('it cannot read a file outside the workspace, even one it was allowed', async () => {
  const r = await attempt('read_text_file', { path: join(outside, 'secret.txt') });
  assert.equal(r.error, true, r.text);
  assert.ok(!r.text.includes(SECRET), r.text);
  const l = await attempt('list_directory', { path: outside });
  assert.ok(!l.text.includes('secret.txt'), l.text);
});

test('it cannot read system secrets either', async () => {
  const r = await attempt('read_text_file', { path: '/etc/shadow' });
  assert.equal(r.error, true);
  assert.ok(!/root:/.test(r.text), r.text);
});
