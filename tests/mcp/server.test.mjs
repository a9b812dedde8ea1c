// SPDX-License-Identifier: LGPL-2.1-or-later
// `ringfence mcp` driven by the official MCP TypeScript SDK client: the
// tool list, every tool, the guard, workspace confinement, timeouts,
// truncation and cancellation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync, readFileSync, existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { RINGFENCE, scratchDir, connect, text, processesWith, until } from './lib.mjs';

const ws = scratchDir('ws');
const outside = scratchDir('outside');
const SECRET = 'the-secret-outside-' + process.pid;
writeFileSync(join(outside, 'secret.txt'), SECRET + '\n');
let s;

before(async () => {
  s = await connect(RINGFENCE, ['mcp', '--workspace', ws]);
});
after(async () => {
  await s?.client.close();
});

const call = (name, args, opts) => s.client.callTool({ name, arguments: args }, undefined, opts);

test('initialize: server info, tools capability, instructions', async () => {
  assert.equal(s.client.getServerVersion().name, 'ringfence');
  assert.ok(s.client.getServerCapabilities().tools, 'tools capability');
  assert.match(s.client.getInstructions() ?? '', /sandbox/);
});

test('tools/list: the six tools with strict input schemas; exec has an output schema', async () => {
  const { tools } = await s.client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['append_file', 'edit_file', 'exec', 'list_dir', 'read_file', 'write_file']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.inputSchema.additionalProperties, false, t.name);
    assert.ok(t.description.length > 20, t.name + ' has a description');
  }
  const exec = tools.find((t) => t.name === 'exec');
  assert.deepEqual(exec.inputSchema.required, ['command']);
  assert.equal(exec.inputSchema.properties.timeout_seconds.type, 'number');
  assert.deepEqual(exec.outputSchema.required.sort(), ['exit_code', 'stderr', 'stdout', 'timed_out']);
  const read = tools.find((t) => t.name === 'read_file');
  assert.equal(read.inputSchema.properties.offset.type, 'integer');
  assert.equal(read.annotations.readOnlyHint, true);
  const edit = tools.find((t) => t.name === 'edit_file');
  assert.deepEqual(edit.inputSchema.required.sort(), ['new_text', 'old_text', 'path']);
});

test('exec: stdout, exit code and the status record in structuredContent', async () => {
  const r = await call('exec', { command: 'echo hello; echo oops >&2; exit 3' });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.stdout, 'hello\n');
  assert.equal(r.structuredContent.stderr, 'oops\n');
  assert.equal(r.structuredContent.exit_code, 3);
  assert.equal(r.structuredContent.timed_out, false);
  assert.equal(r.structuredContent.status.exit_code, 3);
  assert.equal(typeof r.structuredContent.status.wall_seconds, 'number');
  assert.match(text(r), /hello/);
  assert.match(text(r), /exit code 3/);
});

test('exec: runs in the workspace, and the sandbox hides what is around it', async () => {
  // The guard would refuse `cd ..` as a command; a script gets past it,
  // and then the sandbox is what keeps the neighbours out of sight.
  writeFileSync(join(ws, 'peek.sh'), `pwd; cd ..; ls -a; cat ${join(outside, 'secret.txt')}\n`);
  const r = await call('exec', { command: 'sh peek.sh' });
  const [pwd, ...around] = r.structuredContent.stdout.trim().split('\n');
  assert.equal(pwd, ws);
  assert.ok(around.length > 0 && around.includes(ws.split('/').pop()), r.structuredContent.stdout);
  assert.ok(!around.some((n) => n.startsWith('rf-mcp-outside')), 'siblings of the workspace are invisible');
  assert.ok(!r.structuredContent.stdout.includes(SECRET));
  assert.match(r.structuredContent.stderr, /No such file/);
  const w = await call('exec', { command: 'echo made-by-exec > made.txt' });
  assert.equal(w.structuredContent.exit_code, 0);
  assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'made-by-exec\n');
});

