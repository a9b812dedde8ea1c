// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared by the ecosystem node tests: the binary under test and scratch
// workspaces that see the cached npm install through a node_modules link
// (the install itself is exposed read-only inside the sandbox).
import { mkdtempSync, rmSync, chmodSync, copyFileSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RINGFENCE = process.env.RINGFENCE;
if (!RINGFENCE) throw new Error('set RINGFENCE to the ringfence binary');
const here = dirname(fileURLToPath(import.meta.url));
export const MODULES = realpathSync(join(here, 'node_modules'));

const scratch = [];
process.on('exit', () => scratch.forEach((d) => rmSync(d, { recursive: true, force: true })));

export function scratchDir(tag) {
  const d = mkdtempSync(join(tmpdir(), `rf-eco-${tag}-`));
  chmodSync(d, 0o755);
  scratch.push(d);
  return d;
}

// A workspace holding copies of `files` (from this directory) and a
// node_modules link to the install; run it with runArgs().
export function workspace(tag, files = []) {
  const ws = scratchDir(tag);
  for (const f of files) copyFileSync(join(here, f), join(ws, f));
  symlinkSync(MODULES, join(ws, 'node_modules'));
  return ws;
}

// `ringfence run` arguments for a command in ws that needs the install.
export function runArgs(ws, extra = []) {
  return ['run', '--workspace', ws, '--expose', dirname(MODULES), ...extra, '--'];
}

// A file outside every workspace, which no sandbox may see.
export function secretOutside() {
  const d = scratchDir('outside');
  const f = join(d, 'secret.txt');
  writeFileSync(f, 'secret\n');
  return f;
}
