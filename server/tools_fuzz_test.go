package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/schema"
)

type fuzzInner struct {
	X int `json:"x" jsonschema:"minimum=0,maximum=10"`
	Y int `json:"y,omitempty" jsonschema:"maximum=1"`
}

type fuzzArgs struct {
	A    fuzzInner         `json:"a"`
	Mode string            `json:"mode" jsonschema:"enum=fast|slow"`
	N    *float64          `json:"n,omitempty" jsonschema:"minimum=-1,maximum=1"`
	Tags []string          `json:"tags,omitempty" jsonschema:"maxItems=3,maxLength=4"`
	More map[string]string `json:"more,omitempty"`
}

// FuzzValidatedSatisfiesSchema: whatever arguments pass the server's
// validation reach the handler as a value that, encoded again, satisfies
// the same schema: the schema validates exactly what the handler receives
// (no duplicate member, case variant or other reading difference lets a
// value the schema refuses through).
func FuzzValidatedSatisfiesSchema(f *testing.F) {
	for _, seed := range []string{
		`{"a":{"x":1},"mode":"fast"}`,
		`{"a":{"x":1,"y":5},"a":{"x":1},"mode":"fast"}`,
		`{"a":{"x":1},"a":{"x":1,"y":5},"mode":"fast"}`,
		`{"a":{"x":1,"Y":5},"mode":"fast"}`,
		`{"a":{"x":1},"mode":"fast","Mode":"other"}`,
		`{"a":{"x":1},"mode":"slow","n":0.5,"tags":["ab","cd"],"more":{"k":"v","k":"w"}}`,
		`{"a":{"x":1},"mode":"fast","tags":["a","b","c"],"tags":["a","b","c","d"]}`,
		`{"a":{"x":1,"\u0079":5},"mode":"fast"}`,
	} {
		f.Add([]byte(seed))
	}
	s := New(protocol.Implementation{Name: "fuzz", Version: "1"}, nil)
	var got fuzzArgs
	AddTool(s, &protocol.Tool{Name: "t"}, func(ctx context.Context, req *CallRequest, in fuzzArgs) (string, error) {
		got = in
		return "ok", nil
	})
	e, _ := s.tools.get("t")
	sch, err := schema.Compile(e.def.InputSchema)
	if err != nil {
		f.Fatal(err)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		got = fuzzArgs{}
		params := []byte(`{"name":"t","arguments":` + string(args) + `,` + meta + `}`)
		r := handle(s, context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: protocol.MethodToolsCall, Params: params}, nil)
		if r == nil || r.Error != nil {
			return // refused
		}
		var res protocol.CallToolResult
		if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError {
			return // the arguments did not decode
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.ValidateJSON(again); err != nil {
			t.Fatalf("arguments %s passed validation, but the handler received %s, which fails it: %v", args, again, err)
		}
	})
}
