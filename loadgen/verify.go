package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// mismatchError is a response that arrived but is not the one expected.
type mismatchError struct{ why string }

func (e *mismatchError) Error() string { return "mismatch: " + e.why }

func mismatch(format string, args ...any) error {
	return &mismatchError{fmt.Sprintf(format, args...)}
}

// verifier checks responses and builds the request bodies of a run.
type verifier struct {
	tool   string
	echo   bool   // the tool is echo with a string "text" argument
	text   string // the text echo must return
	needle []byte // `"text":` and the text as JSON, the common encoding

	// The request line before its id, and after it in each era.
	head, tail, modernTail []byte
}

func newVerifier(tool string, args json.RawMessage) (*verifier, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("loadgen: the tool's arguments must be a JSON object: %s", args)
	}
	v := &verifier{tool: tool}
	if raw, ok := obj["text"]; ok && tool == "echo" {
		if err := json.Unmarshal(raw, &v.text); err == nil {
			v.echo = true
			v.needle = append([]byte(`"text":`), raw...)
			if enc, err := json.Marshal(v.text); err == nil {
				v.needle = append([]byte(`"text":`), enc...)
			}
		}
	}
	name, _ := json.Marshal(tool)
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return nil, err
	}
	v.head = []byte(`{"jsonrpc":"2.0","id":`)
	params := `,"method":"` + protocol.MethodToolsCall + `","params":{"name":` + string(name) + `,"arguments":` + compact.String()
	v.tail = []byte(params + `}}`)
	modernTail := params + `,"_meta":{"` + protocol.MetaProtocolVersion + `":"` + protocol.Version2026_07_28 +
		`","` + protocol.MetaClientCapabilities + `":{}}}}`
	v.modernTail = []byte(modernTail)
	return v, nil
}

// appendRequest appends the tools/call request with id to dst.
func (v *verifier) appendRequest(dst []byte, id int64, modern bool) []byte {
	dst = append(dst, v.head...)
	dst = strconv.AppendInt(dst, id, 10)
	if modern {
		return append(dst, v.modernTail...)
	}
	return append(dst, v.tail...)
}

// check verifies the response to the request with id.
func (v *verifier) check(resp []byte, id int64) error {
	resp = bytes.TrimSpace(resp)
	m, err := jsonrpc.Decode(resp)
	if err != nil {
		return mismatch("response is not a JSON-RPC message (%v): %.80q", err, resp)
	}
	var want [20]byte
	if got := m.ID.Raw(); !bytes.Equal(got, strconv.AppendInt(want[:0], id, 10)) {
		return mismatch("response id %s, want %d", got, id)
	}
	if m.Error != nil {
		return fmt.Errorf("error response: %v", m.Error)
	}
	var result struct {
		IsError bool           `json:"isError"`
		Content jsontext.Value `json:"content"`
	}
	if jsontext.Value(m.Result).Kind() != '{' || jsonrpc.Unmarshal(m.Result, &result) != nil {
		return mismatch("response has no result object")
	}
	if result.IsError {
		return errors.New("tool error: " + string(result.Content))
	}
	if !v.echo {
		return nil
	}
	if bytes.Contains(result.Content, v.needle) {
		return nil
	}
	// Another encoder may escape differently: compare decoded.
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := jsonrpc.Unmarshal(result.Content, &items); err != nil || len(items) == 0 {
		return mismatch("result has no content: %.80s", m.Result)
	}
	if items[0].Type != "text" || items[0].Text != v.text {
		return mismatch("echoed %q, want %q", items[0].Text, v.text)
	}
	return nil
}

// initializeRequest is the legacy handshake's first request.
func initializeRequest(id int64) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = strconv.AppendInt(b, id, 10)
	return append(b, `,"method":"`+protocol.MethodInitialize+`","params":{"protocolVersion":"`+protocol.Version2025_11_25+
		`","capabilities":{},"clientInfo":{"name":"mcpkit-bench","version":"1"}}}`...)
}

// initializedNotification completes the legacy handshake.
var initializedNotification = []byte(`{"jsonrpc":"2.0","method":"` + protocol.MethodNotificationInitialized + `"}`)

// checkInitialize verifies the response to initialize and returns the
// negotiated protocol version.
func checkInitialize(resp []byte, id int64) (string, error) {
	resp = bytes.TrimSpace(resp)
	m, err := jsonrpc.Decode(resp)
	if err != nil {
		return "", mismatch("initialize response is not a JSON-RPC message: %v", err)
	}
	if got := m.ID.Raw(); string(got) != strconv.FormatInt(id, 10) {
		return "", mismatch("initialize response id %s, want %d", got, id)
	}
	if m.Error != nil {
		return "", fmt.Errorf("initialize failed: %v", m.Error)
	}
	var result struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := jsonrpc.Unmarshal(m.Result, &result); err != nil || result.ProtocolVersion == "" {
		return "", mismatch("initialize result has no protocolVersion")
	}
	return result.ProtocolVersion, nil
}
