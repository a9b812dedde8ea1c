// SPDX-License-Identifier: LGPL-2.1-or-later
// Which ringfence runs, private scratch directories, and the subcommands
// that print JSON (plan, doctor, instance, changes, profile).
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const nodePath = require('node:path');
const { RingfenceError, fromStderr } = require('./errors.cjs');

const MAX_OUTPUT = 64 << 20; // what a subcommand may print before it is cut off

/** The binary: options.ringfence, else $RINGFENCE_BIN, else `ringfence` on PATH. */
function binary(o = {}) {
  return o.ringfence || process.env.RINGFENCE_BIN || 'ringfence';
}

/** ringfence's environment: ours, with o.ringfenceEnv laid over and o.root as
 * RINGFENCE_HOME (the instance root), less
 * RINGFENCE_BIN (ringfence reads every other RINGFENCE_* variable as a
 * setting, and refuses one that names none). */
function environment(o = {}) {
  const env = { ...process.env, ...(o.ringfenceEnv || {}) };
  delete env.RINGFENCE_BIN;
  if (o.root !== undefined && o.root !== null)
    env.RINGFENCE_HOME = String(o.root);
  return env;
}

function notFound(bin, e) {
  return new RingfenceError(`cannot run ${bin}: ${e.message}`, {
    step: 'ringfence', path: bin.includes('/') ? bin : null, exitCode: 127,
    hint: 'install ringfence, or point RINGFENCE_BIN at the binary (e.g. RINGFENCE_BIN=$PWD/build/ringfence)',
  });
}

/** A directory only we can enter (0700), for the ask socket and settings
 * files: out of the sandbox's sight (its /tmp is its own) and of other uids. */
function privateDir() {
  const base = process.env.XDG_RUNTIME_DIR && fs.existsSync(process.env.XDG_RUNTIME_DIR) ? process.env.XDG_RUNTIME_DIR : os.tmpdir();
  const dir = fs.mkdtempSync(nodePath.join(base, 'ringfence-node-'));
  fs.chmodSync(dir, 0o700);
  return dir;
}

function removeDir(dir) {
  if (dir)
    fs.rmSync(dir, { recursive: true, force: true });
}

/** Write settings (ringfence's schema) as a --config layer in dir. */
function settingsFile(dir, settings, name = 'settings.json') {
  const file = nodePath.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(settings), { mode: 0o600, flag: 'wx' });
  return file;
}

/**
 * Run `ringfence ARGS...` to its end: {code, stdout, stderr}. Rejects with
 * RingfenceError when the exit code is not in ok (default [0]).
 */
function invoke(args, { ok = [0], input, ...o } = {}) {
  const bin = binary(o);
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], env: environment(o), cwd: o.cwd });
    } catch (e) {
      reject(notFound(bin, e));
      return;
    }
    const out = [], err = [];
    let size = 0;
    const keep = (into) => (d) => { if ((size += d.length) <= MAX_OUTPUT) into.push(d); };
    child.stdout.on('data', keep(out));
    child.stderr.on('data', keep(err));
    child.on('error', (e) => reject(notFound(bin, e)));
    child.stdin.on('error', () => {}); // it may exit before reading
    child.stdin.end(input === undefined ? undefined : input);
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString(), stderr = Buffer.concat(err).toString();
      if (ok.includes(code))
        resolve({ code, stdout, stderr });
      else
        reject(fromStderr(stderr, code === null ? 128 : code,
          `ringfence ${args[0]} ${signal ? `died of ${signal}` : `exited ${code}`}`));
    });
  });
}

/** The subcommand's stdout as JSON. */
async function invokeJson(args, o) {
  const r = await invoke(args, o);
  try {
    return JSON.parse(r.stdout);
  } catch (e) {
    throw new RingfenceError(`ringfence ${args.join(' ')}: its output is not JSON: ${e.message}`, { step: args[0] });
  }
}

module.exports = { binary, environment, notFound, privateDir, removeDir, settingsFile, invoke, invokeJson };
