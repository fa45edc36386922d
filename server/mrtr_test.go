package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
)

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

func mrtrServer(t *testing.T) *Server {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "greet"}, func(ctx context.Context, req *CallRequest, in struct {
		Lang string `json:"lang,omitempty"`
	}) (string, error) {
		res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return "Hello, " + res.Content["name"].(string), nil
	})
	AddTool(s, &protocol.Tool{Name: "two"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		a, err := req.Elicit("a", &protocol.ElicitParams{Message: "A?"})
		if err != nil {
			return "", err
		}
		b, err := req.ListRoots("b")
		if err != nil {
			return "", err
		}
		return a.Action + ":" + b.Roots[0].URI, nil
	})
	return s
}

func callTool(t *testing.T, s *Server, caps string, fields map[string]any) map[string]any {
	t.Helper()
	return result(t, do(t, s, protocol.MethodToolsCall, params(t, fields, caps)))
}

func TestMRTRRoundTrip(t *testing.T) {
	s := mrtrServer(t)
	r1 := callTool(t, s, allCaps, map[string]any{"name": "greet"})
	if r1["resultType"] != "input_required" {
		t.Fatalf("first round = %v", r1)
	}
	ir := r1["inputRequests"].(map[string]any)["name"].(map[string]any)
	if ir["method"] != "elicitation/create" {
		t.Fatalf("input request = %v", ir)
	}
	state, _ := r1["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	if _, ok := r1["ttlMs"]; ok {
		t.Error("input_required result carries cache hints")
	}
	r2 := callTool(t, s, allCaps, map[string]any{"name": "greet", "requestState": state,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})
	if r2["resultType"] != "complete" || !strings.Contains(string(mustJSON(r2["content"])), "Hello, Ada") {
		t.Fatalf("second round = %v", r2)
	}
}

func TestMRTRWithoutStateAndExtraInput(t *testing.T) {
	s := mrtrServer(t)
	ada := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
	// An answer on a first request answers nothing the server asked: it
	// is ignored and the handler asks.
	r := callTool(t, s, allCaps, map[string]any{"name": "greet",
		"inputResponses": map[string]any{"name": ada, "other": map[string]any{"whatever": true}}})
	if r["resultType"] != "input_required" {
		t.Fatalf("answer without requestState = %v", r)
	}
	state := r["requestState"]
	// Unexpected keys beside the expected answer are ignored.
	r = callTool(t, s, allCaps, map[string]any{"name": "greet", "requestState": state,
		"inputResponses": map[string]any{"name": ada, "other": 12345}})
	if r["resultType"] != "complete" {
		t.Fatalf("answer with an extra key = %v", r)
	}
	// A missing answer is asked again, not an error.
	r = callTool(t, s, allCaps, map[string]any{"name": "greet", "requestState": state,
		"inputResponses": map[string]any{"wrong": map[string]any{"action": "accept"}}})
	if r["resultType"] != "input_required" {
		t.Fatalf("missing answer = %v", r)
	}
}

// TestMRTROnlyIssuedInputReachesTheHandler: a handler sees an answer only
// under a key the requestState it came with says was asked.
func TestMRTROnlyIssuedInputReachesTheHandler(t *testing.T) {
	s := mrtrServer(t)
	r1 := callTool(t, s, allCaps, map[string]any{"name": "two"})
	// Round 1 asked a; an answer to b (asked only in round 2) is not
	// taken, nor is a forged early answer carried into later rounds.
	r2 := callTool(t, s, allCaps, map[string]any{"name": "two", "requestState": r1["requestState"],
		"inputResponses": map[string]any{
			"a": map[string]any{"action": "accept"},
			"b": map[string]any{"roots": []any{map[string]any{"uri": "file:///forged"}}},
		}})
	if _, ok := r2["inputRequests"].(map[string]any)["b"]; !ok {
		t.Fatalf("round 2 took an answer it had not asked for: %v", r2)
	}
	// Round 2's state expects b only: a new answer to a does not replace
	// the one carried from round 1.
	r3 := callTool(t, s, allCaps, map[string]any{"name": "two", "requestState": r2["requestState"],
		"inputResponses": map[string]any{
			"a": map[string]any{"action": "decline"},
			"b": map[string]any{"roots": []any{map[string]any{"uri": "file:///x"}}},
		}})
	if got := string(mustJSON(r3["content"])); !strings.Contains(got, "accept:file:///x") {
		t.Fatalf("round 3 = %s", got)
	}
}

