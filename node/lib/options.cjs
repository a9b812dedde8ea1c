// SPDX-License-Identifier: LGPL-2.1-or-later
// The options of run()/spawn()/plan() turned into `ringfence run` flags.
// Every flag is written --name=value, so a value can never be taken for
// another option; nothing here decides policy, ringfence checks every value.
'use strict';

const nodePath = require('node:path');
const { badOption } = require('./errors.cjs');

const KNOWN = new Set([
  'workspace', 'chdir', 'network', 'allowDomains', 'denyDomains', 'allowPorts', 'addHosts',
  'allowPrivateAddresses', 'expose', 'env', 'keepEnv', 'limits', 'timeout', 'killGrace',
  'profile', 'profiles', 'routes', 'instance', 'ephemeral', 'changes', 'session', 'backend',
  'acceptWeaker', 'landlock', 'seccomp', 'config', 'configFiles', 'configFormat', 'agent',
  'noConfig', 'trustWorkspaceConfig', 'publish', 'pty', 'onAsk', 'askTimeout', 'image',
  'ownIdentity', 'explainDenials',
  // not flags: how this package runs ringfence
  'ringfence', 'root', 'input', 'encoding', 'maxBuffer', 'stdio', 'cwd', 'signal', 'ringfenceEnv',
]);

const MAX_STRING = 4096; // as ringfence's own limit on one setting (docs/config.md)

function str(name, v) {
  if (typeof v !== 'string' && typeof v !== 'number')
    throw badOption(name, `expected a string, got ${v === null ? 'null' : typeof v}`);
  const s = String(v);
  if (s.includes('\0'))
    throw badOption(name, 'contains a NUL byte', 'a command-line value cannot hold one');
  if (s.length > MAX_STRING)
    throw badOption(name, `longer than ${MAX_STRING} characters`);
  return s;
}

function list(name, v) {
  if (v === undefined || v === null)
    return [];
  if (!Array.isArray(v))
    return [str(name, v)];
  return v.map((x, i) => str(`${name}[${i}]`, x));
}

const flag = (name, value) => `--${name}=${value}`;

function network(o, out) {
  let n = o.network;
  if (n && typeof n === 'object') {
    out.push(...list('network.allowDomains', n.allowDomains).map((d) => flag('allow-domain', d)));
    out.push(...list('network.denyDomains', n.denyDomains).map((d) => flag('deny-domain', d)));
    out.push(...list('network.allowPorts', n.allowPorts).map((p) => flag('allow-port', p)));
    n = n.mode;
  }
  if (n !== undefined && n !== null) {
    if (!['none', 'host', 'allowlist'].includes(n))
      throw badOption('network', `'${n}': expected none, host or allowlist`, 'or an object: {mode, allowDomains, denyDomains, allowPorts}');
    out.push(flag('network', n));
  }
  out.push(...list('allowDomains', o.allowDomains).map((d) => flag('allow-domain', d)));
  out.push(...list('denyDomains', o.denyDomains).map((d) => flag('deny-domain', d)));
  out.push(...list('allowPorts', o.allowPorts).map((p) => flag('allow-port', p)));
  out.push(...list('addHosts', o.addHosts).map((h) => flag('add-host', h)));
  out.push(...list('publish', o.publish).map((p) => flag('publish', p)));
  if (o.allowPrivateAddresses)
    out.push('--allow-private-addresses');
}

/* expose: "SRC[:DST][:ro|rw]" as the flag takes it, or {source, target,
 * mode}; an object whose paths hold ':' cannot be a flag and goes into the
 * settings layer instead (settings.expose). */
function expose(o, out, settings) {
  const items = o.expose === undefined ? [] : Array.isArray(o.expose) ? o.expose : [o.expose];
  items.forEach((e, i) => {
    const name = `expose[${i}]`;
    if (typeof e === 'string')
      return out.push(flag('expose', str(name, e)));
    if (!e || typeof e !== 'object' || e.source === undefined)
      throw badOption(name, 'expected "SRC[:DST][:ro|rw]" or {source, target, mode}');
    const source = nodePath.resolve(str(`${name}.source`, e.source));
    const target = e.target === undefined ? source : str(`${name}.target`, e.target);
    const mode = e.mode === undefined ? 'ro' : str(`${name}.mode`, e.mode);
    if (!['ro', 'rw'].includes(mode))
      throw badOption(`${name}.mode`, `'${mode}': expected ro or rw`);
    if (source.includes(':') || target.includes(':')) {
      (settings.expose = settings.expose || []).push({ source, target, mode });
      return undefined;
    }
    return out.push(flag('expose', `${source}:${target}:${mode}`));
  });
}

/* env values go into the settings layer (a 0600 file), not argv: every
 * local user can read a process's argv in /proc, and a harness passes
 * tokens this way. Only the names of keepEnv are flags. */
function env(o, out, settings) {
  if (o.env !== undefined) {
    if (!o.env || typeof o.env !== 'object' || Array.isArray(o.env))
      throw badOption('env', 'expected an object of names and values');
    const set = {};
    for (const [k, v] of Object.entries(o.env)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
        throw badOption(`env.${k}`, 'not a variable name', 'letters, digits and _, not starting with a digit');
      set[k] = str(`env.${k}`, v);
    }
    const mine = settings.env && typeof settings.env === 'object' ? settings.env : {};
    if (Object.keys(set).length)
      settings.env = { ...mine, set: { ...(mine.set || {}), ...set } };
  }
  out.push(...list('keepEnv', o.keepEnv).map((k) => flag('keep-env', k)));
}

