// SPDX-License-Identifier: LGPL-2.1-or-later
// onAsk: the listener `--ask socket:PATH` connects to (docs/network.md,
// "Asking instead of refusing"). ringfence sends one JSON line per question
// and reads one JSON line per answer, matched by id.
//
// Who may connect: the socket lives in a 0700 directory of ours, so the
// kernel refuses every other uid (root aside) at connect(); ringfence itself
// checks with SO_PEERCRED that the listener is the caller's own uid. The
// sandbox cannot reach the path (its /tmp is its own; ringfence refuses a
// socket inside the workspace or an exposed path).
'use strict';

const net = require('node:net');
const nodePath = require('node:path');

const MAX_LINE = 64 << 10; // a question is a few hundred bytes; more is not ringfence
const DECISIONS = ['allow', 'deny'];
const SCOPES = ['once', 'run', 'always'];

/** What onAsk returned, as an answer line; anything unclear is "deny". */
function answerOf(id, a) {
  if (a === true || a === false)
    return { id, decision: a ? 'allow' : 'deny', scope: 'once' };
  const decision = a && DECISIONS.includes(a.decision) ? a.decision : 'deny';
  const scope = a && SCOPES.includes(a.scope) ? a.scope : 'once';
  return { id, decision, scope };
}

function serve(sock, onAsk, onError) {
  let buf = '';
  sock.setEncoding('utf8');
  sock.on('error', () => {});
  sock.on('data', (chunk) => {
    buf += chunk;
    if (buf.length > MAX_LINE && !buf.includes('\n')) {
      sock.destroy();
      return;
    }
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let q;
      try {
        q = JSON.parse(line);
      } catch {
        continue; // not a question: ringfence only ever sends JSON lines
      }
      if (!q || typeof q !== 'object' || !Number.isInteger(q.id))
        continue;
      Promise.resolve()
        .then(() => onAsk(q))
        .catch((e) => { onError(e); return false; })
        .then((a) => { if (!sock.destroyed) sock.write(`${JSON.stringify(answerOf(q.id, a))}\n`); });
    }
  });
}

/** Listen in dir (a private directory): {path, close()}. A unix socket is
 * bound and listening when server.listen() returns, before ringfence starts. */
function listen(dir, onAsk, onError = () => {}) {
  const path = nodePath.join(dir, 'ask.sock');
  const server = net.createServer((sock) => serve(sock, onAsk, onError));
  const conns = new Set();
  server.on('connection', (s) => { conns.add(s); s.on('close', () => conns.delete(s)); });
  server.on('error', onError);
  server.listen(path);
  return {
    path,
    close() {
      for (const s of conns)
        s.destroy();
      server.close();
    },
  };
}

module.exports = { listen, answerOf };
