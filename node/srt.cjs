// SPDX-License-Identifier: LGPL-2.1-or-later
// require('ringfence/srt'): sandbox-runtime's SandboxManager over ringfence.
'use strict';

module.exports = require('./lib/srt.cjs');