function limits(o, out) {
  const l = o.limits || {};
  if (typeof l !== 'object')
    throw badOption('limits', 'expected an object: {memory, pids, cpu, timeout, killGrace}');
  for (const [k, f] of [['memory', 'memory'], ['pids', 'pids'], ['cpu', 'cpu'], ['timeout', 'timeout'], ['killGrace', 'kill-grace']])
    if (l[k] !== undefined && l[k] !== null)
      out.push(flag(f, str(`limits.${k}`, l[k])));
  for (const known of Object.keys(l))
    if (!['memory', 'pids', 'cpu', 'timeout', 'killGrace'].includes(known))
      throw badOption(`limits.${known}`, 'unknown limit', 'memory, pids, cpu, timeout or killGrace');
  if (o.timeout !== undefined && o.timeout !== null)
    out.push(flag('timeout', str('timeout', o.timeout)));
  if (o.killGrace !== undefined)
    out.push(flag('kill-grace', str('killGrace', o.killGrace)));
}

/* routes: {NAME: PRESET | URL | {url | preset, headers: {H: SOURCE},
 * allow: ["METHOD PATH"], ca: FILE, allowHttp}} (docs/network.md). */
function routes(o, out) {
  if (o.routes === undefined)
    return;
  if (!o.routes || typeof o.routes !== 'object')
    throw badOption('routes', 'expected an object: {NAME: PRESET | URL | {url, headers, allow}}');
  for (const [name, r] of Object.entries(o.routes)) {
    const at = `routes.${name}`;
    const spec = typeof r === 'string' ? { url: r } : r || {};
    const target = spec.url !== undefined ? str(`${at}.url`, spec.url) : spec.preset !== undefined ? str(`${at}.preset`, spec.preset) : null;
    if (target === null)
      throw badOption(at, 'expected a preset name, a URL or {url, headers, allow}');
    out.push(flag('route', `${str(at, name)}=${target}`));
    for (const [h, src] of Object.entries(spec.headers || {}))
      out.push(flag('route-header', `${name}:${str(`${at}.headers`, h)}=${str(`${at}.headers.${h}`, src)}`));
    out.push(...list(`${at}.allow`, spec.allow).map((a) => flag('route-allow', `${name}:${a}`)));
    if (spec.ca !== undefined)
      out.push(flag('route-ca', `${name}:${str(`${at}.ca`, spec.ca)}`));
    if (spec.allowHttp)
      out.push(flag('route-allow-http', name));
  }
}

function simple(o, out) {
  const one = (key, f, v = o[key]) => { if (v !== undefined && v !== null) out.push(flag(f, str(key, v))); };
  if (o.workspace !== undefined)
    out.push(flag('workspace', nodePath.resolve(str('workspace', o.workspace))));
  one('chdir', 'chdir');
  one('changes', 'changes');
  one('session', 'session');
  one('backend', 'backend');
  one('landlock', 'landlock');
  one('seccomp', 'seccomp');
  one('agent', 'agent');
  one('configFormat', 'config-format');
  one('image', 'image');
  one('askTimeout', 'ask-timeout');
  one('instance', 'instance', o.instance && typeof o.instance === 'object' ? o.instance.name : o.instance);
  for (const [key, f] of [['ephemeral', 'ephemeral'], ['acceptWeaker', 'accept-weaker'], ['noConfig', 'no-config'],
    ['trustWorkspaceConfig', 'trust-workspace-config'], ['ownIdentity', 'own-identity'], ['explainDenials', 'explain-denials']])
    if (o[key])
      out.push(`--${f}`);
  out.push(...[...list('profile', o.profile), ...list('profiles', o.profiles)].map((p) => flag('profile', p)));
  out.push(...list('configFiles', o.configFiles).map((f) => flag('config', nodePath.resolve(f))));
}

/**
 * The flags for these options, and the settings (ringfence's own schema,
 * docs/config.md) that must go into a --config layer: o.config and what no
 * flag can say. Throws RingfenceError for a bad option.
 */
function toFlags(o = {}) {
  if (typeof o !== 'object' || o === null)
    throw badOption('options', 'expected an object');
  for (const k of Object.keys(o))
    if (!KNOWN.has(k))
      throw badOption(k, 'unknown option', 'see docs/node.md for the options run() takes');
  const out = [];
  const settings = {};
  if (o.config !== undefined) {
    if (!o.config || typeof o.config !== 'object' || Array.isArray(o.config))
      throw badOption('config', 'expected an object of ringfence settings (docs/config.md)');
    Object.assign(settings, o.config);
  }
  simple(o, out);
  network(o, out);
  expose(o, out, settings);
  env(o, out, settings);
  limits(o, out);
  routes(o, out);
  return { flags: out, settings: Object.keys(settings).length ? settings : null };
}

/** argv for a command: an array as it is, a string for /bin/sh -c. */
function commandArgv(command) {
  if (typeof command === 'string')
    return ['/bin/sh', '-c', str('command', command)];
  if (!Array.isArray(command) || command.length === 0)
    throw badOption('command', 'expected a non-empty array of strings, or a shell command string');
  return command.map((a, i) => str(`command[${i}]`, a));
}

module.exports = { toFlags, commandArgv, str };
