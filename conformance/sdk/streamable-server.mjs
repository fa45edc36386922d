// Serves an MCP server of the official TypeScript SDK over its Streamable
// HTTP transport in sessions mode (POST, GET and DELETE /mcp with
// Mcp-Session-Id), with one tool, echo. Prints {"port": N} once listening
// on a loopback port. Usage: node streamable-server.mjs
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const transports = new Map();

function newServer() {
  const server = new McpServer({ name: 'ts-streamable-server', version: '1.0.0' });
  server.tool('echo', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8');
  return s ? JSON.parse(s) : undefined;
}

const httpServer = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (url.pathname !== '/mcp') {
    res.writeHead(404).end('not found');
    return;
  }
  try {
    const sid = req.headers['mcp-session-id'];
    if (sid && transports.has(sid)) {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      await transports.get(sid).handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(400).end('no session');
      return;
    }
    const body = await readBody(req);
    if (!isInitializeRequest(body)) {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500).end(String(e));
  }
});

httpServer.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: httpServer.address().port }));
});
