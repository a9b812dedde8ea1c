// SPDX-License-Identifier: LGPL-2.1-or-later
// onAsk: ringfence's questions (--ask socket:) answered in-process, and the
// socket's directory keeps every other uid out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { execFileSync, spawnSync } from 'node:child_process';
import { rf, require, PKG, scratchDir, connectVia } from './lib.mjs';

const ws = scratchDir('ask-ws');
let srv, port;
before(async () => {
  srv = net.createServer((c) => c.end());
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  port = srv.address().port;
});
after(() => srv.close());

const opts = (onAsk) => ({ workspace: ws, addHosts: ['e.test:127.0.0.1'], onAsk, askTimeout: 10 });

test('onAsk: the question is answered in-process, with the process that asked', async () => {
  const asked = [];
  const r = await rf.run(connectVia('e.test', port), opts(async (q) => { asked.push(q); return { decision: 'allow', scope: 'once' }; }));
  assert.match(r.stdout, /HTTP\/1.1 200/, r.stdout + r.stderr);
  assert.equal(asked.length, 1);
  const q = asked[0];
  assert.equal(q.type, 'network');
  assert.equal(q.host, 'e.test');
  assert.equal(q.port, port);
  assert.equal(q.process?.name, 'python3');
  assert.ok(q.process.pid > 0);
  assert.equal(r.network.asked.allowed, 1);
  assert.equal(r.network.asked.list[0].by, 'socket');
});

test('onAsk: deny, a bad answer and a throwing handler all refuse', async () => {
  for (const handler of [() => ({ decision: 'deny' }), () => ({ decision: 'yes please' }), () => { throw new Error('boom'); }]) {
    const r = await rf.run(connectVia('e.test', port), opts(handler));
    assert.match(r.stdout, /HTTP\/1.1 403/, r.stdout + r.stderr);
    assert.equal(r.network.asked.allowed, 0);
  }
});

test('onAsk: scope run is remembered for the rest of the run (asked once)', async () => {
  let n = 0;
  const r = await rf.run(connectVia('e.test', port, 2), opts(() => { n++; return { decision: 'allow', scope: 'run' }; }));
  assert.equal(n, 1);
  assert.equal((r.stdout.match(/200/g) || []).length, 2, r.stdout);
});

test('the ask socket is in a 0700 directory: another uid cannot connect', async (t) => {
  const cli = require(`${PKG}/lib/cli.cjs`);
  const ask = require(`${PKG}/lib/ask.cjs`);
  const dir = cli.privateDir();
  const l = ask.listen(dir, () => ({ decision: 'allow' }));
  try {
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    // our own uid connects and gets an answer
    const answer = await new Promise((resolve, reject) => {
      const c = net.connect(l.path, () => c.write('{"version":1,"type":"network","id":5,"host":"x"}\n'));
      c.on('data', (d) => { resolve(JSON.parse(d)); c.end(); });
      c.on('error', reject);
    });
    assert.deepEqual(answer, { id: 5, decision: 'allow', scope: 'once' });
    const user = process.env.RF_TEST_USER || 'rftest';
    if (process.getuid() !== 0 || spawnSync('id', [user]).status !== 0) {
      t.skip(`needs root and the user ${user} to try another uid`);
      return;
    }
    const py = `import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print('connected')\nexcept OSError as e:\n print(e.errno)`;
    const out = execFileSync('runuser', ['-u', user, '--', 'python3', '-c', py, l.path]).toString().trim();
    assert.equal(out, '13', 'EACCES for another uid'); // errno 13
  } finally {
    l.close();
    cli.removeDir(dir);
  }
});

test('onAsk: a question line longer than 64 KiB drops the connection, no answer', async () => {
  const cli = require(`${PKG}/lib/cli.cjs`);
  const ask = require(`${PKG}/lib/ask.cjs`);
  const dir = cli.privateDir();
  let asked = 0;
  const l = ask.listen(dir, () => { asked++; return true; });
  try {
    const closed = await new Promise((resolve) => {
      const c = net.connect(l.path, () => c.write('x'.repeat(70 << 10)));
      c.on('close', () => resolve(true));
      c.on('error', () => {});
    });
    assert.ok(closed);
    assert.equal(asked, 0);
  } finally {
    l.close();
    cli.removeDir(dir);
  }
});
