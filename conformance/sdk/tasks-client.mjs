// Calls tools that become tasks on an MCP server (revision 2026-07-28,
// io.modelcontextprotocol/tasks) with the official TypeScript Tasks
// client (@modelcontextprotocol/ext-tasks) over the TypeScript SDK's
// Client, and prints what it saw as one JSON object: slow_compute, a task
// followed to its result, and confirm_delete, a task that asks for input,
// answered through the package's input handler. Usage:
// node tasks-client.mjs URL
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const url = new URL(process.argv[2]);
const TASKS = 'io.modelcontextprotocol/tasks';
const clientInfo = { name: 'mcpkit-tasks-interop', version: '1.0.0' };
const clientCapabilities = { elicitation: {}, extensions: { [TASKS]: {} } };
const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
const protocolVersion = '2026-07-28';

// The wire: every request the Tasks client sends itself (tools/call and
// tasks/*) is one POST, its headers mirroring the body as the revision
// requires; resultTypes seen are recorded.
const seen = { resultTypes: [], methods: [] };
let nextId = 1;
async function rawDispatch(request, options) {
  const body = { jsonrpc: '2.0', id: `ts-${nextId++}`, ...request };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': protocolVersion,
    'Mcp-Method': body.method,
  };
  const name = body.method === 'tools/call' ? body.params?.name : body.params?.taskId;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  seen.methods.push(body.method);
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: options?.signal });
  const text = await res.text();
  let msg;
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const m = JSON.parse(line.slice(5));
      if (m.id === body.id) msg = m;
    }
  } else {
    msg = JSON.parse(text);
  }
  if (!msg) throw new Error(`no response to ${body.method} (HTTP ${res.status})`);
  if (msg.error) return { kind: 'error', error: msg.error };
  if (msg.result?.resultType) seen.resultTypes.push(msg.result.resultType);
  return { kind: 'result', result: msg.result };
}

const session = createTaskSessionFromClient(client, {
  endpointId: url.href,
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities },
  onInputRequest: async (request) => {
    if (request.kind === 'elicitation') return { action: 'accept', content: { confirm: true } };
    throw new Error(`unexpected input request ${request.kind}`);
  },
});
const out = { era: client.getProtocolEra(), calls: {} };
try {
  for (const [tool, args] of [['slow_compute', { seconds: 1, label: 'from typescript' }], ['confirm_delete', { filename: 'ts.txt' }]]) {
    const execution = await session.callTool(tool, args);
    const { outcome } = await execution.settle();
    out.calls[tool] = resultFromTaskOutcome(outcome);
  }
} finally {
  await session.close();
  await client.close();
}
out.seen = seen;
console.log(JSON.stringify(out));
