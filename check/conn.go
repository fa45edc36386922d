package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// clientInfo names the checker in the requests it sends.
var clientInfo = map[string]string{"name": "mcpkit-check", "version": "0.1.0"}

// maxBody bounds how much of a response body is read.
const maxBody = 8 << 20

// reply is what came back for one request: the HTTP status and media type
// (zero on stdio), the raw body and the JSON-RPC response found in it.
type reply struct {
	status int
	ctype  string // media type without parameters
	sse    bool
	header http.Header
	body   []byte
	msg    *jsonrpc.Message // nil when no JSON-RPC response could be read
}

// errorCode returns the JSON-RPC error code of the reply, or 0.
func (r *reply) errorCode() int64 {
	if r == nil || r.msg == nil || r.msg.Error == nil {
		return 0
	}
	return r.msg.Error.Code
}

// result decodes the reply's result object, or returns nil.
func (r *reply) result() map[string]json.RawMessage {
	if r == nil || r.msg == nil || r.msg.Error != nil || r.msg.Result == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if jsonrpc.Unmarshal(r.msg.Result, &m) != nil {
		return nil
	}
	return m
}

// got summarises the reply for Result.Got.
func (r *reply) got() string {
	if r == nil {
		return "no answer"
	}
	var parts []string
	if r.status != 0 {
		s := "HTTP " + strconv.Itoa(r.status)
		if r.ctype != "" {
			s += " " + r.ctype
		}
		parts = append(parts, s)
	}
	switch {
	case r.msg == nil && len(r.body) == 0:
		parts = append(parts, "empty body")
	case r.msg == nil:
		parts = append(parts, "body is not a JSON-RPC response: "+clip(string(r.body), 80))
	case r.msg.Error != nil:
		parts = append(parts, "error "+strconv.FormatInt(r.msg.Error.Code, 10)+" "+strconv.Quote(clip(r.msg.Error.Message, 80)))
	default:
		parts = append(parts, "result")
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// httpConn sends raw requests to a Streamable HTTP endpoint.
type httpConn struct {
	url    string
	header http.Header
	client *http.Client
}

// post sends body with the default headers of a modern POST, changed by
// edit, and reads the answer. err is set only when no HTTP answer came.
func (h *httpConn) post(ctx context.Context, body []byte, edit func(*http.Request)) (*reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return h.do(req, edit)
}

// do adds the operator's headers, applies edit and sends req.
func (h *httpConn) do(req *http.Request, edit func(*http.Request)) (*reply, error) {
	for k, vs := range h.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode, header: resp.Header}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			r.ctype = mt
		} else {
			r.ctype = ct
		}
	}
	if r.ctype == "text/event-stream" {
		r.sse = true
		r.body, r.msg = readSSE(io.LimitReader(resp.Body, maxBody))
		return r, nil
	}
	r.body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil && len(r.body) == 0 {
		return r, nil
	}
	r.msg = decodeResponse(r.body)
	return r, nil
}

// decodeResponse returns the JSON-RPC response body holds, or nil.
func decodeResponse(body []byte) *jsonrpc.Message {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if m, err := jsonrpc.Decode(body); err == nil && m.IsResponse() {
		return m
	}
	return nil
}

// readSSE reads an event stream until it carries a JSON-RPC response,
// which it returns with the data read so far.
func readSSE(rd io.Reader) ([]byte, *jsonrpc.Message) {
	var all, data bytes.Buffer
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), maxBody)
	for sc.Scan() {
		line := sc.Bytes()
		all.Write(line)
		all.WriteByte('\n')
		switch {
		case len(line) == 0:
			if data.Len() > 0 {
				if m, err := jsonrpc.Decode(data.Bytes()); err == nil && m.IsResponse() {
					return all.Bytes(), m
				}
				data.Reset()
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
	if data.Len() > 0 {
		if m, err := jsonrpc.Decode(data.Bytes()); err == nil && m.IsResponse() {
			return all.Bytes(), m
		}
	}
	return all.Bytes(), nil
}

// stdioConn wraps a started server process.
type stdioConn struct {
	cmd *stdio.Command
}

// call sends one request and waits for its response.
func (s *stdioConn) call(ctx context.Context, id int64, method string, params json.RawMessage) (*reply, error) {
	m, err := s.cmd.Call(ctx, &transport.Call{Message: &jsonrpc.Message{ID: jsonrpc.IntID(id), Method: method, Params: params}}, nil)
	if err != nil {
		return nil, err
	}
	return &reply{msg: m, body: m.Result}, nil
}

// request is one JSON-RPC request the checker sends.
type request struct {
	method string
	params map[string]any // members besides _meta
	meta   map[string]any // the _meta member; nil omits it
}

// encode returns the request's params object.
func (q *request) encode() json.RawMessage {
	p := map[string]any{}
	for k, v := range q.params {
		p[k] = v
	}
	if q.meta != nil {
		p["_meta"] = q.meta
	}
	b, _ := json.Marshal(p)
	return b
}

// body returns the whole JSON-RPC request.
func (q *request) body(id int64) []byte {
	return jsonrpc.AppendRequest(nil, jsonrpc.IntID(id), q.method, q.encode())
}

// modernHeaders sets the headers revision 2026-07-28 asks of a request:
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and the Mcp-Param-* mirrors of
// the tool's x-mcp-header parameters.
func modernHeaders(h http.Header, version string, q *request, params []transport.HeaderParam) {
	h.Set("MCP-Protocol-Version", version)
	h.Set("Mcp-Method", q.method)
	if p := protocol.NameParam(q.method); p != "" {
		if s, ok := q.params[p].(string); ok {
			h.Set("Mcp-Name", transport.EncodeHeaderValue(s))
		}
	}
	if q.method != protocol.MethodToolsCall || len(params) == 0 {
		return
	}
	args, _ := json.Marshal(q.params["arguments"])
	for _, p := range params {
		v := lookup(args, p.Path)
		if v == nil || string(v) == "null" {
			continue
		}
		var s string
		if jsonrpc.Unmarshal(v, &s) == nil {
			h.Set("Mcp-Param-"+p.Name, transport.EncodeHeaderValue(s))
		} else {
			h.Set("Mcp-Param-"+p.Name, string(v))
		}
	}
}

func lookup(obj []byte, path []string) []byte {
	for _, k := range path {
		if len(obj) == 0 || obj[0] != '{' {
			return nil
		}
		var value []byte
		_ = jsonrpc.EachMember(obj, func(name []byte, v jsontext.Value) error {
			if string(name) == k {
				value = v
			}
			return nil
		})
		obj = value
	}
	return obj
}

// errNoAnswer marks a request that got no answer at all.
var errNoAnswer = errors.New("no answer")
