// SPDX-License-Identifier: LGPL-2.1-or-later
// RingfenceError: what ringfence printed when it failed ("ringfence: what:
// why" and a "hint:" line), taken apart into the step, the path and the hint.
'use strict';

const EXIT_FAILURE = 125;

class RingfenceError extends Error {
  constructor(message, { hint = null, step = null, path = null, exitCode = EXIT_FAILURE, stderr = '' } = {}) {
    super(message);
    this.name = 'RingfenceError';
    this.hint = hint;
    this.step = step;
    this.path = path;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }

  /** The message and the hint, as the CLI prints them. */
  toString() {
    return `${this.name}: ${this.message}${this.hint ? `\nhint: ${this.hint}` : ''}`;
  }
}

/* "sandbox setup failed at step 'mount' for /x: why" (src/lib/proc/proc.c)
 * names the step and the path; a configuration error names the setting
 * first ("workspace (from command line): /nonexist: why"). */
function locate(message) {
  const setup = /^sandbox setup failed at step '([^']*)'(?: for (.*?))?: [^:]*$/.exec(message);
  if (setup)
    return { step: setup[1], path: setup[2] || null };
  const parts = message.split(': ');
  const step = parts.length > 1 && !parts[0].startsWith('/') ? parts[0].replace(/ \(from [^)]*\)$/, '') : null;
  /* the first absolute path outside "(from FILE)", which names the layer */
  const m = /(?:^|[\s'"])(\/[^\s:'"]*)/.exec(message.replace(/\(from [^)]*\)/g, ''));
  const path = m ? m[1] : null;
  return { step, path };
}

/** The error ringfence reported on stderr: its last "ringfence: " line that
 * is not a warning, and the "hint: " line after it. */
function fromStderr(stderr, exitCode, fallback) {
  const lines = String(stderr).split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    if (!l.startsWith('ringfence: ') || l.startsWith('ringfence: warning: '))
      continue;
    const message = l.slice('ringfence: '.length);
    const next = lines[i + 1] || '';
    const hint = next.startsWith('hint: ') ? next.slice('hint: '.length) : null;
    return new RingfenceError(message, { hint, exitCode, stderr, ...locate(message) });
  }
  return new RingfenceError(fallback, { exitCode, stderr });
}

/** A bad option of this package: said before anything runs. */
function badOption(name, why, hint = null) {
  return new RingfenceError(`${name}: ${why}`, { step: name, hint, exitCode: EXIT_FAILURE });
}

module.exports = { RingfenceError, fromStderr, badOption, locate, EXIT_FAILURE };