func TestMRTRSingleUse(t *testing.T) {
	s := newTestServer(nil)
	runs := 0
	AddTool(s, &protocol.Tool{Name: "spend"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		req.SingleUse()
		ans, err := req.Elicit("ok", &protocol.ElicitParams{Message: "Spend?"})
		if err != nil {
			return "", err
		}
		runs++
		return string(ans.Action), nil
	})
	r1 := callTool(t, s, allCaps, map[string]any{"name": "spend"})
	retry := params(t, map[string]any{"name": "spend", "requestState": r1["requestState"],
		"inputResponses": map[string]any{"ok": map[string]any{"action": "accept"}}}, allCaps)
	result(t, do(t, s, protocol.MethodToolsCall, retry))
	e := wantError(t, do(t, s, protocol.MethodToolsCall, retry), protocol.CodeInvalidParams)
	if !strings.Contains(e.Message, "already used") {
		t.Errorf("replay: %q", e.Message)
	}
	if runs != 1 {
		t.Errorf("the handler ran %d times past its confirmation, want 1", runs)
	}
	// A state that is not single-use may be presented again.
	m := mrtrServer(t)
	st := callTool(t, m, allCaps, map[string]any{"name": "greet"})["requestState"]
	again := params(t, map[string]any{"name": "greet", "requestState": st,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, allCaps)
	result(t, do(t, m, protocol.MethodToolsCall, again))
	result(t, do(t, m, protocol.MethodToolsCall, again))
}

func TestMemoryOnceStore(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &MemoryOnceStore{Max: 2, now: func() time.Time { return now }}
	ctx := context.Background()
	use := func(id string, ttl time.Duration) (bool, error) { return m.Use(ctx, id, now.Add(ttl)) }
	if ok, err := use("a", time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := use("a", time.Minute); ok {
		t.Fatal("a used twice")
	}
	use("b", time.Second)
	if _, err := use("c", time.Minute); err != ErrOnceStoreFull {
		t.Fatalf("full store: %v", err)
	}
	now = now.Add(2 * time.Second) // b expires
	if ok, err := use("c", time.Minute); !ok || err != nil {
		t.Fatalf("after expiry: %v %v", ok, err)
	}
	if ok, _ := use("a", time.Minute); ok {
		t.Fatal("a forgotten before it expired")
	}
	if m.Len() != 2 {
		t.Errorf("held %d ids, want 2", m.Len())
	}
}

func TestSealedTokens(t *testing.T) {
	s := newTestServer(nil)
	now := time.Now()
	s.sealer.now = func() time.Time { return now }
	req := func(principal string) *Request { return &Request{server: s, Principal: principal} }
	tok, err := req("alice").Seal("cursor", []byte("offset=10"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := req("alice").Unseal("cursor", tok); err != nil || string(got) != "offset=10" {
		t.Fatalf("Unseal = %q, %v", got, err)
	}
	for name, try := range map[string]func() ([]byte, error){
		"other principal": func() ([]byte, error) { return req("bob").Unseal("cursor", tok) },
		"other purpose":   func() ([]byte, error) { return req("alice").Unseal("page", tok) },
		"altered":         func() ([]byte, error) { return req("alice").Unseal("cursor", flip(tok)) },
		"not a token":     func() ([]byte, error) { return req("alice").Unseal("cursor", "x") },
		"too long":        func() ([]byte, error) { return req("alice").Unseal("cursor", tok+strings.Repeat("A", maxTokenLen)) },
	} {
		if _, err := try(); err != ErrTokenInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A requestState is not a token, nor the other way round.
	st := callTool(t, mrtrServer(t), allCaps, map[string]any{"name": "greet"})["requestState"].(string)
	if _, err := req("").Unseal("cursor", st); err != ErrTokenInvalid {
		t.Errorf("requestState opened as a token: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := req("alice").Unseal("cursor", tok); err != ErrTokenExpired {
		t.Errorf("expired: %v", err)
	}
}

func TestMRTRMultiRoundCarriesAnswers(t *testing.T) {
	s := mrtrServer(t)
	r1 := callTool(t, s, allCaps, map[string]any{"name": "two"})
	if _, ok := r1["inputRequests"].(map[string]any)["a"]; !ok {
		t.Fatalf("round 1 = %v", r1)
	}
	r2 := callTool(t, s, allCaps, map[string]any{"name": "two", "requestState": r1["requestState"],
		"inputResponses": map[string]any{"a": map[string]any{"action": "accept"}}})
	if _, ok := r2["inputRequests"].(map[string]any)["b"]; !ok || r2["requestState"] == r1["requestState"] {
		t.Fatalf("round 2 = %v", r2)
	}
	r3 := callTool(t, s, allCaps, map[string]any{"name": "two", "requestState": r2["requestState"],
		"inputResponses": map[string]any{"b": map[string]any{"roots": []any{map[string]any{"uri": "file:///x"}}}}})
	if r3["resultType"] != "complete" || !strings.Contains(string(mustJSON(r3["content"])), "accept:file:///x") {
		t.Fatalf("round 3 = %v", r3)
	}
}

func TestMRTRStateRejected(t *testing.T) {
	s := mrtrServer(t)
	r1 := callTool(t, s, allCaps, map[string]any{"name": "greet", "arguments": map[string]any{"lang": "en"}})
	state := r1["requestState"].(string)
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	tests := []struct {
		name   string
		fields map[string]any
	}{
		{"tampered", map[string]any{"name": "greet", "arguments": map[string]any{"lang": "en"}, "requestState": state + "-TAMPERED", "inputResponses": answer}},
		{"flipped byte", map[string]any{"name": "greet", "arguments": map[string]any{"lang": "en"}, "requestState": flip(state), "inputResponses": answer}},
		{"other arguments", map[string]any{"name": "greet", "arguments": map[string]any{"lang": "fr"}, "requestState": state, "inputResponses": answer}},
		{"other tool", map[string]any{"name": "two", "requestState": state, "inputResponses": answer}},
		{"garbage", map[string]any{"name": "greet", "arguments": map[string]any{"lang": "en"}, "requestState": "hello", "inputResponses": answer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := wantError(t, do(t, s, protocol.MethodToolsCall, params(t, tt.fields, allCaps)), protocol.CodeInvalidParams)
			if !strings.Contains(e.Message, "requestState") {
				t.Errorf("message = %q", e.Message)
			}
		})
	}
	// Re-serialised arguments (different key order, spacing) still match.
	ok := params(t, map[string]any{"name": "greet", "arguments": json.RawMessage(`{ "lang" : "en" }`), "requestState": state, "inputResponses": answer}, allCaps)
	result(t, do(t, s, protocol.MethodToolsCall, ok))
}

func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestMRTRStateExpiryAndPrincipal(t *testing.T) {
	s := mrtrServer(t)
	now := time.Now()
	s.sealer.now = func() time.Time { return now }
	ctx := WithPrincipal(context.Background(), "alice")
	r := doWith(t, ctx, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "greet"}, allCaps), &collector{})
	state := result(t, r)["requestState"].(string)
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	retry := params(t, map[string]any{"name": "greet", "requestState": state, "inputResponses": answer}, allCaps)

	bob := WithPrincipal(context.Background(), "bob")
	wantError(t, doWith(t, bob, s, protocol.MethodToolsCall, retry, &collector{}), protocol.CodeInvalidParams)
	result(t, doWith(t, ctx, s, protocol.MethodToolsCall, retry, &collector{}))

	now = now.Add(11 * time.Minute)
	e := wantError(t, doWith(t, ctx, s, protocol.MethodToolsCall, retry, &collector{}), protocol.CodeInvalidParams)
	if !strings.Contains(e.Message, "expired") {
		t.Errorf("message = %q", e.Message)
	}
}

func TestMRTRSharedKeyAcrossReplicas(t *testing.T) {
	key := make([]byte, 32)
	a, b := mrtrServer(t), mrtrServer(t)
	for _, s := range []*Server{a, b} {
		sl, err := newSealer(key, nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s.sealer = sl
	}
	state := callTool(t, a, allCaps, map[string]any{"name": "two"})["requestState"]
	r := callTool(t, b, allCaps, map[string]any{"name": "two", "requestState": state,
		"inputResponses": map[string]any{"a": map[string]any{"action": "decline"}}})
	if _, ok := r["inputRequests"].(map[string]any)["b"]; !ok {
		t.Fatalf("replica b did not accept replica a's state: %v", r)
	}
}

// TestMRTRKeyRotation: a replica rotated to a new key, with the old one
// among PreviousStateKeys, accepts state sealed under the old key before
// the rotation and seals under the new one; without the old key, the
// state is refused.
func TestMRTRKeyRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	a, b, c := mrtrServer(t), mrtrServer(t), mrtrServer(t)
	for _, x := range []struct {
		s        *Server
		key      []byte
		previous [][]byte
	}{{a, oldKey, nil}, {b, newKey, [][]byte{oldKey}}, {c, newKey, nil}} {
		sl, err := newSealer(x.key, x.previous, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		x.s.sealer = sl
	}
	state := callTool(t, a, allCaps, map[string]any{"name": "two"})["requestState"]
	retry := map[string]any{"name": "two", "requestState": state,
		"inputResponses": map[string]any{"a": map[string]any{"action": "decline"}}}
	r := callTool(t, b, allCaps, retry)
	if _, ok := r["inputRequests"].(map[string]any)["b"]; !ok {
		t.Fatalf("the rotated replica refused state sealed before the rotation: %v", r)
	}
	// b seals under the new key: c (new key only) opens it, a (old only) does not.
	next := map[string]any{"name": "two", "requestState": r["requestState"],
		"inputResponses": map[string]any{"b": map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}}}}
	if got := callTool(t, c, allCaps, next); got["resultType"] == "input_required" {
		t.Fatalf("state sealed after the rotation: %v", got)
	}
	wantError(t, do(t, a, protocol.MethodToolsCall, params(t, next, allCaps)), protocol.CodeInvalidParams)
	wantError(t, do(t, c, protocol.MethodToolsCall, params(t, retry, allCaps)), protocol.CodeInvalidParams)
	if _, err := newSealer(newKey, [][]byte{oldKey, oldKey, oldKey, oldKey, oldKey}, time.Minute); err == nil {
		t.Error("five previous keys accepted")
	}
}

func TestMRTRCapabilities(t *testing.T) {
	s := mrtrServer(t)
	e := wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "greet"}, `{"sampling":{}}`)), protocol.CodeMissingRequiredClientCapability)
	if string(e.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Errorf("data = %s", e.Data)
	}
	if got := status(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "greet"}, `{}`)); got != 400 {
		t.Errorf("status = %d", got)
	}
	// URL-mode elicitation needs elicitation.url.
	AddTool(s, &protocol.Tool{Name: "url"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		_, err := req.Elicit("u", &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/login"})
		return "", err
	})
	wantError(t, do(t, s, protocol.MethodToolsCall, params(t, map[string]any{"name": "url"}, `{"elicitation":{"form":{}}}`)), protocol.CodeMissingRequiredClientCapability)
	if r := callTool(t, s, `{"elicitation":{"url":{}}}`, map[string]any{"name": "url"}); r["resultType"] != "input_required" {
		t.Fatalf("url elicitation = %v", r)
	}
}