test('exec: a plain command runs without a shell, with the meaning the shell gives it', async () => {
  writeFileSync(join(ws, 'ppid.sh'), '#!/bin/sh\nset -- $(cat /proc/$$/stat)\necho $4\n', { mode: 0o755 });
  writeFileSync(join(ws, 'no-hashbang'), 'echo from a script without a hashbang line\n', { mode: 0o755 });
  mkdirSync(join(ws, 'a-dir'), { recursive: true });
  // Executed directly, the script is the child of the sandbox's init (pid
  // 1); through a shell, the shell's.
  const ppid = async (command) => (await call('exec', { command })).structuredContent.stdout.trim();
  assert.equal(await ppid('./ppid.sh'), '1', 'a plain command is executed without a shell');
  assert.notEqual(await ppid('{ ./ppid.sh; }'), '1', 'control: through the shell, the shell is its parent');
  // It runs once, and holds nothing but its stdio: it cannot forge the
  // report of a failed exec that would make the tool run it again through
  // the shell.
  writeFileSync(join(ws, 'once.sh'), '#!/bin/sh\necho ran >> once.log\nls /proc/$$/fd\n', { mode: 0o755 });
  const once = (await call('exec', { command: './once.sh' })).structuredContent;
  assert.equal(readFileSync(join(ws, 'once.log'), 'utf8'), 'ran\n', 'a plain command runs exactly once');
  assert.equal(once.stdout.trim().split('\n').filter((fd) => !['0', '1', '2'].includes(fd)).length, 1,
               `only stdio and the script itself are open: ${once.stdout}`);
  // The same output and exit code as through the shell, failures included
  // (not found, a directory, no #! line: then the shell runs it after all).
  // The environment is compared as a set: dash passes it on in its own order.
  const outcome = (command, r) => [command === 'env' ? r.stdout.split('\n').sort() : r.stdout, r.stderr, r.exit_code];
  for (const command of ['env', 'ls -a', './no-hashbang', './a-dir', `no-such-program-${process.pid}`, 'printenv PWD']) {
    const plain = (await call('exec', { command })).structuredContent;
    const shell = (await call('exec', { command: `{ ${command}; }` })).structuredContent;
    assert.deepEqual(outcome(command, plain), outcome(command, shell), command);
  }
});

test('exec --no-pool: a plain command runs without a shell too, failures through the shell', async () => {
  writeFileSync(join(ws, 'ppid.sh'), '#!/bin/sh\nset -- $(cat /proc/$$/stat)\necho $4\n', { mode: 0o755 });
  const np = await connect(RINGFENCE, ['mcp', '--no-pool', '--workspace', ws]);
  try {
    const run = async (command) => (await np.client.callTool({ name: 'exec', arguments: { command } })).structuredContent;
    assert.equal((await run('./ppid.sh')).stdout.trim(), '1', 'executed without a shell');
    assert.notEqual((await run('{ ./ppid.sh; }')).stdout.trim(), '1', 'control: through the shell');
    const missing = await run(`no-such-program-${process.pid}`);
    assert.equal(missing.exit_code, 127);
    assert.match(missing.stderr, /^\/bin\/sh: 1: no-such-program-\d+: not found\n$/);
  } finally {
    await np.client.close();
  }
});

test('exec: the guard refuses dangerous patterns with the seed 001 message', async () => {
  const r = await call('exec', { command: 'rm -rf build' });
  assert.equal(r.isError, true);
  assert.match(text(r), /^Command blocked by safety guard \(dangerous pattern detected\)/);
  const s2 = await call('exec', { command: 'sudo id' });
  assert.equal(s2.isError, true);
});

test('exec: the guard refuses absolute paths outside the workspace', async () => {
  const r = await call('exec', { command: `cat ${join(outside, 'secret.txt')}` });
  assert.equal(r.isError, true);
  assert.match(text(r), /^Command blocked by safety guard \(path outside working dir\)/);
  assert.ok(!text(r).includes(SECRET));
});

