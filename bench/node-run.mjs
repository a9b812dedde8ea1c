// SPDX-License-Identifier: LGPL-2.1-or-later
// What the Node.js package (node/) adds to a sandbox start: N rounds, each
// `ringfence run --no-pty -- /bin/true` started with child_process (what a
// harness building argv by hand pays) and rf.run(['/bin/true']) (the
// package: argument building, the --status-fd pipe, the status record
// parsed), interleaved so both see the same load; medians and the ratio.
// Then rf.run with onAsk (the ask socket set up and torn down each time).
// For notes only, never pass/fail.
//
//   node bench/node-run.mjs [BUILD_DIR] [N]        (default: build, 100)
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const top = resolve(new URL('.', import.meta.url).pathname, '..');
const rf = createRequire(import.meta.url)(join(top, 'node'));
const bin = join(resolve(process.argv[2] ?? join(top, 'build')), 'ringfence');
const n = Number(process.argv[3] ?? 100);
const ws = mkdtempSync(join(tmpdir(), 'rf-node-bench-'));
const sh = promisify(execFile);
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const time = async (f) => { const t = performance.now(); await f(); return performance.now() - t; };

const series = { cli: [], package: [], onAsk: [] };
for (let i = 0; i < n; i++) {
  series.cli.push(await time(() => sh(bin, ['run', `--workspace=${ws}`, '--no-pty', '--', '/bin/true'])));
  series.package.push(await time(() => rf.run(['/bin/true'], { workspace: ws, ringfence: bin })));
  series.onAsk.push(await time(() => rf.run(['/bin/true'], { workspace: ws, ringfence: bin, onAsk: () => false })));
}
rmSync(ws, { recursive: true, force: true });
const m = Object.fromEntries(Object.entries(series).map(([k, v]) => [k, median(v)]));
console.log(`${n} rounds, medians: child_process ${m.cli.toFixed(1)} ms, rf.run ${m.package.toFixed(1)} ms ` +
  `(${(m.package / m.cli).toFixed(2)}x), rf.run with onAsk (network allowlist + ask socket) ${m.onAsk.toFixed(1)} ms`);
