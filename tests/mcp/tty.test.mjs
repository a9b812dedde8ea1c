// SPDX-License-Identifier: LGPL-2.1-or-later
// exec's tty and stdin arguments, driven by the official SDK client: a
// terminal of the command's own inside (the native backend's pty), the
// stdin text typed into it then end of file, what the terminal showed as
// the result; the caps, the timeout and cancellation as without a tty; a
// backend without a terminal fails the call, not the server; and nothing
// the command does on its terminal reaches the MCP stream.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RINGFENCE, scratchDir, connect, processesWith, until, text } from './lib.mjs';

const sessions = [];
after(async () => {
  for (const s of sessions) await s.client.close();
});

async function server(extra = []) {
  const ws = scratchDir('tty');
  const s = await connect(RINGFENCE, ['mcp', '--workspace', ws, ...extra]);
  sessions.push(s);
  s.ws = ws;
  s.call = (args, opts) => s.client.callTool({ name: 'exec', arguments: args }, undefined, { timeout: 60000, ...opts });
  return s;
}

const ISATTY = "sh -c 'tty && test -t 0 && test -t 1 && test -t 2 && echo yes'";

for (const mode of ['pool', 'no-pool']) {
  const extra = mode === 'no-pool' ? ['--no-pool'] : [];

  test(`${mode}: tools/list documents tty and stdin`, async () => {
    const s = await server(extra);
    const { tools } = await s.client.listTools();
    const props = tools.find((t) => t.name === 'exec').inputSchema.properties;
    assert.equal(props.tty.type, 'boolean');
    assert.match(props.tty.description, /merged/);
    assert.equal(props.stdin.type, 'string');
  });

  test(`${mode}: with tty:true the command is on a terminal; without, it is not`, async () => {
    const s = await server(extra);
    const on = await s.call({ command: ISATTY, tty: true });
    assert.equal(on.structuredContent.exit_code, 0, text(on));
    assert.equal(on.structuredContent.stdout, '/dev/pts/0\r\nyes\r\n');
    assert.equal(on.structuredContent.stderr, '');
    const off = await s.call({ command: ISATTY });
    assert.equal(off.structuredContent.exit_code, 1);
    assert.equal(off.structuredContent.stdout, 'not a tty\n');
    const no = await s.call({ command: ISATTY, tty: false });
    assert.equal(no.structuredContent.stdout, 'not a tty\n');
  });

  test(`${mode}: a prompt gets the stdin text, stdout and stderr merged`, async () => {
    const s = await server(extra);
    const r = await s.call({
      command: `python3 -c 'import sys; n = input("name? "); print("hello", n); print("to stderr", file=sys.stderr)'`,
      tty: true, stdin: 'bob\n' });
    assert.equal(r.structuredContent.exit_code, 0, text(r));
    // The echo of the typed line (typed before the prompt was printed),
    // the prompt, then both streams in the order written.
    assert.equal(r.structuredContent.stdout, 'bob\r\nname? hello bob\r\nto stderr\r\n');
  });

  test(`${mode}: a REPL reading to end of file ends (Ctrl-D after the text)`, async () => {
    const s = await server(extra);
    const r = await s.call({ command: 'cat', tty: true, stdin: 'one\ntwo' });
    assert.equal(r.structuredContent.exit_code, 0, text(r));
    // cat sees "one\n", then "two" (the first Ctrl-D ends the partial
    // line), then end of file (the second).
    assert.match(r.structuredContent.stdout, /^one\r\n(one\r\n)?two/);
    const r2 = await s.call({ command: 'cat', tty: true });
    assert.equal(r2.structuredContent.exit_code, 0, 'no stdin: end of file at once');
  });

  test(`${mode}: stdin without tty is a pipe to the command`, async () => {
    const s = await server(extra);
    const r = await s.call({ command: 'wc -c', stdin: 'x'.repeat(65536) });
    assert.equal(r.structuredContent.stdout.trim(), '65536');
    const big = await s.call({ command: 'true', stdin: 'x'.repeat(65537) });
    assert.equal(big.isError, true);
    assert.match(text(big), /stdin is 65537 bytes; at most 65536/);
  });

  test(`${mode}: 1 MiB written to the terminal comes back capped, without a hang`, async () => {
    const s = await server(['--max-output', '4096', ...extra]);
    const r = await s.call({ command: "head -c 1048576 /dev/zero | tr '\\0' x", tty: true, timeout_seconds: 30 });
    assert.equal(r.structuredContent.exit_code, 0, text(r));
    assert.equal(r.structuredContent.timed_out, false);
    assert.match(r.structuredContent.stdout, /^x{4096}\n\[\.\.\. truncated 1044480 bytes\]$/);
  });

  test(`${mode}: tty:true keeps the timeout`, async () => {
    const s = await server(extra);
    const r = await s.call({ command: 'echo started; sleep 30', tty: true, timeout_seconds: 1 });
    assert.equal(r.structuredContent.timed_out, true);
    assert.equal(r.structuredContent.exit_code, 124);
    assert.equal(r.structuredContent.stdout, 'started\r\n');
  });

  test(`${mode}: cancelling a tty call kills its tree; the server carries on`, async () => {
    const s = await server(extra);
    const marker = '876.' + process.pid;
    const ac = new AbortController();
    const p = s.call({ command: `sleep ${marker}1 & sleep ${marker}2; wait`, tty: true }, { signal: ac.signal });
    p.catch(() => {});
    assert.ok(await until(() => processesWith(marker).length >= 2), 'the commands started');
    ac.abort();
    await assert.rejects(p);
    assert.ok(await until(() => processesWith(marker).length === 0), 'every process of the call is gone');
    const r = await s.call({ command: 'echo after', tty: true });
    assert.equal(r.structuredContent.stdout, 'after\r\n');
  });

  test(`${mode}: /dev/tty and TIOCSTI inside reach the terminal's output, never the MCP stream`, async () => {
    const s = await server(extra);
    // A script, so the guard does not refuse the absolute path /dev/tty.
    writeFileSync(join(s.ws, 'abuse.py'), [
      'import fcntl, os, termios',
      'fd = os.open("/dev/tty", os.O_RDWR)',
      // A well-formed JSON-RPC answer to an id the client waits for, and one
      // to a request it never sent, each on its own line.
      'os.write(fd, b\'\\n{"jsonrpc":"2.0","id":2,"result":{"content":[]}}\\n\')',
      'os.write(fd, b\'{"jsonrpc":"2.0","id":424242,"result":{}}\\n\')',
      'for t in (fd, 0, 1):',
      '    try:',
      '        fcntl.ioctl(t, termios.TIOCSTI, b"x")',
      '        print("TIOCSTI allowed")',
      '    except OSError as e:',
      '        print("TIOCSTI", e.errno)',
      '',
    ].join('\n'));
    const r = await s.call({ command: 'python3 abuse.py', tty: true });
    assert.equal(r.structuredContent.exit_code, 0, text(r));
    const out = r.structuredContent.stdout;
    assert.ok(out.includes('"id":424242'), 'what it wrote is in the result');
    assert.equal((out.match(/TIOCSTI 1\r\n/g) ?? []).length, 3, out);
    // The client still parses every answer, and the next call gets its own.
    const next = await s.call({ command: 'echo next' });
    assert.equal(next.structuredContent.stdout, 'next\n');
    await s.client.ping();
  });
}

test('a backend without a terminal: the tty call fails clearly, the server lives on', async () => {
  const s = await server(['--backend', 'landlock', '--accept-weaker']);
  const r = await s.call({ command: 'tty', tty: true });
  assert.equal(r.isError, true);
  assert.match(text(r), /tty: backend landlock cannot give the command a terminal of its own/);
  assert.match(text(r), /hint: call exec without tty/);
  const plain = await s.call({ command: 'echo fine' });
  assert.equal(plain.structuredContent.stdout, 'fine\n');
});
