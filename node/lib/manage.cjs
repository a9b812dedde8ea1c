// SPDX-License-Identifier: LGPL-2.1-or-later
// The subcommands around run: instances (docs/instances.md), overlay
// sessions (docs/changes.md), plan, doctor and profiles, each through the
// CLI's JSON output.
'use strict';

const cli = require('./cli.cjs');
const { toFlags, commandArgv, str } = require('./options.cjs');
const { badOption } = require('./errors.cjs');
const proc = require('./process.cjs');

/* o.root: the instance root ($RINGFENCE_HOME) a call uses (cli.environment). */
const withRoot = (o = {}) => ({ root: o.root, ringfence: o.ringfence, ringfenceEnv: o.ringfenceEnv });
const name = (what, v) => { const s = str(what, v); if (!s || s.startsWith('-')) throw badOption(what, `'${s}' is not a name`); return s; };

class Instance {
  constructor(info, o = {}) {
    this.info = info;
    this.name = info.name;
    this.path = info.path;
    this._o = withRoot(o);
  }

  /** ringfence instance create NAME: credentials and copies are
   * "SRC[:DEST]", copied (credentials 0600), never linked. */
  static async create(instanceName, o = {}) {
    const n = name('instance', instanceName);
    const args = ['instance', 'create', n];
    for (const c of [].concat(o.credentials || []))
      args.push(`--credential=${str('credentials', c)}`);
    for (const c of [].concat(o.copies || []))
      args.push(`--copy=${str('copies', c)}`);
    if (o.target !== undefined) args.push(`--target=${str('target', o.target)}`);
    if (o.ephemeral) args.push('--ephemeral');
    if (o.ownIdentity) args.push('--own-identity');
    if (o.profile !== undefined) args.push(`--profile=${str('profile', o.profile)}`);
    const { flags } = toFlags({ allowDomains: o.allowDomains, denyDomains: o.denyDomains, publish: o.publish, network: o.network });
    await cli.invoke([...args, ...flags], withRoot(o));
    return Instance.open(n, o);
  }

  /** An existing instance; RingfenceError if there is none. */
  static async open(instanceName, o = {}) {
    const info = await cli.invokeJson(['instance', 'show', name('instance', instanceName), '--json'], withRoot(o));
    return new Instance(info, o);
  }

  static list(o = {}) { return cli.invokeJson(['instance', 'list', '--json'], withRoot(o)); }

  static async remove(instanceName, o = {}) {
    await cli.invoke(['instance', 'rm', name('instance', instanceName), ...(o.force ? ['--force'] : [])], withRoot(o));
  }

  run(command, options = {}) { return proc.run(command, { ...this._o, ...options, instance: this.name }); }
  spawn(command, options = {}) { return proc.spawn(command, { ...this._o, ...options, instance: this.name }); }
  remove(o = {}) { return Instance.remove(this.name, { ...this._o, ...o }); }
}

class Session {
  constructor(id, o = {}) {
    this.id = name('session', id);
    this._o = withRoot(o);
  }

  static list(o = {}) { return cli.invokeJson(['changes', 'list', '--json'], withRoot(o)); }

  /** The session: workspace, created, files, bytes and its changes. */
  show() { return cli.invokeJson(['changes', 'show', this.id, '--json'], this._o); }

  /** A unified diff (git's format); {json: true}: per file, with the diff. */
  async diff(o = {}) {
    if (o.json)
      return cli.invokeJson(['changes', 'diff', this.id, '--json'], this._o);
    return (await cli.invoke(['changes', 'diff', this.id, '--color=never'], this._o)).stdout;
  }

  /** {applied, conflicts, refused, failed}; something left unapplied is
   * not an error here (the CLI's exit 1): look at the lists. */
  apply(o = {}) {
    const only = [].concat(o.only || []).map((p, i) => `--only=${str(`only[${i}]`, p)}`);
    return cli.invokeJson(['changes', 'apply', this.id, '--json', ...only, ...(o.force ? ['--force'] : [])],
      { ...this._o, ok: [0, 1] });
  }

  async discard() { await cli.invoke(['changes', 'discard', this.id], this._o); }
}

/** What `ringfence run` would do, as JSON (ringfence plan); runs nothing. */
async function plan(command, options = {}) {
  const argv = commandArgv(command);
  const { onAsk, pty, input, encoding, maxBuffer, stdio, signal, cwd, ...rest } = options;
  const { flags, settings } = toFlags(rest);
  let dir = null;
  try {
    if (settings) {
      dir = cli.privateDir();
      flags.push(`--config=${cli.settingsFile(dir, settings)}`);
    }
    return await cli.invokeJson(['plan', ...flags, '--', ...argv], rest);
  } finally {
    cli.removeDir(dir);
  }
}

/** What this host supports, per backend (ringfence doctor --json;
 * docs/doctor.md). Resolves also when the native backend cannot run. */
function doctor(o = {}) { return cli.invokeJson(['doctor', '--json'], { ...o, ok: [0, 1] }); }

/** The profiles --profile takes: [{name, description}]. */
async function profiles(o = {}) {
  const { stdout } = await cli.invoke(['profile', 'list'], o);
  return stdout.split('\n').filter(Boolean).map((l) => {
    const m = /^(\S+)\s*(.*)$/.exec(l);
    return { name: m[1], description: m[2] };
  });
}

module.exports = { Instance, Session, plan, doctor, profiles };
