package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/sse"
)

// eraSSE names a server found behind the HTTP+SSE transport of revision
// 2024-11-05 (legacy era, sessions only).
const eraSSE = "legacy (HTTP+SSE)"

// detectSSE is the last step of the HTTP era detection, as clients do it:
// when initialize was refused with 400, 404 or 405, a GET expecting the
// HTTP+SSE endpoint event. It keeps the connection for checkSSE.
func (c *checker) detectSSE(ctx context.Context) bool {
	if c.http == nil || c.initReply == nil {
		return false
	}
	switch c.initReply.status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return false
	}
	dctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	conn, err := sse.Dial(dctx, c.o.URL, &sse.ClientOptions{Header: c.o.Header})
	if err != nil {
		c.sseErr = err
		return false
	}
	c.sse = conn
	return true
}

// checkSSE checks an HTTP+SSE server: its endpoint, a session's handshake
// over it, and the lists its capabilities promise. The checks of
// Streamable HTTP and of the modern era do not apply to it.
func (c *checker) checkSSE(ctx context.Context) {
	f := c.begin("sse.endpoint")
	f.Sent = "GET " + c.o.URL + " (Accept: text/event-stream)"
	f.Got = "endpoint " + c.sse.Endpoint()
	c.end(f) // Dial checked it: the first event, on the stream's origin

	f = c.begin("sse.initialize")
	f.Sent = "initialize (protocolVersion " + protocol.LegacyVersions[0] + ") POSTed to the endpoint"
	cl := client.New(protocol.Implementation{Name: clientInfo["name"], Version: clientInfo["version"]}, &client.Options{DisableCache: true})
	sctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	s, err := cl.Connect(sctx, c.sse, &client.ConnectOptions{Era: client.EraLegacy})
	c.sse = nil // the session owns it now
	if err != nil {
		f.Got = clip(err.Error(), 160)
		f.fail("initialize over the stream got no usable answer")
		c.end(f)
		c.skipAll("no session over HTTP+SSE", "sse.lists")
		return
	}
	defer s.Close()
	f.Got = "protocolVersion " + s.ProtocolVersion() + ", server " + s.ServerInfo().Name
	if !slices.Contains(protocol.LegacyVersions, s.ProtocolVersion()) {
		f.fail("protocolVersion %q is not a handshake revision", s.ProtocolVersion())
	}
	c.end(f)

	f = c.begin("sse.lists")
	caps := s.ServerCapabilities()
	var sent, got []string
	list := func(name string, n int, err error) {
		sent = append(sent, name)
		if err != nil {
			got = append(got, name+": "+clip(err.Error(), 60))
			f.fail("%s failed", name)
			return
		}
		got = append(got, name+": "+strconv.Itoa(n))
	}
	if caps.Tools != nil {
		r, err := s.ListTools(sctx, &client.ListOptions{All: true})
		list(protocol.MethodToolsList, lenOf(r, func() int { return len(r.Tools) }), err)
	}
	if caps.Resources != nil {
		r, err := s.ListResources(sctx, &client.ListOptions{All: true})
		list(protocol.MethodResourcesList, lenOf(r, func() int { return len(r.Resources) }), err)
	}
	if caps.Prompts != nil {
		r, err := s.ListPrompts(sctx, &client.ListOptions{All: true})
		list(protocol.MethodPromptsList, lenOf(r, func() int { return len(r.Prompts) }), err)
	}
	if len(sent) == 0 {
		c.skip("sse.lists", "the server declares no tools, resources or prompts")
		return
	}
	f.Sent, f.Got = strings.Join(sent, ", "), strings.Join(got, "; ")
	c.end(f)
}

func lenOf[T any](r *T, n func() int) int {
	if r == nil {
		return 0
	}
	return n()
}

// sseNote says what the GET found when the endpoint is no HTTP+SSE
// server either, for era.detect's answer.
func (c *checker) sseNote() string {
	if c.sseErr == nil {
		return ""
	}
	if errors.Is(c.sseErr, sse.ErrNotSSE) {
		return "; GET: no HTTP+SSE endpoint event"
	}
	return fmt.Sprintf("; GET: %s", clip(c.sseErr.Error(), 60))
}