func TestNoInputRequiredOutsideMRTRMethods(t *testing.T) {
	s := mrtrServer(t)
	s.AddPrompt(&protocol.Prompt{Name: "p"}, func(ctx context.Context, req *PromptRequest) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{}, nil
	})
	s.AddCompletion(protocol.RefPrompt, "p", func(ctx context.Context, req *CompleteRequest) (*protocol.Completion, error) {
		_, err := req.Elicit("x", &protocol.ElicitParams{Message: "?"})
		return nil, err
	})
	p := params(t, map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": ""}}, allCaps)
	wantError(t, do(t, s, protocol.MethodComplete, p), protocol.CodeInternalError)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestMRTRAcceptUnasked: a handler that allows it takes an answer sent
// without being asked; others ask.
func TestMRTRAcceptUnasked(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "open"}, func(ctx context.Context, req *CallRequest, in struct{}) (string, error) {
		req.AcceptUnasked()
		res, err := req.Elicit("name", &protocol.ElicitParams{Message: "Name?"})
		if err != nil {
			return "", err
		}
		if _, err := req.ListRoots("roots"); err != nil {
			return "", err
		}
		return res.Content["name"].(string), nil
	})
	ada := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "extra": 1}
	r := callTool(t, s, allCaps, map[string]any{"name": "open", "inputResponses": ada})
	if _, asked := r["inputRequests"].(map[string]any)["name"]; asked {
		t.Fatalf("the unasked answer was not taken: %v", r)
	}
	// It is carried into the next round.
	r = callTool(t, s, allCaps, map[string]any{"name": "open", "requestState": r["requestState"],
		"inputResponses": map[string]any{"roots": map[string]any{"roots": []any{}}}})
	if r["resultType"] != "complete" || !strings.Contains(string(mustJSON(r["content"])), "Ada") {
		t.Fatalf("round 2 = %v", r)
	}
	// Still validated.
	p := params(t, map[string]any{"name": "open", "inputResponses": map[string]any{"name": 12345}}, allCaps)
	wantError(t, do(t, s, protocol.MethodToolsCall, p), protocol.CodeInvalidParams)
}