test('exec: timeout_seconds stops the command and reports timed_out', async () => {
  const r = await call('exec', { command: 'echo started; sleep 30', timeout_seconds: 1 });
  assert.equal(r.structuredContent.timed_out, true);
  assert.equal(r.structuredContent.exit_code, 124);
  assert.equal(r.structuredContent.stdout, 'started\n');
  assert.match(text(r), /timed out/);
});

test('exec: output beyond the cap is cut with a marker', async () => {
  const r = await call('exec', { command: 'head -c 100000 /dev/zero | tr "\\0" a; echo err >&2' });
  const out = r.structuredContent.stdout;
  assert.ok(out.startsWith('a'.repeat(65536)));
  assert.match(out, /\n\[\.\.\. truncated 34464 bytes\]$/);
  assert.equal(r.structuredContent.stderr, 'err\n');
});

test('exec: invalid UTF-8 output still makes valid JSON', async () => {
  const r = await call('exec', { command: "printf 'a\\377b\\n'" });
  assert.equal(r.structuredContent.stdout, 'a\uFFFDb\n');
});

test('exec: cancelling the request kills the whole process tree', async () => {
  const marker = '987.' + process.pid;
  const ac = new AbortController();
  const p = call('exec', { command: `sleep ${marker}1 & sleep ${marker}2; wait` }, { signal: ac.signal });
  p.catch(() => {});
  assert.ok(await until(() => processesWith(marker).length >= 2), 'the commands started');
  ac.abort();
  await assert.rejects(p);
  assert.ok(await until(() => processesWith(marker).length === 0), 'every process of the call is gone');
  await s.client.ping(); // and the server carries on
});

test('exec: calls run concurrently', async () => {
  const slow = call('exec', { command: 'while [ ! -e go ]; do sleep 0.05; done; echo slow', timeout_seconds: 20 });
  const fast = await call('exec', { command: 'echo fast; touch go' });
  assert.equal(fast.structuredContent.stdout, 'fast\n');
  const r = await slow;
  assert.equal(r.structuredContent.stdout, 'slow\n');
});

test('exec: six calls that wait for one another all run at once (workers kept for the next call)', async () => {
  // One call first, so that a worker waits for the next; then five calls
  // that each wait for their file and a sixth that makes them all: each
  // needs a thread of its own, a waiting one or a new one. A call queued
  // for a busy worker would wait for ever.
  await call('exec', { command: 'true' });
  const waiting = [0, 1, 2, 3, 4].map((k) =>
    call('exec', { command: `while [ ! -e chain${k} ]; do sleep 0.05; done; echo ${k}`, timeout_seconds: 20 }));
  const maker = await call('exec', { command: 'touch chain0 chain1 chain2 chain3 chain4; echo made', timeout_seconds: 20 });
  assert.equal(maker.structuredContent.stdout, 'made\n');
  const done = await Promise.all(waiting);
  assert.deepEqual(done.map((r) => r.structuredContent.stdout), ['0\n', '1\n', '2\n', '3\n', '4\n']);
});

test('exec: many calls at once all come back right (no spawn deadlock under threads)', async () => {
  const lane = async (k) => {
    for (let i = 0; i < 6; i++) {
      const r = await call('exec', { command: `echo lane${k}-${i}`, timeout_seconds: 20 });
      assert.equal(r.structuredContent.stdout, `lane${k}-${i}\n`, JSON.stringify(r));
    }
  };
  await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(lane));
});

