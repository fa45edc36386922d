// Calls tools as tasks on an MCP server over revision 2025-11-25 (the
// initialize handshake, the core form of tasks) with the official
// TypeScript SDK's Client (@modelcontextprotocol/sdk, its experimental
// tasks API), and prints what it saw as one JSON object: slow_compute, a
// task followed to its result, confirm_delete, a task that asks for
// confirmation (answered by the client's elicitation handler), the
// tools' taskSupport, tasks/list and a cancelled failing_job. Usage:
// node tasks-legacy-client.mjs URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = new URL(process.argv[2]);
const client = new Client({ name: 'mcpkit-legacy-tasks-interop', version: '1.0.0' }, {
  capabilities: { elicitation: {}, tasks: { list: {}, cancel: {} } },
});
const elicited = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited.push(req.params.message);
  return { action: 'accept', content: { confirm: true } };
});
await client.connect(new StreamableHTTPClientTransport(url));

const out = { version: client.getServerVersion()?.name, serverTasks: client.getServerCapabilities()?.tasks ?? null, taskSupport: {}, calls: {}, messages: {}, elicited };
const { tools } = await client.listTools();
for (const t of tools) if (t.execution?.taskSupport) out.taskSupport[t.name] = t.execution.taskSupport;

for (const [tool, args] of [['slow_compute', { seconds: 1, label: 'from typescript' }], ['confirm_delete', { filename: 'ts.txt' }]]) {
  out.messages[tool] = [];
  const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: args }, undefined, { task: { ttl: 60000 } });
  for await (const m of stream) {
    out.messages[tool].push(m.type);
    if (m.type === 'taskCreated') out.calls[tool + ':taskId'] = m.task.taskId;
    if (m.type === 'result') out.calls[tool] = m.result;
    if (m.type === 'error') out.calls[tool] = { error: String(m.error?.message ?? m.error) };
  }
}

const listed = await client.experimental.tasks.listTasks();
out.listed = listed.tasks.map((t) => t.taskId);

const failing = client.experimental.tasks.callToolStream({ name: 'failing_job', arguments: {} }, undefined, { task: { ttl: 60000 } });
for await (const m of failing) {
  if (m.type === 'taskCreated') {
    const cancelled = await client.experimental.tasks.cancelTask(m.task.taskId);
    out.cancelled = cancelled.status;
    out.afterCancel = (await client.experimental.tasks.getTask(m.task.taskId)).status;
    break;
  }
}
console.log(JSON.stringify(out));
await client.close();
