// SPDX-License-Identifier: LGPL-2.1-or-later
// The package as a user gets it: `npm install <repo>/node` and the tarball
// `npm pack` makes, in a fresh directory; require() and import; the
// interface the issue names; and tsc on an example using every type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PKG, scratchDir } from './lib.mjs';

const npm = (cwd, ...args) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const ws = scratchDir('install-ws');

const CHECK_CJS = `
const rf = require('ringfence');
const { SandboxManager } = require('ringfence/srt');
(async () => {
  const r = await rf.run(['sh', '-c', 'echo hi; exit 3'], { workspace: process.argv[2] });
  const p = rf.spawn(['echo', 'streamed'], { workspace: process.argv[2] });
  const readable = typeof p.stdout.on === 'function' && typeof p.stdout.read === 'function';
  let out = ''; p.stdout.on('data', (d) => { out += d; });
  const st = await p.status;
  console.log(JSON.stringify({ exitCode: r.exitCode, stdout: r.stdout, readable, promise: p.status instanceof Promise,
    out, st: st.exitCode, srt: typeof SandboxManager.wrapWithSandbox, err: typeof rf.RingfenceError }));
})();`;
const CHECK_MJS = `
import * as rf from 'ringfence';
import def from 'ringfence';
import { SandboxManager } from 'ringfence/srt';
const r = await rf.run(['sh', '-c', 'echo hi; exit 3'], { workspace: process.argv[2] });
console.log(JSON.stringify({ exitCode: r.exitCode, stdout: r.stdout, same: def.run === rf.run, srt: typeof SandboxManager.initialize }));`;

function check(dir) {
  fs.writeFileSync(path.join(dir, 'check.cjs'), CHECK_CJS);
  fs.writeFileSync(path.join(dir, 'check.mjs'), CHECK_MJS);
  const cjs = JSON.parse(execFileSync('node', ['check.cjs', ws], { cwd: dir }).toString());
  assert.deepEqual(cjs, { exitCode: 3, stdout: 'hi\n', readable: true, promise: true, out: 'streamed\n', st: 0, srt: 'function', err: 'function' });
  const mjs = JSON.parse(execFileSync('node', ['check.mjs', ws], { cwd: dir }).toString());
  assert.deepEqual(mjs, { exitCode: 3, stdout: 'hi\n', same: true, srt: 'function' });
}

test('npm install <repo>/node in a fresh directory: require() and import', () => {
  const dir = scratchDir('app-folder');
  npm(dir, 'init', '-y');
  npm(dir, 'install', '--offline', PKG);
  check(dir);
});

test('npm pack, then npm install the tarball: the same, and only the package files are in it', () => {
  const packs = scratchDir('packs');
  const name = npm(PKG, 'pack', '--pack-destination', packs).trim().split('\n').pop();
  const dir = scratchDir('app-tarball');
  npm(dir, 'init', '-y');
  npm(dir, 'install', '--offline', path.join(packs, name));
  const installed = path.join(dir, 'node_modules', 'ringfence');
  assert.ok(!fs.lstatSync(installed).isSymbolicLink(), 'a copy, not a link');
  assert.ok(fs.existsSync(path.join(installed, 'index.d.ts')));
  assert.ok(!fs.existsSync(path.join(installed, 'examples')), 'examples stay in the repository');
  check(dir);
});

test('tsc --noEmit on an example that uses every exported type', (t) => {
  const deps = process.env.RF_NODE_DEPS;
  if (!deps || !fs.existsSync(path.join(deps, 'node_modules', 'typescript'))) {
    t.skip('typescript is not installed (RF_NODE_DEPS: tests/node-sdk/run installs it)');
    return;
  }
  const dir = scratchDir('types');
  npm(dir, 'init', '-y');
  npm(dir, 'install', '--offline', PKG);
  fs.symlinkSync(path.join(deps, 'node_modules', 'typescript'), path.join(dir, 'node_modules', 'typescript'));
  fs.symlinkSync(path.join(deps, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'));
  fs.copyFileSync(path.join(PKG, 'examples', 'every-type.ts'), path.join(dir, 'every-type.ts'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'es2022', types: ['node'], noUnusedLocals: true },
    files: ['every-type.ts'],
  }));
  const tsc = path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync('node', [tsc, '-p', '.'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    assert.fail(`tsc: ${e.stdout}${e.stderr}`);
  }
  // and it can fail: a wrong type is caught
  fs.appendFileSync(path.join(dir, 'every-type.ts'), "\nconst wrong: import('ringfence').NetworkMode = 'wide';\nvoid wrong;\n");
  assert.throws(() => execFileSync('node', [tsc, '-p', '.'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }));
});
