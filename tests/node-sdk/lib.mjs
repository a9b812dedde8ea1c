// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared by the node-sdk tests: the package under test (RF_NODE_PKG, a
// copy of node/), the binary (RINGFENCE_BIN) and scratch directories.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

export const PKG = process.env.RF_NODE_PKG;
export const RINGFENCE = process.env.RINGFENCE_BIN;
if (!PKG || !RINGFENCE)
  throw new Error('set RF_NODE_PKG (a copy of node/) and RINGFENCE_BIN (tests/node-sdk/run does)');
export const require = createRequire(import.meta.url);
export const rf = require(PKG);

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rf-node-sdk-'));
fs.chmodSync(scratch, 0o755);
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));

/** A fresh directory (0755) under this run's scratch directory. */
export function scratchDir(name) {
  const d = fs.mkdtempSync(path.join(scratch, `${name}-`));
  fs.chmodSync(d, 0o755);
  return d;
}

/** An instance root of this run's own (sessions and instances go there). */
export const ROOT = scratchDir('root');

/** Python inside: CONNECT host:port through the sandbox's proxy (times
 * connections), print each status line. */
export const connectVia = (host, port, times = 1) =>
  ['python3', '-c', 'import socket,sys\n' +
    `for _ in range(${times}):\n` +
    " s = socket.create_connection(('127.0.0.1', 3128))\n" +
    ` s.sendall(b'CONNECT ${host}:${port} HTTP/1.1\\r\\nHost: ${host}\\r\\n\\r\\n')\n` +
    ' sys.stdout.write(s.recv(12).decode() + "\\n")\n'];
