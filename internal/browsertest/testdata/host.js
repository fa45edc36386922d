// The host page of the query view test: an MCP client (the official
// TypeScript SDK) connected to the server named by the page's ?mcp= URL (on
// another origin: the server must list the page's), and the MCP
// Apps SDK's AppBridge embedding the query tool's view in a sandboxed
// iframe. window.host.show(args) runs the query tool and hands the view its
// input and result; window.host keeps what happened for the test.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const host = { state: 'starting', error: null, calls: [], initialized: false };
window.host = host;

function fail(e) {
  host.state = 'failed';
  host.error = String((e && e.stack) || e);
}

async function main() {
  const info = { name: 'mcpkit-browsertest-host', version: '1.0.0' };
  const client = new Client(info, {
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(new URLSearchParams(location.search).get('mcp'))));
  const { tools } = await client.listTools();
  const query = tools.find((t) => t.name === 'query');
  const uri = query && query._meta && query._meta.ui && query._meta.ui.resourceUri;
  if (!uri) throw new Error('the query tool declares no view: ' + JSON.stringify(query && query._meta));
  host.resourceUri = uri;
  const read = await client.readResource({ uri });
  const view = read.contents[0];
  host.mimeType = view.mimeType;

  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.width = '1000px';
  iframe.style.height = '700px';
  iframe.style.border = '1px solid #ccc';
  document.body.appendChild(iframe);

  const bridge = new AppBridge(null, info, { serverTools: {}, logging: {} });
  // The view's own tools/call requests (paging) go to the server through
  // the client; note them for the test.
  bridge.oncalltool = async (params) => {
    host.calls.push(params);
    return client.callTool(params);
  };
  bridge.onsizechange = (size) => {
    if (size && size.height) iframe.style.height = Math.min(Math.max(size.height, 200), 2000) + 'px';
  };
  bridge.oninitialized = () => {
    host.initialized = true;
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = view.text;

  host.show = async (args) => {
    try {
      host.state = 'calling';
      await bridge.sendToolInput({ arguments: args });
      const result = await client.callTool({ name: 'query', arguments: args });
      await bridge.sendToolResult(result);
      host.state = 'shown';
      return true;
    } catch (e) {
      fail(e);
      return false;
    }
  };
  host.state = 'ready';
}

main().catch(fail);
