package sse

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/protocol"
)

const pingMsg = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

func TestEndpointEvent(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	a := openStream(t, hs, "/sse")
	b := openStream(t, hs, "/sse")
	ua, _ := url.Parse(a.endpoint)
	ub, _ := url.Parse(b.endpoint)
	ida, idb := ua.Query().Get("sessionId"), ub.Query().Get("sessionId")
	if ua.Path != "/sse" || len(ida) < 32 || ida == idb {
		t.Errorf("endpoints %s and %s", a.endpoint, b.endpoint)
	}

	// MessagePath names another path, where the handler is mounted too.
	mux := http.NewServeMux()
	h := NewHandler(srv, &Options{MessagePath: "/messages"})
	mux.Handle("/events", h)
	mux.Handle("/messages", h)
	hs2 := serveHTTP(t, mux)
	s := openStream(t, hs2, "/events")
	if u, _ := url.Parse(s.endpoint); u.Path != "/messages" || u.Query().Get("sessionId") == "" {
		t.Fatalf("endpoint %s", s.endpoint)
	}
	s.initialize()
	if st, body := s.post(pingMsg); st != http.StatusAccepted || body != "Accepted" {
		t.Fatalf("POST: %d %q", st, body)
	}
	if m := s.message(); m != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("answer %s", m)
	}
}

// TestPostAnsweredOnStream: a POST is answered 202 and its response comes
// on the stream, as one message event; an indented body is sent on as one
// line.
func TestPostAnsweredOnStream(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	s := openStream(t, hs, "/sse")
	s.initialize()
	body := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"method\": \"tools/call\",\n  \"params\": {\"name\": \"echo\", \"arguments\": {\"text\": \"a\\nb\"}}\n}"
	if st, b := s.post(body); st != http.StatusAccepted {
		t.Fatalf("POST: %d %s", st, b)
	}
	m := s.message()
	if idOf(t, m) != "7" || !strings.Contains(m, `"text":"echo: a\nb"`) {
		t.Fatalf("answer %s", m)
	}
}

// TestLargeMessage: a message larger than stdio's output buffer reaches
// the stream whole, as one event.
func TestLargeMessage(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	s := openStream(t, hs, "/sse")
	s.initialize()
	big := strings.Repeat("x", 300<<10)
	if st, b := s.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`); st != http.StatusAccepted {
		t.Fatalf("POST: %d %s", st, b)
	}
	if m := s.message(); idOf(t, m) != "9" || !strings.Contains(m, `"text":"echo: `+big+`"`) {
		t.Fatalf("answer of %d bytes: %.200s", len(m), m)
	}
	if st, _ := s.post(pingMsg); st != http.StatusAccepted {
		t.Fatal(st)
	}
	if m := s.message(); idOf(t, m) != "2" {
		t.Fatalf("answer %s", m)
	}
}

func TestPostRefusals(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, &Options{MaxBodyBytes: 1024}))
	s := openStream(t, hs, "/sse")
	s.initialize()
	u, _ := url.Parse(s.endpoint)

	for _, tc := range []struct {
		name, url, body, contentType string
		status, code                 int
	}{
		{"malformed", s.endpoint, `{"jsonrpc":"2.0","id":1,`, "application/json", http.StatusBadRequest, protocol.CodeParseError},
		{"oversize", s.endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 2000) + `"}}`, "application/json", http.StatusRequestEntityTooLarge, protocol.CodeInvalidRequest},
		{"content type", s.endpoint, pingMsg, "text/plain", http.StatusUnsupportedMediaType, protocol.CodeInvalidRequest},
		{"unknown session", hs.URL + "/sse?sessionId=00112233445566778899aabbccddeeff", pingMsg, "application/json", http.StatusNotFound, protocol.CodeInvalidRequest},
		{"no session", hs.URL + u.Path, pingMsg, "application/json", http.StatusMethodNotAllowed, protocol.CodeInvalidRequest},
		{"malformed batch", s.endpoint, `[` + pingMsg + `,`, "application/json", http.StatusBadRequest, protocol.CodeParseError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || errorCode(string(b)) != tc.code || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s %s, want %d with error %d", resp.StatusCode, resp.Header.Get("Content-Type"), b, tc.status, tc.code)
			}
			if tc.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
	// Nothing refused reached the stream, which goes on.
	if st, b := s.post(pingMsg); st != http.StatusAccepted {
		t.Fatalf("POST: %d %s", st, b)
	}
	if m := s.message(); idOf(t, m) != "2" {
		t.Fatalf("answer %s", m)
	}
}

func TestGetRefusals(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, &Options{AllowedOrigins: []string{"https://app.example.com"}}))
	for _, tc := range []struct {
		name   string
		method string
		header map[string]string
		status int
	}{
		{"accept json", http.MethodGet, map[string]string{"Accept": "application/json"}, http.StatusNotAcceptable},
		{"bad origin", http.MethodGet, map[string]string{"Accept": "text/event-stream", "Origin": "https://evil.example.com"}, http.StatusForbidden},
		{"bad origin on POST", http.MethodPost, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example.com"}, http.StatusForbidden},
		{"delete", http.MethodDelete, nil, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, hs.URL+"/sse?sessionId=x", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || errorCode(string(b)) != protocol.CodeInvalidRequest {
				t.Fatalf("%d %s, want %d", resp.StatusCode, b, tc.status)
			}
		})
	}
	// An allowed origin, and a loopback one, are accepted.
	openStream(t, hs, "/sse", "Origin", "https://app.example.com")
	openStream(t, hs, "/sse", "Origin", "http://localhost:3000")
}

