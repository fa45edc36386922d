package check

// entry describes one check: its one-line title and the spec section it
// enforces.
type entry struct {
	title string
	spec  string
}

const (
	specIndex     = "2026-07-28 basic/index"
	specVersion   = "2026-07-28 basic/versioning#protocol-version-negotiation"
	specDiscover  = "2026-07-28 server/discover"
	specCaching   = "2026-07-28 server/utilities/caching"
	specPaging    = "2026-07-28 server/utilities/pagination"
	specTools     = "2026-07-28 server/tools"
	specResources = "2026-07-28 server/resources"
	specHTTP      = "2026-07-28 basic/transports/streamable-http"
	specLifecycle = "2025-11-25 basic/lifecycle"
	specLegacyTr  = "2025-11-25 basic/transports#session-management"
	specSSE       = "2024-11-05 basic/transports#http-with-sse"
)

// catalog lists every check by its stable ID.
var catalog = map[string]entry{
	"era.detect": {"server answers server/discover or initialize", specVersion},

	"sse.endpoint":   {"the HTTP+SSE stream's first event names a message endpoint on its origin", specSSE},
	"sse.initialize": {"initialize over HTTP+SSE answers with a handshake revision", specSSE},
	"sse.lists":      {"the lists the capabilities promise answer over HTTP+SSE", specSSE},

	"discover.answers":            {"server/discover answers with a result", specDiscover},
	"discover.result-type":        {`server/discover result has resultType "complete"`, specDiscover},
	"discover.supported-versions": {"supportedVersions is non-empty and lists the version used", specDiscover},
	"discover.server-info":        {"_meta carries io.modelcontextprotocol/serverInfo with name and version", specDiscover},
	"discover.ttl":                {"server/discover ttlMs is an integer ≥ 0", specCaching},
	"discover.cache-scope":        {"server/discover cacheScope is public or private", specCaching},
	"discover.capabilities":       {"capabilities match the methods the server answers", specDiscover},

	"meta.missing":                {"a request without _meta is rejected with -32602", specIndex + "#meta"},
	"meta.no-protocol-version":    {"_meta without protocolVersion is rejected with -32602", specIndex + "#meta"},
	"meta.no-client-capabilities": {"_meta without clientCapabilities is rejected with -32602", specIndex + "#meta"},
	"meta.no-client-info":         {"_meta without clientInfo is accepted", specIndex + "#meta"},

	"version.unsupported": {"an unsupported version gets -32022 with data.supported and data.requested", specVersion},

	"list.tools.result":              {"tools/list result has resultType, ttlMs and cacheScope", specCaching},
	"list.tools.order":               {"tools/list answers twice in the same order", specTools},
	"list.tools.pages":               {"tools/list pagination: nextCursor pages and a bad cursor", specPaging},
	"list.resources.result":          {"resources/list result has resultType, ttlMs and cacheScope", specCaching},
	"list.resources.order":           {"resources/list answers twice in the same order", specResources},
	"list.resources.pages":           {"resources/list pagination: nextCursor pages and a bad cursor", specPaging},
	"list.resource-templates.result": {"resources/templates/list result has resultType, ttlMs and cacheScope", specCaching},
	"list.resource-templates.order":  {"resources/templates/list answers twice in the same order", specResources},
	"list.resource-templates.pages":  {"resources/templates/list pagination: nextCursor pages and a bad cursor", specPaging},
	"list.prompts.result":            {"prompts/list result has resultType, ttlMs and cacheScope", specCaching},
	"list.prompts.order":             {"prompts/list answers twice in the same order", "2026-07-28 server/prompts"},
	"list.prompts.pages":             {"prompts/list pagination: nextCursor pages and a bad cursor", specPaging},

	"tools.names":        {"tool names are 1–128 characters of A-Z a-z 0-9 _ - .", specTools + "#tool-names"},
	"tools.input-schema": {"every tool has an inputSchema whose root type is object", specTools + "#tool"},
	"tools.schemas":      {"every inputSchema and outputSchema compiles (no external $ref)", specTools + "#tool"},
	"tools.x-mcp-header": {"x-mcp-header annotations are valid", specTools + "#x-mcp-header"},

	"resources.read":         {"resources/read of a listed resource has contents, ttlMs and cacheScope", specResources + "#reading-resources"},
	"resources.read-unknown": {"resources/read of an unknown URI gets -32602 with data.uri", specResources + "#error-handling"},

	"call.result":     {"tools/call of the chosen tool has resultType and content", specTools + "#calling-tools"},
	"call.structured": {"structuredContent validates against the tool's outputSchema", specTools + "#structured-content"},

	"http.version-header-missing":  {"POST without MCP-Protocol-Version gets 400 -32020", specHTTP + "#protocol-version-header"},
	"http.version-header-mismatch": {"MCP-Protocol-Version differing from _meta gets 400 -32020", specHTTP + "#protocol-version-header"},
	"http.unsupported-version":     {"an unsupported version gets HTTP 400 with a JSON-RPC body", specHTTP + "#protocol-version-header"},
	"http.method-header-missing":   {"POST without Mcp-Method gets 400 -32020", specHTTP + "#server-validation"},
	"http.method-header-mismatch":  {"Mcp-Method differing from the body gets 400 -32020", specHTTP + "#server-validation"},
	"http.name-header-missing":     {"tools/call and resources/read without Mcp-Name get 400 -32020", specHTTP + "#server-validation"},
	"http.name-header-mismatch":    {"Mcp-Name differing from the body gets 400 -32020", specHTTP + "#server-validation"},
	"http.name-base64":             {"an Mcp-Name in =?base64?…?= form is accepted", specHTTP + "#server-validation"},
	"http.origin-rejected":         {"a foreign Origin gets 403", specHTTP + "#security-warning"},
	"http.host-rebinding":          {"a foreign Host on a loopback address gets 403", specHTTP + "#security-warning"},
	"http.accept-json":             {"Accept: application/json gets a JSON answer", specHTTP + "#sending-messages-to-the-server"},
	"http.accept-sse":              {"Accept: text/event-stream gets an SSE answer", specHTTP + "#sending-messages-to-the-server"},
	"http.accept-unsupported":      {"Accept: image/png gets 406", specHTTP + "#sending-messages-to-the-server"},
	"http.content-type":            {"Content-Type: text/plain gets 415", specHTTP + "#sending-messages-to-the-server"},
	"http.notification":            {"a notification gets 202 with no body", specHTTP + "#sending-messages-to-the-server"},
	"http.get-no-session":          {"GET without a session gets 405", specHTTP + "#backward-compatibility"},
	"http.delete-no-session":       {"DELETE without a session gets 405", specHTTP + "#backward-compatibility"},
	"http.malformed":               {"a malformed body gets 400 -32700", specHTTP + "#server-validation"},
	"http.batch":                   {"a batch array gets 400 -32600", specHTTP + "#sending-messages-to-the-server"},
	"http.unknown-method":          {"an unknown method gets 404 -32601", specHTTP + "#protocol-version-header"},
	"http.error-bodies":            {"error answers are application/json JSON-RPC error objects", specHTTP + "#server-validation"},

	"legacy.initialize":      {"initialize (2025-11-25) answers with a supported protocolVersion", specLifecycle + "#initialization"},
	"legacy.session-id":      {"Mcp-Session-Id is visible ASCII", specLegacyTr},
	"legacy.lists":           {"list methods answer within the legacy session", specLifecycle + "#operation"},
	"legacy.no-result-type":  {"legacy results carry no resultType", "2026-07-28 basic/versioning#backward-compatibility-with-initialization-based-versions"},
	"legacy.unknown-session": {"a request with an unknown session id gets 404", specLegacyTr},
	"legacy.delete":          {"DELETE ends the session (then 404)", specLegacyTr},
}
