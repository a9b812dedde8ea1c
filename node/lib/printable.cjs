// SPDX-License-Identifier: LGPL-2.1-or-later
// printable(): a string a sandboxed command chose (a host it asked for, a
// file name, its process's name), safe to put on a terminal: printable
// ASCII as it is, anything else '?', as ringfence shows them itself
// (rf_ask_printable), so no escape sequence from inside reaches a terminal.
// {newlines: true} keeps line breaks (a diff, an output shown line by line).
'use strict';

function printable(s, { max = 4096, newlines = false } = {}) {
  const t = String(s);
  let out = '';
  for (let i = 0; i < t.length && out.length < max; i++) {
    const c = t.charCodeAt(i);
    out += (c >= 0x20 && c < 0x7f) || (newlines && c === 0x0a) ? t[i] : '?';
  }
  return out;
}

module.exports = { printable };
