// Connects to an MCP server over the HTTP+SSE transport with the official
// TypeScript SDK's SSEClientTransport, lists its tools, calls echo, and
// prints what it saw as one JSON object. Usage: node sse-client.mjs URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

const url = new URL(process.argv[2]);
const client = new Client({ name: 'mcpkit-sse-interop', version: '1.0.0' });
const transport = new SSEClientTransport(url);
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: 'echo', arguments: { text: 'over http+sse' } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
  tools: tools.tools.map((t) => t.name),
  result,
}));
await client.close();
