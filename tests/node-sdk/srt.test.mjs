// SPDX-License-Identifier: LGPL-2.1-or-later
// ringfence/srt: sandbox-runtime's SandboxManager; the commands it wraps
// run under ringfence with sandbox-runtime's own configuration.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { require, PKG, scratchDir, connectVia } from './lib.mjs';

const { SandboxManager } = require(`${PKG}/srt.cjs`);
const sh = promisify(execFile);
const ws = scratchDir('srt-ws');

/* The wrapped string, run the way a harness runs it: by a shell, in the workspace. */
async function runWrapped(cmd, ...rest) {
  const wrapped = await SandboxManager.wrapWithSandbox(cmd, ...rest);
  try {
    const r = await sh('/bin/bash', ['-c', wrapped], { cwd: ws });
    return { code: 0, ...r };
  } catch (e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

afterEach(() => SandboxManager.reset());

test('srt: the platform and dependency checks', () => {
  assert.equal(SandboxManager.isSupportedPlatform(), true);
  assert.deepEqual(SandboxManager.checkDependencies().errors, []);
  assert.equal(SandboxManager.isSandboxingEnabled(), false);
});

test('srt: wrapWithSandbox before initialize is an error naming the fix; methods work detached', async () => {
  const { wrapWithSandbox, isSupportedPlatform } = SandboxManager;
  assert.equal(isSupportedPlatform(), true);
  await assert.rejects(wrapWithSandbox('true'), /not initialized/);
});

test('srt: the wrapped command runs in ringfence: cwd writable, denyRead hidden, the rest read-only', async () => {
  const secret = path.join(ws, 'secret.txt');
  fs.writeFileSync(secret, 'RF-SRT-SECRET');
  await SandboxManager.initialize({
    network: { allowedDomains: ['allowed.test'], deniedDomains: [] },
    filesystem: { denyRead: [secret], allowWrite: ['.'], denyWrite: [] },
  });
  assert.equal(SandboxManager.isSandboxingEnabled(), true);
  const r = await runWrapped("echo made > made.txt; cat secret.txt; echo; touch /usr/srt-x 2>/dev/null || echo 'read-only'");
  assert.equal(fs.readFileSync(path.join(ws, 'made.txt'), 'utf8'), 'made\n');
  assert.doesNotMatch(r.stdout, /RF-SRT-SECRET/);
  assert.match(r.stdout, /read-only/);
  // the settings ringfence does not use are named once, at initialize, not on every command
  assert.ok(SandboxManager.getWarnings().some((w) => /filesystem\.allowWrite/.test(w)), SandboxManager.getWarnings().join('\n'));
  assert.doesNotMatch(r.stderr, /allowWrite/);
});

test('srt: quoting: a command with quotes, $ and newlines reaches bash -c as it is', async () => {
  await SandboxManager.initialize({ network: { allowedDomains: [] }, filesystem: { denyRead: [], allowWrite: [], denyWrite: [] } });
  const r = await runWrapped("printf '%s|' \"it's\" '$HOME' \"$(printf 'a\\nb')\"\necho ' ;x'");
  assert.equal(r.stdout, "it's|$HOME|a\nb| ;x\n");
});

test('srt: allowedDomains is the allowlist; askCallback answers what it does not match', async () => {
  const srv = net.createServer((c) => c.end());
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  const asked = [];
  const settingsDir = scratchDir('srt-home');
  // add-host for the test name: a ringfence setting layered by ringfence's own config
  fs.mkdirSync(path.join(settingsDir, 'ringfence'), { recursive: true });
  fs.writeFileSync(path.join(settingsDir, 'ringfence', 'config.json'), JSON.stringify({ network: { hosts: { 'e.test': '127.0.0.1' } } }));
  process.env.XDG_CONFIG_HOME = settingsDir;
  try {
    await SandboxManager.initialize({ network: { allowedDomains: ['allowed.test'] }, filesystem: {} },
      async (p) => { asked.push(p); return p.host === 'e.test'; });
    const cmd = connectVia('e.test', port).map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const r = await runWrapped(cmd);
    assert.match(r.stdout, /HTTP\/1.1 200/, r.stdout + r.stderr);
    assert.deepEqual(asked, [{ host: 'e.test', port }]);
    const denied = await runWrapped(connectVia('other.test', port).map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' '));
    assert.match(denied.stdout, /HTTP\/1.1 403/);
  } finally {
    delete process.env.XDG_CONFIG_HOME;
    srv.close();
  }
});

test('srt: a configuration ringfence refuses fails initialize with its message', async () => {
  await assert.rejects(SandboxManager.initialize({ network: { allowedDomains: 'not-a-list' } }), (e) => {
    assert.match(e.message, /network\.allowedDomains: expected a list of strings/);
    assert.match(e.hint, /JSON arrays of strings/);
    return true;
  });
  assert.equal(SandboxManager.isSandboxingEnabled(), false);
});

test('srt: reset removes the settings; customConfig narrows one command', async () => {
  await SandboxManager.initialize({ network: { allowedDomains: [] }, filesystem: { denyRead: [] } });
  fs.writeFileSync(path.join(ws, 'hide.txt'), 'visible?');
  const r = await runWrapped('cat hide.txt || echo hidden', undefined, { filesystem: { denyRead: [path.join(ws, 'hide.txt')] } });
  assert.match(r.stdout, /hidden/);
  const { argv } = await SandboxManager.wrapWithSandboxArgv('true');
  const file = argv.find((a) => a.startsWith('--config=')).slice(9);
  assert.ok(fs.existsSync(file));
  assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
  await SandboxManager.reset();
  assert.ok(!fs.existsSync(file));
  assert.equal(SandboxManager.getConfig(), undefined);
});
