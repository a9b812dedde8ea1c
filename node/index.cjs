// SPDX-License-Identifier: LGPL-2.1-or-later
// ringfence for Node.js: run the processes an agent starts in ringfence's
// sandbox, through the installed CLI (docs/node.md says why).
'use strict';

const { RingfenceError } = require('./lib/errors.cjs');
const { run, spawn, SandboxProcess } = require('./lib/process.cjs');
const { Instance, Session, plan, doctor, profiles } = require('./lib/manage.cjs');
const { printable } = require('./lib/printable.cjs');

module.exports = { run, spawn, SandboxProcess, Instance, Session, plan, doctor, profiles, printable, RingfenceError };