test('--max-calls: a call over the cap is a tool error, and the slot frees when one ends', async () => {
  const ws2 = scratchDir('cap');
  const c = await connect(RINGFENCE, ['mcp', '--workspace', ws2, '--max-calls', '1']);
  try {
    const held = c.client.callTool({ name: 'exec',
      arguments: { command: 'while [ ! -e go ]; do sleep 0.05; done; echo held', timeout_seconds: 20 } });
    // The first call holds the only slot from the moment it is accepted.
    await until(async () => {
      const r = await c.client.callTool({ name: 'read_file', arguments: { path: 'nothing' } });
      return /too many tool calls/.test(text(r));
    });
    const r = await c.client.callTool({ name: 'exec', arguments: { command: 'echo second' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /too many tool calls running at once \(limit 1\)/);
    writeFileSync(join(ws2, 'go'), '');
    assert.equal((await held).structuredContent.stdout, 'held\n');
    const after = await c.client.callTool({ name: 'exec', arguments: { command: 'echo third' } });
    assert.equal(after.structuredContent.stdout, 'third\n');
  } finally {
    await c.client.close();
  }
});

test('write_file, read_file with offset and limit, append_file, edit_file', async () => {
  let r = await call('write_file', { path: 'notes/a.txt', content: 'one\ntwo\nthree\n' });
  assert.equal(r.isError, false, text(r));
  assert.equal(readFileSync(join(ws, 'notes/a.txt'), 'utf8'), 'one\ntwo\nthree\n');
  r = await call('read_file', { path: 'notes/a.txt' });
  assert.equal(text(r), 'one\ntwo\nthree\n');
  r = await call('read_file', { path: 'notes/a.txt', offset: 2, limit: 1 });
  assert.equal(text(r), 'two\n');
  r = await call('append_file', { path: 'notes/a.txt', content: 'four\n' });
  assert.equal(r.isError, false, text(r));
  r = await call('edit_file', { path: 'notes/a.txt', old_text: 'two', new_text: 'TWO' });
  assert.equal(r.isError, false, text(r));
  assert.equal(readFileSync(join(ws, 'notes/a.txt'), 'utf8'), 'one\nTWO\nthree\nfour\n');
  r = await call('edit_file', { path: 'notes/a.txt', old_text: 'absent', new_text: 'x' });
  assert.equal(r.isError, true);
});

test('list_dir: flat and recursive', async () => {
  mkdirSync(join(ws, 'tree/sub'), { recursive: true });
  writeFileSync(join(ws, 'tree/top.txt'), 'x');
  writeFileSync(join(ws, 'tree/sub/deep.txt'), 'y');
  let r = await call('list_dir', { path: 'tree' });
  assert.deepEqual(text(r).trim().split('\n'), ['sub/', 'top.txt']);
  r = await call('list_dir', { path: 'tree', recursive: true });
  const lines = text(r).trim().split('\n');
  assert.ok(lines.includes('sub/deep.txt'), text(r));
});

test('file tools refuse traversal, absolute outside paths and symlink escapes', async () => {
  for (const path of ['../../etc/passwd', '/etc/passwd', join(outside, 'secret.txt')]) {
    const r = await call('read_file', { path });
    assert.equal(r.isError, true, path);
    assert.match(text(r), /access denied/, path);
    assert.ok(!text(r).includes('root:') && !text(r).includes(SECRET), path);
  }
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link.txt'));
  const l = await call('read_file', { path: 'link.txt' });
  assert.equal(l.isError, true);
  assert.ok(!text(l).includes(SECRET));
  const w = await call('write_file', { path: '../escaped.txt', content: 'x' });
  assert.equal(w.isError, true);
  assert.ok(!existsSync(join(ws, '..', 'escaped.txt')));
});

test('wrong arguments are tool errors; an unknown tool is a protocol error', async () => {
  const r = await call('exec', {});
  assert.equal(r.isError, true);
  assert.match(text(r), /missing required argument "command"/);
  const t = await call('read_file', { path: 'x', offset: 'one' });
  assert.equal(t.isError, true);
  const u = await call('list_dir', { path: '.', extra: 1 });
  assert.match(text(u), /unknown argument/);
  await assert.rejects(call('no_such_tool', {}), (e) => e.code === -32602);
});