// TestHostRefused: on a loopback listener, a Host that is not loopback is
// refused as Streamable HTTP refuses it (DNS rebinding).
func TestHostRefused(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/sse", nil)
	req.Host = "rebound.example.com"
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%s", resp.Status)
	}
}

// TestPrincipalBinding: only the principal that opened a stream may POST
// to it.
func TestPrincipalBinding(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, withPrincipal(NewHandler(srv, nil)))
	s := openStream(t, hs, "/sse", "X-Principal", "alice")
	s.initialize("X-Principal", "alice")
	for _, who := range []string{"mallory", ""} {
		if st, b := s.post(pingMsg, "X-Principal", who); st != http.StatusForbidden || errorCode(b) != protocol.CodeInvalidRequest {
			t.Errorf("POST as %q: %d %s", who, st, b)
		}
	}
	if st, b := s.post(pingMsg, "X-Principal", "alice"); st != http.StatusAccepted {
		t.Fatalf("POST as alice: %d %s", st, b)
	}
	if m := s.message(); idOf(t, m) != "2" {
		t.Fatalf("answer %s", m)
	}
	// A stream opened without a principal accepts none.
	anon := openStream(t, hs, "/sse")
	if st, _ := anon.post(pingMsg, "X-Principal", "alice"); st != http.StatusForbidden {
		t.Errorf("POST as alice to an anonymous stream: %d", st)
	}
}

func TestMaxStreams(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	x := NewHandler(srv, &Options{MaxStreams: 1})
	tr := track(x)
	hs := serveHTTP(t, tr)
	s := openStream(t, hs, "/sse")
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || errorCode(string(b)) == 0 {
		t.Fatalf("second stream: %s %q %s", resp.Status, resp.Header.Get("Retry-After"), b)
	}
	<-tr.ended // the refused GET
	s.close()
	select {
	case <-tr.ended:
	case <-time.After(wait):
		t.Fatal("the stream's handler did not return")
	}
	openStream(t, hs, "/sse")
}

// TestDisconnect: a client that leaves ends its stream, the legacy session
// and every goroutine serving them; its id is forgotten.
func TestDisconnect(t *testing.T) {
	checkLeaks(t)
	srv, p := testServer(t)
	x := NewHandler(srv, nil)
	tr := track(x)
	hs := serveHTTP(t, tr)
	s := openStream(t, hs, "/sse")
	s.initialize()
	// A request in flight is cancelled with the stream.
	if st, b := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`); st != http.StatusAccepted {
		t.Fatalf("POST: %d %s", st, b)
	}
	<-p.started
	s.close()
	select {
	case <-tr.ended:
	case <-time.After(wait):
		t.Fatal("the stream's handler did not return")
	}
	<-p.cancelled
	x.mu.Lock()
	n := len(x.streams)
	x.mu.Unlock()
	if n != 0 {
		t.Errorf("%d streams left", n)
	}
	if st, _ := post(t, hs, s.endpoint, pingMsg); st != http.StatusNotFound {
		t.Errorf("POST after the stream ended: %d", st)
	}
}

// TestCancelled: notifications/cancelled cancels the request it names,
// which is then not answered.
func TestCancelled(t *testing.T) {
	checkLeaks(t)
	srv, p := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	s := openStream(t, hs, "/sse")
	s.initialize()
	if st, b := s.post(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow"}}`); st != http.StatusAccepted {
		t.Fatalf("POST: %d %s", st, b)
	}
	<-p.started
	if st, b := s.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user"}}`); st != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", st, b)
	}
	select {
	case <-p.cancelled:
	case <-time.After(wait):
		t.Fatal("the request was not cancelled")
	}
	s.post(pingMsg)
	if m := s.message(); idOf(t, m) != "2" {
		t.Fatalf("after the cancellation: %s, want only the ping's answer", m)
	}
}

// TestStreamEndsWithSession: the legacy session's end (the server closing)
// ends the stream.
func TestStreamEndsWithSession(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	tr := track(NewHandler(srv, nil))
	hs := serveHTTP(t, tr)
	s := openStream(t, hs, "/sse")
	s.initialize()
	srv.Close()
	s.ended()
	<-tr.ended
}

// TestShutdown: http.Server.Shutdown ends the open streams rather than
// waiting for them.
func TestShutdown(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	s := openStream(t, hs, "/sse")
	s.initialize()
	idle := openStream(t, hs, "/sse") // no session
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := hs.Config.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	s.ended()
	idle.ended()
}

// TestBatches: a 2025-03-26 session's batch is answered on the stream with
// an array of its responses (that revision's clients may send batches and
// its servers must take them); another revision's gets an error.
func TestBatches(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	hs := serveHTTP(t, NewHandler(srv, nil))
	for _, tc := range []struct {
		version string
		want    []string // in the answer, in any order
	}{
		{protocol.Version2025_03_26, []string{`[{"jsonrpc":"2.0","id":`, `{"jsonrpc":"2.0","id":2,"result":{}}`, `{"jsonrpc":"2.0","id":3,"result":{}}`}},
		{protocol.Version2024_11_05, []string{`"code":-32600`}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s := openStream(t, hs, "/sse")
			defer s.close()
			if st, b := s.post(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + tc.version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); st != http.StatusAccepted {
				t.Fatalf("initialize: %d %s", st, b)
			}
			if m := s.message(); !strings.Contains(m, `"protocolVersion":"`+tc.version+`"`) {
				t.Fatalf("initialize answered %s", m)
			}
			if st, b := s.post("[\n" + pingMsg + `,{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`); st != http.StatusAccepted {
				t.Fatalf("batch: %d %s", st, b)
			}
			m := s.message()
			for _, w := range tc.want {
				if !strings.Contains(m, w) {
					t.Errorf("batch answered %s, want %s in it", m, w)
				}
			}
		})
	}
}
