// SPDX-License-Identifier: LGPL-2.1-or-later
// Round-trip time of a tools/call through `ringfence mcp`, as an MCP client
// sees it: N sequential `exec true` (a fresh sandbox each; with the warm
// pool, the default, and with --no-pool), N `exec /bin/true` and `exec ls`
// (plain commands: no shell), the same through the shell, and N
// `read_file` (no sandbox), through the official SDK client over stdio.
// For notes only.
//
// Each exec series runs twice: with GAP_MS between calls (default 50: an
// agent waits far longer for its model between two commands), which is the
// latency a call sees, and back to back, where every call after the first
// few waits for the pool to build a sandbox (its refill rate, not latency).
//
// With ONLY set to "true", only the first series runs (`exec true`, warm
// pool, GAP_MS apart): 1,000 calls 50 ms apart take about a minute.
//
//   node bench/mcp-latency.mjs [BUILD_DIR] [N] [GAP_MS] [ONLY]   (needs npm ci in tests/mcp)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const top = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const require = createRequire(join(top, 'tests/mcp/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport, getDefaultEnvironment } = require('@modelcontextprotocol/sdk/client/stdio.js');

const build = resolve(process.argv[2] ?? join(top, 'build'));
const n = Number(process.argv[3] ?? 50);
const gap = Number(process.argv[4] ?? 50);
const only = process.argv[5] === 'true';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ws = mkdtempSync(join(tmpdir(), 'rf-mcp-bench-'));
writeFileSync(join(ws, 'f.txt'), 'x\n');
async function session(extra) {
  const transport = new StdioClientTransport({
    command: join(build, 'ringfence'), args: ['mcp', ...extra, '--workspace', ws],
    env: { ...getDefaultEnvironment(), RINGFENCE_HOME: join(ws, '.rfhome') },
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return client;
}

async function time(client, label, args, pause = 0) {
  await client.callTool(args); // warm-up
  const ms = [];
  for (let i = 0; i < n; i++) {
    if (pause) await sleep(pause);
    const t0 = process.hrtime.bigint();
    const r = await client.callTool(args);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.isError) throw new Error(JSON.stringify(r));
  }
  ms.sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / n;
  const p = (q) => ms[Math.min(n - 1, Math.floor(n * q))].toFixed(2);
  console.log(`${label}: ${n} calls, mean ${mean.toFixed(2)} ms, median ${ms[n >> 1].toFixed(2)} ms, ` +
              `p90 ${p(0.9)} ms, p99 ${p(0.99)} ms, min ${ms[0].toFixed(2)} ms, max ${ms[n - 1].toFixed(2)} ms`);
  return ms[n >> 1];
}

const exec = { name: 'exec', arguments: { command: 'true' } };
const pooled = await session([]);
await sleep(500); // let the pool fill
const withPool = await time(pooled, `exec true (warm pool, ${gap} ms apart)`, exec, gap);
if (only) {
  await pooled.close();
  rmSync(ws, { recursive: true, force: true });
  process.exit(0);
}
await time(pooled, 'exec true (warm pool, back to back)', exec);
// A program, not a shell builtin: run without a shell (a plain command),
// and the same through the shell ({ ...; } is not plain).
await time(pooled, `exec /bin/true (warm pool, no shell, ${gap} ms apart)`,
           { name: 'exec', arguments: { command: '/bin/true' } }, gap);
await time(pooled, `exec { /bin/true; } (warm pool, shell, ${gap} ms apart)`,
           { name: 'exec', arguments: { command: '{ /bin/true; }' } }, gap);
await time(pooled, `exec ls (warm pool, no shell, ${gap} ms apart)`, { name: 'exec', arguments: { command: 'ls' } }, gap);
await time(pooled, 'read_file', { name: 'read_file', arguments: { path: 'f.txt' } });
await pooled.close();
const plain = await session(['--no-pool']);
const withoutPool = await time(plain, `exec true (--no-pool, ${gap} ms apart)`, exec, gap);
await plain.close();
console.log(`warm pool: ${(withoutPool / withPool).toFixed(2)}x faster than --no-pool (medians, ${gap} ms apart); ` +
            `target <= 2 ms: ${withPool <= 2 ? 'met' : 'not met'} (${withPool.toFixed(2)} ms)`);
rmSync(ws, { recursive: true, force: true });
