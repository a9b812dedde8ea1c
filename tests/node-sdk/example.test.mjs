// SPDX-License-Identifier: LGPL-2.1-or-later
// examples/005-node-harness: a harness on the package driving the MCP SDK
// client, its tool server inside ringfence, against the API stand-in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { RINGFENCE } from './lib.mjs';

test('examples/005-node-harness: every claim holds', (t) => {
  const src = process.env.RF_NODE_SRC;
  const deps = process.env.RF_NODE_DEPS && path.join(process.env.RF_NODE_DEPS, 'node_modules');
  if (!src || !deps || !fs.existsSync(path.join(deps, '@modelcontextprotocol', 'sdk'))) {
    t.skip('the MCP SDK is not installed (tests/node-sdk/run installs it)');
    return;
  }
  const r = spawnSync(path.join(src, 'examples', '005-node-harness', 'run'), {
    env: { ...process.env, RINGFENCE: RINGFENCE, NODE_DEPS: deps }, encoding: 'utf8', timeout: 240000,
  });
  for (const line of r.stdout.split('\n').filter(Boolean))
    t.diagnostic(line);
  if (r.status === 77) {
    t.skip(r.stdout.trim());
    return;
  }
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /# every claim held/);
});
