// SPDX-License-Identifier: LGPL-2.1-or-later
// spawn() and run(): `ringfence run --status-fd 3 ... -- COMMAND` with
// Node's own pipes. fd 3 carries {"child-pid":N} when the sandbox started,
// then the status record (docs/python.md lists its fields); ringfence's own
// errors are its last "ringfence: " line on stderr.
'use strict';

const { spawn: spawnChild } = require('node:child_process');
const { EventEmitter } = require('node:events');
const os = require('node:os');
const { PassThrough } = require('node:stream');
const { RingfenceError, fromStderr, locate, EXIT_FAILURE } = require('./errors.cjs');
const { toFlags, commandArgv } = require('./options.cjs');
const cli = require('./cli.cjs');
const ask = require('./ask.cjs');

const TAIL = 16 << 10;            // stderr kept to explain a failure
const MAX_STATUS = 4 << 20;       // the status record, network report and all
const DEFAULT_MAX_BUFFER = 64 << 20;

const signalName = (n) => (n ? Object.keys(os.constants.signals).find((k) => os.constants.signals[k] === n) || `SIG${n}` : null);

/** The status record (--status-json's) in camelCase, the whole of it in .json. */
function statusOf(j) {
  return {
    exitCode: j.exit_code,
    signal: signalName(j.signal),
    exited: !!j.exited,
    timedOut: !!j.timed_out,
    oomKilled: !!j.oom_killed,
    pidsLimitHit: !!j.pids_limit_hit,
    wallSeconds: j.wall_seconds,
    peakMemoryBytes: j.peak_memory_bytes,
    network: j.network || null,
    session: j.session || null,
    backend: j.backend || null,
    weakenings: Array.isArray(j.weakenings) ? j.weakenings : [],
    sandbox: j.sandbox || null,
    error: j.error || null,
    json: j,
  };
}

/* The hint printed after the status record's error, if the tail has it. */
function hintFor(tail, message) {
  const lines = tail.split('\n');
  const i = lines.lastIndexOf(`ringfence: ${message}`);
  return i >= 0 && lines[i + 1] && lines[i + 1].startsWith('hint: ') ? lines[i + 1].slice(6) : null;
}

function settle(records, tail, code, sig) {
  const started = records.find((r) => r && 'child-pid' in r);
  const st = records.find((r) => r && 'exit_code' in r);
  if (st && !(st.error && st.exit_code === EXIT_FAILURE))
    return statusOf(st);
  if (st) { // a setup step failed in the sandbox: the record says which
    const e = new RingfenceError(st.error, { hint: hintFor(tail, st.error), stderr: tail, ...locate(st.error) });
    e.status = statusOf(st);
    throw e;
  }
  const how = sig ? `died of ${sig}` : `exited ${code}`;
  const exitCode = code === null ? 128 + (os.constants.signals[sig] || 0) : code;
  if (started) // the command ran: its stderr is its own, not ringfence's word
    throw new RingfenceError(`ringfence ${how} before it wrote the status`, { step: 'status', exitCode });
  throw fromStderr(tail, exitCode, `ringfence ${how} before the sandbox started`);
}

/** A sandboxed process, shaped like Node's ChildProcess, plus .status. */
class SandboxProcess extends EventEmitter {
  constructor(child, stderr, status) {
    super();
    this._child = child;
    this.stdin = child.stdin;
    this.stdout = child.stdout;
    this.stderr = stderr;
    this.stdio = [this.stdin, this.stdout, this.stderr];
    this.status = status;
    this.sandboxPid = null;
    for (const ev of ['spawn', 'exit', 'close', 'disconnect'])
      child.on(ev, (...a) => this.emit(ev, ...a));
    child.on('error', (e) => { if (this.listenerCount('error')) this.emit('error', e); });
  }

  get pid() { return this._child.pid; }
  get exitCode() { return this._child.exitCode; }
  get signalCode() { return this._child.signalCode; }
  get killed() { return this._child.killed; }
  get spawnfile() { return this._child.spawnfile; }
  get spawnargs() { return this._child.spawnargs; }

  /** Signal ringfence; SIGTERM, SIGINT and SIGHUP reach every process of
   * the sandbox, SIGKILL takes the sandbox down with ringfence. */
  kill(signal = 'SIGTERM') { return this._child.kill(signal); }
  ref() { this._child.ref(); return this; }
  unref() { this._child.unref(); return this; }
}

