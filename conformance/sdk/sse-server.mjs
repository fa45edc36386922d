// Serves an MCP server of the official TypeScript SDK over its HTTP+SSE
// transport only (GET /sse, POST /messages), with one tool, echo. Prints
// {"port": N} once listening on a loopback port. Usage: node sse-server.mjs
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';

const transports = new Map();

function newServer() {
  const server = new McpServer({ name: 'ts-sse-server', version: '1.0.0' });
  server.tool('echo', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/sse') {
    const transport = new SSEServerTransport('/messages', res);
    transports.set(transport.sessionId, transport);
    res.on('close', () => transports.delete(transport.sessionId));
    await newServer().connect(transport);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/messages') {
    const transport = transports.get(url.searchParams.get('sessionId'));
    if (!transport) {
      res.writeHead(404).end('no such session');
      return;
    }
    await transport.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end('not found');
});

httpServer.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: httpServer.address().port }));
});
