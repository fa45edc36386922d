package resource

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestPrincipalIDsDoNotCollide: a subject and a client of the same name,
// and the same subject of two issuers, are different principals; the ID
// is unambiguous whatever the names contain.
func TestPrincipalIDsDoNotCollide(t *testing.T) {
	ps := []*Principal{
		{Issuer: "https://as.example", Subject: "alice"},
		{Issuer: "https://as.example", ClientID: "alice"},
		{Issuer: "https://as.example", Subject: "alice", ClientID: "app"},
		{Issuer: "https://as2.example", Subject: "alice"},
		{Subject: "alice"},
		{Issuer: "https://as.example#sub=a", Subject: "b"},
		{Issuer: "https://as.example", Subject: "a#sub=b"},
		{Issuer: "https://as.example#client_id=alice", Subject: "x"},
		{Issuer: "https://as.example", Subject: "alice#client_id=x"},
		{Issuer: "https://as.example", Subject: "alice x"},
		{Issuer: "https://as.example", Subject: "alice+x"},
	}
	seen := map[string]int{}
	for i, p := range ps {
		id := p.ID()
		if id == "" {
			t.Errorf("%+v: empty ID", p)
		}
		if j, ok := seen[id]; ok && !(i == 2 && j == 0) {
			t.Errorf("%+v and %+v are both %q", ps[j], p, id)
		}
		seen[id] = i
	}
	if id := ps[2].ID(); id != ps[0].ID() {
		t.Errorf("a subject's ID depends on its client: %q", id)
	}
	if got := ps[0].ID(); got != "https://as.example#sub=alice" {
		t.Errorf("ID %q", got)
	}
	if got := ps[1].ID(); got != "https://as.example#client_id=alice" {
		t.Errorf("ID %q", got)
	}
	if got := (&Principal{Issuer: "https://as.example"}).ID(); got != "" {
		t.Errorf("no sub nor client_id: ID %q", got)
	}
}

// byPrefix sends a token to the verifier of its prefix (before ":"): a
// resource that accepts the tokens of two authorization servers.
type byPrefix map[string]Verifier

func (m byPrefix) Verify(ctx context.Context, token string, r *http.Request) (*Principal, error) {
	prefix, _, _ := strings.Cut(token, ":")
	v, ok := m[prefix]
	if !ok {
		return nil, invalid("unknown issuer")
	}
	return v.Verify(ctx, token, r)
}

// TestPrincipalsKeepTheirSessions: behind Protect, with real
// introspection verifiers, a token with no sub and client_id "alice",
// and a token of another issuer with sub "alice", can use neither the
// legacy session nor the sealed state of the subject alice.
func TestPrincipalsKeepTheirSessions(t *testing.T) {
	answers := map[string]string{
		"as1:user-alice":   `{"active":true,"sub":"alice","client_id":"app","aud":"` + testResource + `"}`,
		"as1:client-alice": `{"active":true,"client_id":"alice","aud":"` + testResource + `"}`,
		"as1:nobody":       `{"active":true,"aud":"` + testResource + `"}`,
		"as2:user-alice":   `{"active":true,"sub":"alice","aud":"` + testResource + `"}`,
	}
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a, ok := answers[r.PostForm.Get("token")]
		if !ok {
			a = `{"active":false}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(a))
	}))
	defer as.Close()
	verifier := func(issuer string) *IntrospectionVerifier {
		return &IntrospectionVerifier{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s", Resource: testResource, Issuer: issuer}
	}

	core := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	defer core.Close()
	obj := json.RawMessage(`{"type":"object"}`)
	core.AddToolHandler(&protocol.Tool{Name: "seal", InputSchema: obj}, func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
		tok, err := req.Seal("test", []byte("alice's secret"), 0)
		if err != nil {
			return nil, err
		}
		return server.TextResult("sealed:" + tok), nil
	})
	core.AddToolHandler(&protocol.Tool{Name: "unseal", InputSchema: obj}, func(ctx context.Context, req *server.CallRequest) (*protocol.CallToolResult, error) {
		var in struct{ Token string }
		json.Unmarshal(req.Arguments, &in)
		b, err := req.Unseal("test", in.Token)
		if err != nil {
			return server.TextResult("refused"), nil
		}
		return server.TextResult("opened:" + string(b)), nil
	})
	h := Protect(streamable.NewHandler(core, nil), &Options{
		Resource:             testResource,
		AuthorizationServers: []string{"https://as1.example", "https://as2.example"},
		Verifier:             byPrefix{"as1": verifier("https://as1.example"), "as2": verifier("https://as2.example")},
	})

	send := func(token, sid, body string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			r.Header.Set(streamable.HeaderSessionID, sid)
			r.Header.Set(streamable.HeaderProtocolVersion, "2025-11-25")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	initialize := func(token string) string {
		t.Helper()
		w := send(token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		sid := w.Header().Get(streamable.HeaderSessionID)
		if w.Code != 200 || sid == "" {
			t.Fatalf("initialize with %s: %d %s", token, w.Code, w.Body)
		}
		return sid
	}
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	text := regexp.MustCompile(`"text":"([^"]*)"`)

	aliceSID := initialize("as1:user-alice")
	w := send("as1:user-alice", aliceSID, call("seal", `{}`))
	m := text.FindStringSubmatch(w.Body.String())
	if w.Code != 200 || m == nil || !strings.HasPrefix(m[1], "sealed:") {
		t.Fatalf("seal: %d %s", w.Code, w.Body)
	}
	sealed := strings.TrimPrefix(m[1], "sealed:")
	unseal := call("unseal", `{"token":"`+sealed+`"}`)
	if w := send("as1:user-alice", aliceSID, unseal); !strings.Contains(w.Body.String(), "opened:alice's secret") {
		t.Fatalf("alice's own state: %d %s", w.Code, w.Body)
	}

	for _, other := range []string{"as1:client-alice", "as2:user-alice"} {
		// Not on alice's session...
		w := send(other, aliceSID, unseal)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "session belongs to another principal") {
			t.Errorf("%s on alice's session: %d %s", other, w.Code, w.Body)
		}
		// ...nor with alice's sealed state on a session of its own.
		sid := initialize(other)
		if w := send(other, sid, unseal); w.Code != 200 || !strings.Contains(w.Body.String(), `"text":"refused"`) {
			t.Errorf("%s with alice's sealed state: %d %s", other, w.Code, w.Body)
		}
	}

	// A token that names nobody is refused.
	w = send("as1:nobody", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a token without sub and client_id: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
