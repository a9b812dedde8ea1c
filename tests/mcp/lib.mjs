// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared setup of the MCP tests: the binary under test, scratch
// directories, an SDK client over stdio, and a raw line-level session for
// what the SDK would never send.
import { spawn } from 'node:child_process';
import { after } from 'node:test';
import { mkdtempSync, rmSync, chmodSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

export const RINGFENCE = process.env.RINGFENCE;
if (!RINGFENCE) throw new Error('set RINGFENCE to the ringfence binary');

const scratch = [];
process.on('exit', () => scratch.forEach((d) => rmSync(d, { recursive: true, force: true })));

// A fresh directory under /tmp, world-readable so any sandbox user can enter it.
export function scratchDir(tag) {
  const d = mkdtempSync(join(tmpdir(), `rf-mcp-${tag}-`));
  chmodSync(d, 0o755);
  scratch.push(d);
  return d;
}

export const rfHome = scratchDir('home');

export function serverEnv() {
  // Sanitizer settings pass through, so a TSan/ASan run can collect reports.
  const san = Object.fromEntries(
    ['TSAN_OPTIONS', 'ASAN_OPTIONS', 'UBSAN_OPTIONS'].filter((k) => process.env[k]).map((k) => [k, process.env[k]]));
  return { ...getDefaultEnvironment(), ...san, RINGFENCE_HOME: rfHome };
}

// An SDK client connected to `command args...`; stderr is kept for diagnostics.
export async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, env: serverEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (b) => { stderr += b; });
  const client = new Client({ name: 'ringfence-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

// A raw session: write lines, read replies one line at a time. Sessions a
// failed test left open are killed when the test file ends.
const sessions = new Set();
after(() => sessions.forEach((c) => c.kill('SIGKILL')));
export function rawSession(args) {
  const child = spawn(RINGFENCE, ['mcp', ...args], { env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  sessions.add(child);
  child.on('exit', () => sessions.delete(child));
  let buf = '';
  const lines = [];
  const waiters = [];
  child.stdout.on('data', (b) => {
    buf += b;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
  });
  child.stderr.on('data', () => {});
  return {
    child,
    write(text) { child.stdin.write(text); },
    send(obj) { child.stdin.write(JSON.stringify(obj) + '\n'); },
    // The next line as parsed JSON; fails after ms.
    next(ms = 10000) {
      if (lines.length) return Promise.resolve(JSON.parse(lines.shift()));
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no reply within ' + ms + ' ms')), ms);
        waiters.push((l) => { clearTimeout(t); resolve(JSON.parse(l)); });
      });
    },
    pending() { return lines.length; },
    async close() {
      child.stdin.end();
      const code = await new Promise((r) => child.on('exit', (c) => r(c)));
      return code;
    },
  };
}

// initialize + initialized over a raw session; returns the result.
export async function rawInit(s, version = '2025-06-18') {
  s.send({ jsonrpc: '2.0', id: 'init', method: 'initialize',
           params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  const r = await s.next();
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return r;
}

// Host processes whose command line contains `marker` (the sandbox's
// processes are ordinary host processes in their own pid namespace).
export function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(marker)) found.push(pid);
    } catch { /* gone meanwhile */ }
  }
  return found;
}

export async function until(cond, ms = 10000, step = 50) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, step));
  }
  return false;
}

export function text(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}
