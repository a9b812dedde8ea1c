// SPDX-License-Identifier: LGPL-2.1-or-later
// The agent's tools as an MCP server (the official SDK's McpServer over
// stdio): one `bash` tool. The harness starts it inside ringfence with
// rf.spawn(), so every command the model asks for runs in the sandbox.
import { execFile } from 'node:child_process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'sandboxed-tools', version: '1.0.0' });
server.tool('bash', 'Run a shell command in the workspace', { command: z.string() }, async ({ command }) => {
  const out = await new Promise((resolve) => {
    execFile('bash', ['-c', command], { timeout: 60000, maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      resolve(`${stdout}${stderr}exit:${err ? err.code ?? err.signal : 0}\n`));
  });
  return { content: [{ type: 'text', text: out }] };
});
await server.connect(new StdioServerTransport());
