// SPDX-License-Identifier: LGPL-2.1-or-later
// The package's parsers under random input (a seeded generator: a failure
// names its seed, RF_NODE_SEED=N repeats it): the ask socket's question
// lines, ringfence's error lines, the options, printable(). JavaScript has
// no libFuzzer target in fuzz/; this is its stand-in, run in every suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { require, PKG } from './lib.mjs';

const ask = require(`${PKG}/lib/ask.cjs`);
const cli = require(`${PKG}/lib/cli.cjs`);
const errors = require(`${PKG}/lib/errors.cjs`);
const options = require(`${PKG}/lib/options.cjs`);
const { printable } = require(PKG);

const SEED = Number(process.env.RF_NODE_SEED || Date.now() % 1e9);
function prng(seed) { // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = prng(SEED);
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];
const chars = ['a', '/', ':', ' ', '\n', '\0', '\x1b', '{', '}', '"', "'", '=', '-', 'é', '\u202e', '\\', ','];
const junk = (n = int(40)) => Array.from({ length: n }, () => pick(chars)).join('');
function value(depth = 0) {
  switch (int(depth > 2 ? 5 : 8)) {
    case 0: return junk();
    case 1: return int(1e6) - 500;
    case 2: return pick([true, false, null, undefined, NaN, 1.5]);
    case 3: return pick(['none', 'host', 'allowlist', 'ro', 'rw', 'overlay', '--help', '-x', '/tmp', '']);
    case 4: return String(int(100));
    case 5: return Array.from({ length: int(4) }, () => value(depth + 1));
    default: return Object.fromEntries(Array.from({ length: int(4) }, () => [pick([junk(5), 'url', 'mode', 'source', 'headers', 'memory']), value(depth + 1)]));
  }
}
const KEYS = ['workspace', 'network', 'allowDomains', 'expose', 'env', 'limits', 'timeout', 'routes', 'profile', 'instance', 'changes', 'config', 'configFiles', 'pty', junk(6)];

test(`options: random options either throw RingfenceError or give --flags only (seed ${SEED})`, () => {
  for (let i = 0; i < 3000; i++) {
    const o = Object.fromEntries(Array.from({ length: int(5) }, () => [pick(KEYS), value()]));
    let r;
    try {
      r = options.toFlags(o);
    } catch (e) {
      assert.ok(e instanceof errors.RingfenceError, `seed ${SEED}: ${e.stack}`);
      assert.ok(e.step, `seed ${SEED}: an error names the option`);
      continue;
    }
    for (const f of r.flags) {
      assert.match(f, /^--[a-z-]+(=|$)/s, `seed ${SEED}: ${JSON.stringify(o)} → ${f}`);
      assert.ok(!f.includes('\0'), `seed ${SEED}: NUL in ${JSON.stringify(f)}`);
    }
  }
});

test(`errors: any stderr gives a RingfenceError with string or null fields (seed ${SEED})`, () => {
  for (let i = 0; i < 5000; i++) {
    const lines = Array.from({ length: int(5) }, () => pick(['ringfence: ', 'hint: ', 'ringfence: warning: ', '', "sandbox setup failed at step '"]) + junk());
    const e = errors.fromStderr(lines.join('\n'), 125, 'fallback');
    assert.ok(e instanceof errors.RingfenceError);
    for (const k of ['step', 'path', 'hint'])
      assert.ok(e[k] === null || typeof e[k] === 'string', `seed ${SEED}: ${k}`);
    assert.ok(e.path === null || e.path.startsWith('/'));
  }
});

test('errors: what ringfence prints, taken apart', () => {
  const cases = [
    ["sandbox setup failed at step 'mount-sources' for /opt/x: No such file or directory", 'mount-sources', '/opt/x'],
    ["sandbox setup failed at step 'landlock': Operation not permitted", 'landlock', null],
    ['workspace (from command line): /nonexist: No such file or directory', 'workspace', '/nonexist'],
    ['limits.memory (from /tmp/a/settings.json): lots: expected a size', 'limits.memory', null],
    ['/w/noexec.sh is not executable', null, '/w/noexec.sh'],
    ['command not found: /no/such', 'command not found', '/no/such'],
  ];
  for (const [m, step, p] of cases)
    assert.deepEqual(errors.locate(m), { step, path: p }, m);
  const e = errors.fromStderr('noise\nringfence: warning: w\nringfence: a: b\nhint: fix it\nringfence: warning: later\n', 125, 'f');
  assert.equal(e.message, 'a: b');
  assert.equal(e.hint, 'fix it');
  assert.equal(errors.fromStderr('', 1, 'fallback').message, 'fallback');
});

test(`printable: only printable ASCII comes out (seed ${SEED})`, () => {
  for (let i = 0; i < 2000; i++)
    assert.match(printable(junk(int(200))), /^[\x20-\x7e]*$/);
  assert.equal(printable('pip\x1b]0;owned\x07'), 'pip?]0;owned?');
  assert.equal(printable('x'.repeat(10), { max: 4 }), 'xxxx');
  assert.equal(printable('a\nb\r\x1b[2J', { newlines: true }), 'a\nb??[2J');
});

test(`ask: random bytes on the socket: answers only to questions, always well-formed (seed ${SEED})`, async () => {
  const dir = cli.privateDir();
  let asked = 0;
  const l = ask.listen(dir, () => {
    asked++;
    const a = pick([true, false, { decision: 'allow', scope: 'run' }, { decision: junk(3) }, undefined, () => Promise.reject(new Error('x')), () => { throw new Error('y'); }]);
    return typeof a === 'function' ? a() : a;
  });
  try {
    const ids = [];
    let text = '';
    for (let i = 0; i < 300; i++) {
      const r = int(4);
      if (r === 0 && (text === '' || text.endsWith('\n'))) {
        const id = int(1e6);
        ids.push(id);
        text += `${JSON.stringify({ version: 1, type: 'network', id, host: junk(8), process: null })}\n`;
      } else if (r === 1) {
        text += `${JSON.stringify({ id: pick(['1', 1.5, null, -0.5, [], {}]) })}\n`;
      } else {
        text += junk().replace(/\n/g, '') + pick(['\n', '']);
      }
    }
    text += '\n';
    const answers = await new Promise((resolve, reject) => {
      let got = '';
      const c = net.connect(l.path, () => {
        for (let i = 0, n; i < text.length; i += n) { // in pieces: a line may span reads
          n = 1 + int(50);
          c.write(text.slice(i, i + n));
        }
      });
      c.setEncoding('utf8');
      c.on('data', (d) => { got += d; if (got.split('\n').length > ids.length) { c.end(); resolve(got); } });
      c.on('error', reject);
      setTimeout(() => { c.end(); resolve(got); }, 3000).unref();
    });
    const lines = answers.split('\n').filter(Boolean).map((x) => JSON.parse(x));
    for (const a of lines) {
      assert.ok(Number.isInteger(a.id));
      assert.ok(['allow', 'deny'].includes(a.decision));
      assert.ok(['once', 'run', 'always'].includes(a.scope));
      assert.deepEqual(Object.keys(a).sort(), ['decision', 'id', 'scope']);
    }
    // every question with an integer id was answered (the junk lines are not questions)
    assert.ok(lines.length >= ids.length, `seed ${SEED}: ${lines.length} answers to ${ids.length} questions`);
    assert.ok(asked >= ids.length);
  } finally {
    l.close();
    cli.removeDir(dir);
  }
});