function prepare(command, options) {
  const argv = commandArgv(command);
  const { flags, settings } = toFlags(options);
  if (options.onAsk !== undefined && typeof options.onAsk !== 'function')
    throw new RingfenceError('onAsk: expected a function (question) => ({decision, scope})', { step: 'onAsk' });
  let dir = null, asker = null;
  try {
    if (settings || options.onAsk)
      dir = cli.privateDir();
    if (settings)
      flags.push(`--config=${cli.settingsFile(dir, settings)}`);
    if (options.onAsk) {
      asker = ask.listen(dir, options.onAsk);
      flags.push(`--ask=socket:${asker.path}`);
    }
  } catch (e) {
    cli.removeDir(dir);
    throw e;
  }
  flags.push(options.pty ? '--pty' : '--no-pty');
  return { args: ['run', ...flags, '--status-fd=3', '--', ...argv], dir, asker };
}

/**
 * Start command in a sandbox; returns a SandboxProcess at once. Its
 * .status resolves to the status record when it ends, or rejects with a
 * RingfenceError when ringfence could not start it.
 */
function spawn(command, options = {}) {
  const { args, dir, asker } = prepare(command, options);
  const bin = cli.binary(options);
  const io = (options.stdio || ['pipe', 'pipe', 'pipe']).slice(0, 3);
  let child;
  try {
    child = spawnChild(bin, args, {
      stdio: [...io, 'pipe'], cwd: options.cwd, env: cli.environment(options),
    });
  } catch (e) {
    if (asker) asker.close();
    cli.removeDir(dir);
    throw cli.notFound(bin, e);
  }
  let tail = '', statusText = '', spawnError = null;
  let stderr = child.stderr;
  if (child.stderr) {
    stderr = new PassThrough();
    child.stderr.on('data', (d) => { tail = (tail + d.toString()).slice(-TAIL); });
    child.stderr.pipe(stderr);
  }
  const proc = new SandboxProcess(child, stderr, null);
  child.stdio[3].setEncoding('utf8');
  child.stdio[3].on('data', (d) => {
    if (statusText.length < MAX_STATUS)
      statusText += d;
    const m = /\{"child-pid":(\d+)\}/.exec(statusText);
    if (m && proc.sandboxPid === null)
      proc.sandboxPid = Number(m[1]);
  });
  child.on('error', (e) => { spawnError = e; });
  if (options.signal)
    options.signal.addEventListener('abort', () => child.kill('SIGTERM'), { once: true });
  proc.status = new Promise((resolve, reject) => {
    child.on('close', (code, sig) => {
      if (asker) asker.close();
      cli.removeDir(dir);
      if (spawnError)
        return reject(cli.notFound(bin, spawnError));
      const records = statusText.split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return null; } });
      try {
        return resolve(settle(records, tail, code, sig));
      } catch (e) {
        return reject(e);
      }
    });
  });
  proc.status.catch(() => {}); // awaited or not, never an unhandled rejection
  return proc;
}

function collect(stream, max) {
  const chunks = [];
  let size = 0, truncated = false;
  if (stream)
    stream.on('data', (d) => {
      if (size + d.length > max) {
        truncated = true;
        d = d.subarray(0, Math.max(0, max - size));
      }
      size += d.length;
      if (d.length) chunks.push(d);
    });
  return () => ({ data: Buffer.concat(chunks), truncated });
}

/**
 * Run command in a sandbox to its end: the status record, with stdout and
 * stderr (strings, or Buffers with encoding: 'buffer').
 */
async function run(command, options = {}) {
  const { input, encoding = 'utf8', maxBuffer = DEFAULT_MAX_BUFFER, ...rest } = options;
  const p = spawn(command, { ...rest, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = collect(p.stdout, maxBuffer), err = collect(p.stderr, maxBuffer);
  p.stdin.on('error', () => {}); // the command may exit without reading
  p.stdin.end(input === undefined ? undefined : input);
  const status = await p.status;
  const o = out(), e = err();
  const text = (b) => (encoding === 'buffer' ? b.data : b.data.toString(encoding));
  return { ...status, stdout: text(o), stderr: text(e), truncated: o.truncated || e.truncated };
}

module.exports = { spawn, run, SandboxProcess, statusOf };
