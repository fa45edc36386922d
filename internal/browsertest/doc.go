// Package browsertest holds mcpkit's browser tests: headless Chromium,
// driven with chromedp, calling mcpkit servers from web pages (CORS,
// streamed answers, cancellation) and hosting the query view with the MCP
// Apps SDK's app-bridge. They run when MCPKIT_CHROMIUM names a Chromium
// binary (`make browser` installs Debian's package and sets it) and skip
// otherwise; MCPKIT_NODE_MODULES names the pinned npm packages
// (conformance/node_modules) the host page is bundled from.
package browsertest