// TestMRTRStateDigestKeepsNumbers: arguments that differ only beyond a
// float64's precision are different requests; a requestState for one is
// refused on the other.
func TestMRTRStateDigestKeepsNumbers(t *testing.T) {
	s := newTestServer(nil)
	AddTool(s, &protocol.Tool{Name: "pay"}, func(ctx context.Context, req *CallRequest, in struct {
		Amount json.Number `json:"amount"`
	}) (string, error) {
		if _, err := req.Elicit("ok", &protocol.ElicitParams{Message: "Pay " + in.Amount.String() + "?"}); err != nil {
			return "", err
		}
		return "paid " + in.Amount.String(), nil
	})
	st := callTool(t, s, allCaps, map[string]any{"name": "pay", "arguments": json.RawMessage(`{"amount":9007199254740992}`)})["requestState"]
	p := params(t, map[string]any{"name": "pay", "arguments": json.RawMessage(`{"amount":9007199254740993}`), "requestState": st,
		"inputResponses": map[string]any{"ok": map[string]any{"action": "accept"}}}, allCaps)
	wantError(t, do(t, s, protocol.MethodToolsCall, p), protocol.CodeInvalidParams)
}

// TestCanonicalDigest: the requestState digest reads the arguments as all
// peer JSON is read. Re-serialised arguments (member order, white space,
// escapes) keep it; different numbers' text, or a repeated member (which
// readers resolve differently), do not match the arguments without it.
func TestCanonicalDigest(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":[true,null,"x"]}`, ` { "b" : [ true , null , "\u0078" ] , "a" : 1 } `},
		{`{"z":{"y":1,"x":2},"é":"<>&"}`, `{"\u00e9":"\u003c>&","z":{"x":2,"y":1}}`},
	}
	for _, p := range same {
		if a, b := canonical([]byte(p[0])), canonical([]byte(p[1])); string(a) != string(b) {
			t.Errorf("%s and %s: %s != %s", p[0], p[1], a, b)
		}
	}
	differ := [][]string{
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`},
		{`{"n":1.0}`, `{"n":1}`},
		{`{"a":1}`, `{"a":2,"a":1}`},
		{`{"a":2}`, `{"a":2,"a":1}`},
		{`{"a":"x"}`, "{\"a\":\"x\xff\"}"},
	}
	for _, p := range differ {
		if a, b := canonical([]byte(p[0])), canonical([]byte(p[1])); string(a) == string(b) {
			t.Errorf("%s and %s: both %s", p[0], p[1], a)
		}
	}
	in := []byte(`{"b":1,"a":2}`)
	canonical(in)
	if string(in) != `{"b":1,"a":2}` {
		t.Errorf("canonical changed its input: %s", in)
	}
}
