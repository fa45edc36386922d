package client_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/leakcheck"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
)

// inputKeys returns the keys of a tools/call body's inputResponses and
// whether it carries a requestState.
func inputKeys(t *testing.T, body []byte) (keys []string, state bool) {
	t.Helper()
	var m struct {
		Params struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   *string                    `json:"requestState"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("tools/call body %s: %v", body, err)
	}
	for k := range m.Params.InputResponses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, m.Params.RequestState != nil
}

func TestInputRounds(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 30*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	conns := []struct {
		name string
		dial func() transport.ClientConn
	}{
		{"http", func() transport.ClientConn { return hs.conn() }},
		{"stdio", func() transport.ClientConn { return serveStdio(t, both) }},
	}
	tools := []struct {
		tool   string
		want   string
		asked  []string
		rounds int // tools/call requests over HTTP in the modern era
	}{
		{"test_input_required_result_elicitation", "Hello, Ada!", []string{"What is your name?"}, 2},
		{"test_input_required_result_multi_round", "Ada's favorite color is teal", []string{"Step 1: What is your name?", "Step 2: What is your favorite color?"}, 3},
	}
	for _, cn := range conns {
		for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
			for _, tc := range tools {
				t.Run(cn.name+"/"+era.String()+"/"+tc.tool, func(t *testing.T) {
					h := &nameElicitation{name: "Ada"}
					c := newClient(&client.Options{Era: era, Elicitation: h.handle})
					s, err := c.Connect(ctx, cn.dial(), nil)
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					before := len(hs.rec.posts(protocol.MethodToolsCall))
					responsesBefore := hs.rec.count("")
					res, err := s.CallTool(ctx, tc.tool, nil, nil)
					if err != nil {
						t.Fatalf("CallTool: %v", err)
					}
					if got := textOf(t, res); got != tc.want || res.IsError {
						t.Errorf("result %q (isError %v), want %q", got, res.IsError, tc.want)
					}
					if got := h.messages(); !slices.Equal(got, tc.asked) {
						t.Errorf("handler asked %q, want %q", got, tc.asked)
					}
					if cn.name != "http" {
						return
					}
					calls := hs.rec.posts(protocol.MethodToolsCall)[before:]
					if era == client.EraLegacy {
						// One request; the answers went back as responses to
						// the server's elicitation/create requests.
						if len(calls) != 1 {
							t.Errorf("%d tools/call requests in the legacy era, want 1", len(calls))
						}
						if n := hs.rec.count("") - responsesBefore; n != len(tc.asked) {
							t.Errorf("%d responses posted to the server, want %d", n, len(tc.asked))
						}
						return
					}
					if len(calls) != tc.rounds {
						t.Fatalf("%d tools/call requests, want %d", len(calls), tc.rounds)
					}
					if keys, state := inputKeys(t, calls[0].Body); keys != nil || state {
						t.Errorf("first round carries inputResponses %v / requestState %v", keys, state)
					}
					var seen []string
					for i, call := range calls[1:] {
						keys, _ := inputKeys(t, call.Body)
						if len(keys) != 1 {
							t.Fatalf("retry %d answers %v, want one key", i+1, keys)
						}
						seen = append(seen, keys[0])
					}
					want := map[int][]string{2: {"user_name"}, 3: {"step1", "step2"}}[tc.rounds]
					if !slices.Equal(seen, want) {
						t.Errorf("retries answered keys %v, want %v", seen, want)
					}
					if tc.rounds == 3 {
						if _, state := inputKeys(t, calls[2].Body); !state {
							t.Errorf("the last retry does not echo the requestState")
						}
					}
				})
			}
		}
	}
}

func TestInputHandlerError(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	refused := errors.New("the user walked away")
	h := &nameElicitation{err: refused}
	s, err := newClient(&client.Options{Elicitation: h.handle}).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "test_input_required_result_elicitation", nil, nil)
	if !errors.Is(err, refused) {
		t.Fatalf("CallTool = %+v, %v; want the handler's error", res, err)
	}
	if n := hs.rec.count(protocol.MethodToolsCall); n != 1 {
		t.Errorf("%d tools/call requests, want 1 (no retry without an answer)", n)
	}
}

func TestInputWithoutHandler(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	s, err := newClient(nil).Connect(ctx, hs.conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if caps := newClient(nil).Capabilities(); caps.Elicitation != nil {
		t.Errorf("a client without a handler declares elicitation")
	}
	// The server may still ask (the streaming fixture asks regardless);
	// with nothing to answer, the call fails rather than looping.
	if _, err := s.CallTool(ctx, "test_streaming_elicitation", nil, nil); err == nil {
		t.Fatal("CallTool succeeded without an elicitation handler")
	}
}

func TestMaxRounds(t *testing.T) {
	leakcheck.Check(t)
	ctx := testCtx(t, 10*time.Second)
	_, both := everythingServers(t, nil, nil)
	hs := serveHTTP(t, both)
	cases := []struct {
		max  int
		tool string
		err  error
	}{
		{1, "test_input_required_result_elicitation", client.ErrTooManyRounds},
		{2, "test_input_required_result_elicitation", nil},
		{2, "test_input_required_result_multi_round", client.ErrTooManyRounds},
		{3, "test_input_required_result_multi_round", nil},
	}
	for _, tc := range cases {
		h := &nameElicitation{name: "Ada"}
		s, err := newClient(&client.Options{Elicitation: h.handle, MaxRounds: tc.max}).Connect(ctx, hs.conn(), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.CallTool(ctx, tc.tool, nil, nil)
		s.Close()
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("MaxRounds %d, %s: err %v, want %v", tc.max, tc.tool, err, tc.err)
		}
	}
}
