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

function createManager(o = {}) {
  let state = null; // {config, dir, file, warnings, asker, n}

  const need = () => {
    if (!state)
      throw new RingfenceError('SandboxManager: not initialized', { step: 'initialize', hint: 'await SandboxManager.initialize(config) first' });
    return state;
  };

  async function initialize(config, sandboxAskCallback, _enableLogMonitor) {
    if (!config || typeof config !== 'object' || Array.isArray(config))
      throw new RingfenceError('SandboxManager.initialize: expected sandbox-runtime\'s configuration object', { step: 'initialize' });
    await reset();
    const dir = cli.privateDir();
    try {
      const full = cli.settingsFile(dir, config, 'srt-settings.json');
      // ringfence reads it once here: a bad file fails now, with ringfence's
      // message. From our own directory: the workspace of the commands is
      // their cwd when they run, not ours now.
      const { stderr } = await cli.invoke(['config', '--config-format=srt', `--config=${full}`], { ...o, cwd: dir });
      const warnings = stderr.split('\n').filter((l) => l.startsWith('ringfence: warning: ')).map((l) => l.slice(20));
      const file = cli.settingsFile(dir, withoutUnused(config, warnings), 'settings.json');
      let asker = null;
      if (typeof sandboxAskCallback === 'function')
        asker = ask.listen(dir, async (q) => {
          if (q.type !== 'network')
            return false;
          const a = await sandboxAskCallback({ host: q.host, port: q.port });
          return a === true; // sandbox-runtime: only true allows
        });
      state = { config, dir, file, warnings, asker, n: 0 };
    } catch (e) {
      cli.removeDir(dir);
      throw e;
    }
  }

  function argvFor(command, binShell, customConfig) {
    const s = need();
    let file = s.file;
    if (customConfig && Object.keys(customConfig).length)
      file = cli.settingsFile(s.dir, withoutUnused(merge(s.config, customConfig), s.warnings), `custom-${++s.n}.json`);
    const args = ['run', '--config-format=srt', `--config=${file}`];
    if (s.asker)
      args.push(`--ask=socket:${s.asker.path}`);
    return [cli.binary(o), ...args, '--', binShell || 'bash', '-c', String(command)];
  }

  return {
    initialize,
    isSupportedPlatform: () => process.platform === 'linux',
    isSandboxingEnabled: () => state !== null,
    /** {errors, warnings}: errors when ringfence is missing or its native
     * sandbox cannot run here (ringfence doctor), warnings: the settings
     * of the configuration ringfence does not use. */
    checkDependencies() {
      const r = spawnSync(cli.binary(o), ['doctor', '--json'], { env: cli.environment(o), encoding: 'utf8' });
      const errors = [];
      if (r.error)
        errors.push(`ringfence not found (${r.error.message}): install it or set RINGFENCE_BIN`);
      else if (r.status !== 0)
        errors.push('ringfence doctor: the native sandbox cannot run here (run `ringfence doctor` for the reason)');
      return { errors, warnings: state ? [...state.warnings] : [] };
    },
    async checkDependenciesAsync() { return this.checkDependencies(); },
    async wrapWithSandbox(command, binShell, customConfig) {
      return argvFor(command, binShell, customConfig).map(quote).join(' ');
    },
    async wrapWithSandboxArgv(command, binShell, customConfig) {
      return { argv: argvFor(command, binShell, customConfig), env: cli.environment(o) };
    },
    getConfig: () => (state ? state.config : undefined),
    getWarnings: () => (state ? [...state.warnings] : []),
    updateConfig(newConfig) {
      const s = need();
      s.config = newConfig;
      s.file = cli.settingsFile(s.dir, withoutUnused(newConfig, s.warnings), `settings-${++s.n}.json`);
    },
    cleanupAfterCommand() {},
    annotateStderrWithSandboxFailures: (_command, stderr) => stderr,
    async reset() { await reset(); },
  };

  async function reset() {
    if (!state)
      return;
    if (state.asker)
      state.asker.close();
    cli.removeDir(state.dir);
    state = null;
  }
}

const SandboxManager = createManager();

module.exports = { SandboxManager, createManager, quote };
