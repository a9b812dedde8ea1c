// SPDX-License-Identifier: LGPL-2.1-or-later
// A minimal ACP agent (Agent Client Protocol, @agentclientprotocol/sdk) on
// stdio, run inside `ringfence run` by acp.test.mjs. It needs no API key: a
// prompt is answered with what the agent sees of its sandbox, streamed as
// session/update chunks, after reading a file through the client
// (fs/read_text_file), so requests go both ways over the sandbox's stdio.
import { Readable, Writable } from 'node:stream';
import { existsSync, writeFileSync } from 'node:fs';
import { agent, ndJsonStream, methods, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';

const sessions = new Map();
const app = agent({ name: 'ringfence-test-agent' })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: 'ringfence-test-agent', version: '1.0.0' },
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    const sessionId = 'rf-' + (sessions.size + 1);
    sessions.set(sessionId, { cwd: params.cwd });
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const s = sessions.get(params.sessionId);
    if (!s) throw new Error('unknown session ' + params.sessionId);
    const asked = params.prompt.filter((b) => b.type === 'text').map((b) => b.text).join('');
    const fromClient = await client.request(methods.client.fs.readTextFile,
      { sessionId: params.sessionId, path: s.cwd + '/note.txt' });
    writeFileSync('written-by-agent.txt', asked + '\n');
    const report = {
      asked, note: fromClient.content, cwd: process.cwd(), pid: process.pid,
      uid: process.getuid(), sees: Object.fromEntries(
        (process.env.ACP_PROBE_PATHS ?? '').split(':').filter(Boolean).map((p) => [p, existsSync(p)])),
    };
    for (const part of ['report: ', JSON.stringify(report)])
      await client.notify(methods.client.session.update,
        { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: part } } });
    return { stopReason: 'end_turn' };
  });

const conn = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await conn.closed;
