package sqlserver

import (
	"context"
	_ "embed"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// The query view, an MCP App (the io.modelcontextprotocol/ui extension):
// a page hosts that support the extension show in a sandboxed frame for
// query results. It renders the tool's structuredContent as a sortable
// table with a bar chart when the result suits one, and reads on through
// next_cursor with tools/call through the host. Hosts without the
// extension ignore it and show the result as before.
const (
	// QueryViewURI is the view's resource, named by the query tool's
	// _meta.ui.resourceUri.
	QueryViewURI = "ui://mcpkit/query-result.html"
	// UIExtension identifies the MCP Apps extension in capabilities.
	UIExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of MCP Apps HTML resources.
	AppMIMEType = "text/html;profile=mcp-app"
)

//go:embed view/query.html
var queryView string

// viewCache: the page changes only with the binary.
var viewCache = protocol.CacheHints{TTLMs: 3_600_000, CacheScope: protocol.CachePublic}

// viewMeta is the _meta of the view's resource and of its contents: a
// content security policy that allows no origin at all (the page is
// self-contained and reaches the server only through the host), and a
// border around it.
func viewMeta() protocol.Meta {
	none := []string{}
	return protocol.Meta{"ui": map[string]any{
		"csp": map[string]any{
			"connectDomains":  none,
			"resourceDomains": none,
			"frameDomains":    none,
			"baseUriDomains":  none,
		},
		"prefersBorder": true,
	}}
}

// queryToolMeta links the query tool to the view, for the model and for
// the view's own calls, under the nested key and the flat one older hosts
// read.
func queryToolMeta() protocol.Meta {
	return protocol.Meta{
		"ui": map[string]any{
			"resourceUri": QueryViewURI,
			"visibility":  []string{"model", "app"},
		},
		"ui/resourceUri": QueryViewURI,
	}
}

// addView registers the view and advertises the extension.
func (d *DB) addView(s *server.Server) {
	s.AddExtension(UIExtension, nil)
	s.AddResource(&protocol.Resource{
		URI: QueryViewURI, Name: "query-view", Title: "Query result view",
		Description: "An interactive view of query results for hosts that show MCP Apps: a sortable table, paging and a bar chart",
		MIMEType:    AppMIMEType,
		Meta:        viewMeta(),
	}, readView)
}

func readView(ctx context.Context, req *server.ReadRequest) (*protocol.ReadResourceResult, error) {
	return &protocol.ReadResourceResult{
		Contents:   []*protocol.ResourceContents{{URI: req.URI, MIMEType: AppMIMEType, Text: queryView, Meta: viewMeta()}},
		CacheHints: viewCache,
	}, nil
}
