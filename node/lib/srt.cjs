// SPDX-License-Identifier: LGPL-2.1-or-later
// A drop-in for @anthropic-ai/sandbox-runtime's SandboxManager: its own
// configuration object, written as a settings file ringfence reads as
// sandbox-runtime's (src/lib/config/compat_srt.c, docs/config.md), and
// wrapWithSandbox() returning `ringfence run ... -- bash -c COMMAND`.
// Every policy decision stays ringfence's: this module only quotes.
'use strict';

const { spawnSync } = require('node:child_process');
const cli = require('./cli.cjs');
const ask = require('./ask.cjs');
const { RingfenceError } = require('./errors.cjs');

/** COMMAND as one word for a POSIX shell. */
const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

const UNUSED = /sandbox-runtime setting (\S+) is not used by ringfence/;

/* The config without the settings ringfence said it does not use, so that
 * every wrapped command does not repeat the warning on its stderr (which a
 * model reads); initialize() keeps the warnings for getWarnings(). */
function withoutUnused(config, warnings) {
  const copy = JSON.parse(JSON.stringify(config));
  for (const w of warnings) {
    const m = UNUSED.exec(w);
    if (!m)
      continue;
    const keys = m[1].split('.');
    const last = keys.pop();
    const parent = keys.reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), copy);
    if (parent && typeof parent === 'object')
      delete parent[last];
  }
  return copy;
}

function merge(base, custom) {
  const out = { ...base };
  for (const [k, v] of Object.entries(custom || {}))
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && base[k] && typeof base[k] === 'object' ? { ...base[k], ...v } : v;
  return out;
}

/** sandbox-runtime's ISandboxManager, over ringfence. */
class Manager {
  constructor(o = {}) {
    this._o = o;
    this._state = null; // {config, dir, file, warnings, asker, n}
    // sandbox-runtime's manager is an object of closures: its methods work
    // detached (const { wrapWithSandbox } = SandboxManager); so do these.
    for (const k of Object.getOwnPropertyNames(Manager.prototype))
      if (k !== 'constructor')
        this[k] = this[k].bind(this);
  }

  _need() {
    if (!this._state)
      throw new RingfenceError('SandboxManager: not initialized', { step: 'initialize', hint: 'await SandboxManager.initialize(config) first' });
    return this._state;
  }

  async initialize(config, sandboxAskCallback, _enableLogMonitor) {
    if (!config || typeof config !== 'object' || Array.isArray(config))
      throw new RingfenceError('SandboxManager.initialize: expected sandbox-runtime\'s configuration object', { step: 'initialize' });
    await this.reset();
    const dir = cli.privateDir();
    try {
      const full = cli.settingsFile(dir, config, 'srt-settings.json');
      // ringfence reads it once here: a bad file fails now, with ringfence's
      // message. From our own directory: the workspace of the commands is
      // their cwd when they run, not ours now.
      const { stderr } = await cli.invoke(['config', '--config-format=srt', `--config=${full}`], { ...this._o, cwd: dir });
      const warnings = stderr.split('\n').filter((l) => l.startsWith('ringfence: warning: ')).map((l) => l.slice(20));
      const file = cli.settingsFile(dir, withoutUnused(config, warnings), 'settings.json');
      let asker = null;
      if (typeof sandboxAskCallback === 'function')
        asker = ask.listen(dir, async (q) => q.type === 'network' && (await sandboxAskCallback({ host: q.host, port: q.port })) === true);
      this._state = { config, dir, file, warnings, asker, n: 0 }; // sandbox-runtime: only true allows
    } catch (e) {
      cli.removeDir(dir);
      throw e;
    }
  }

  _argv(command, binShell, customConfig) {
    const s = this._need();
    let file = s.file;
    if (customConfig && Object.keys(customConfig).length)
      file = cli.settingsFile(s.dir, withoutUnused(merge(s.config, customConfig), s.warnings), `custom-${++s.n}.json`);
    const args = ['run', '--config-format=srt', `--config=${file}`];
    if (s.asker)
      args.push(`--ask=socket:${s.asker.path}`);
    return [cli.binary(this._o), ...args, '--', binShell || 'bash', '-c', String(command)];
  }

  isSupportedPlatform() { return process.platform === 'linux'; }
  isSandboxingEnabled() { return this._state !== null; }

  /** {errors, warnings}: errors when ringfence is missing or its native
   * sandbox cannot run here (ringfence doctor), warnings: the settings of
   * the configuration ringfence does not use. */
  checkDependencies() {
    const r = spawnSync(cli.binary(this._o), ['doctor', '--json'], { env: cli.environment(this._o), encoding: 'utf8' });
    const errors = [];
    if (r.error)
      errors.push(`ringfence not found (${r.error.message}): install it or set RINGFENCE_BIN`);
    else if (r.status !== 0)
      errors.push('ringfence doctor: the native sandbox cannot run here (run `ringfence doctor` for the reason)');
    return { errors, warnings: this.getWarnings() };
  }

  async checkDependenciesAsync() { return this.checkDependencies(); }
  async wrapWithSandbox(command, binShell, customConfig) { return this._argv(command, binShell, customConfig).map(quote).join(' '); }
  async wrapWithSandboxArgv(command, binShell, customConfig) {
    return { argv: this._argv(command, binShell, customConfig), env: cli.environment(this._o) };
  }

  getConfig() { return this._state ? this._state.config : undefined; }
  getWarnings() { return this._state ? [...this._state.warnings] : []; }
  updateConfig(newConfig) {
    const s = this._need();
    s.config = newConfig;
    s.file = cli.settingsFile(s.dir, withoutUnused(newConfig, s.warnings), `settings-${++s.n}.json`);
  }

  cleanupAfterCommand() {}
  annotateStderrWithSandboxFailures(_command, stderr) { return stderr; }

  async reset() {
    const s = this._state;
    this._state = null;
    if (s && s.asker)
      s.asker.close();
    if (s)
      cli.removeDir(s.dir);
  }
}

/** A manager of its own (SandboxManager is one, shared), e.g. with another binary. */
const createManager = (o = {}) => new Manager(o);

const SandboxManager = createManager();

module.exports = { SandboxManager, createManager, quote };
