// Serves an OAuth authorization server built as many MCP servers build
// theirs with the official TypeScript SDK: its authorization router
// (mcpAuthRouter: metadata, dynamic client registration, authorization and
// token endpoints) over the SDK's in-memory demo provider, which accepts a
// redirect_uri only when it is one the client registered, exactly, port
// included. Tokens are opaque; POST /introspect answers RFC 7662 requests
// authenticated with HTTP Basic as RS_CLIENT_ID:RS_CLIENT_SECRET (from the
// environment), for the resource server. GET /test/state returns the
// registrations and the redirect URIs of the authorizations granted, for
// the test. Prints {"port": N} once listening on a loopback port; the
// issuer is http://127.0.0.1:N/. Usage: node auth-server.mjs
import http from 'node:http';
import express from 'express';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';

const rsClientID = process.env.RS_CLIENT_ID || 'mcp-resource';
const rsClientSecret = process.env.RS_CLIENT_SECRET || '';

const provider = new DemoInMemoryAuthProvider();
const registrations = [];
const authorizations = [];

const register = provider.clientsStore.registerClient.bind(provider.clientsStore);
provider.clientsStore.registerClient = async (client) => {
  registrations.push({ client_id: client.client_id, redirect_uris: client.redirect_uris });
  return register(client);
};
const authorize = provider.authorize.bind(provider);
provider.authorize = async (client, params, res) => {
  await authorize(client, params, res); // throws for an unregistered redirect_uri
  authorizations.push(params.redirectUri);
};

const httpServer = http.createServer();
httpServer.listen(0, '127.0.0.1', () => {
  const port = httpServer.address().port;
  const issuerUrl = new URL(`http://127.0.0.1:${port}/`);
  const app = express();
  app.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: ['mcp:tools'] }));
  app.post('/introspect', express.urlencoded({ extended: false }), async (req, res) => {
    const basic = Buffer.from(`${encodeURIComponent(rsClientID)}:${encodeURIComponent(rsClientSecret)}`).toString('base64');
    if (!rsClientSecret || req.headers.authorization !== `Basic ${basic}`) {
      res.status(401).json({ error: 'invalid_client' });
      return;
    }
    try {
      const info = await provider.verifyAccessToken(String(req.body.token || ''));
      const answer = { active: true, client_id: info.clientId, sub: info.clientId, scope: info.scopes.join(' '), exp: info.expiresAt };
      if (info.resource) answer.aud = info.resource.href;
      res.json(answer);
    } catch {
      res.json({ active: false });
    }
  });
  app.get('/test/state', (req, res) => res.json({ registrations, authorizations }));
  httpServer.on('request', app);
  console.log(JSON.stringify({ port }));
});
