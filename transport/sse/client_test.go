package sse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestDialNotSSE: a server that is not an HTTP+SSE one is told apart with
// ErrNotSSE, the status of a refusal with a *transport.StatusError.
func TestDialNotSSE(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable.NewHandler(srv, nil)) // GET without a session: 405 with a JSON body
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html></html>")
	})
	mux.HandleFunc("/message-first", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": nothing\n\n")
	})
	hs := serveHTTP(t, mux)
	for _, tc := range []struct {
		path   string
		status int // of the StatusError, 0 for none
	}{
		{"/missing", http.StatusNotFound},
		{"/mcp", http.StatusMethodNotAllowed},
		{"/html", 0},
		{"/message-first", 0},
		{"/empty", 0},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c, err := Dial(context.Background(), hs.URL+tc.path, &ClientOptions{HTTPClient: hs.Client()})
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, ErrNotSSE) {
				t.Fatalf("%v, want ErrNotSSE", err)
			}
			var se *transport.StatusError
			if got := errors.As(err, &se); got != (tc.status != 0) || got && se.Status != tc.status {
				t.Fatalf("%v: StatusError %v, want status %d", err, se, tc.status)
			}
		})
	}
}

// TestDialOtherOrigin: an endpoint on another origin than the stream's is
// refused, whatever way the server writes it.
func TestDialOtherOrigin(t *testing.T) {
	checkLeaks(t)
	var endpoint string
	hs := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: "+endpoint+"\n\n")
	}))
	for _, ep := range []string{"http://evil.example.com/messages?sessionId=1", "//evil.example.com/messages", "https://" + strings.TrimPrefix(hs.URL, "http://") + "/messages"} {
		endpoint = ep
		c, err := Dial(context.Background(), hs.URL+"/sse", &ClientOptions{HTTPClient: hs.Client()})
		if err == nil {
			c.Close()
			t.Fatalf("endpoint %s accepted", ep)
		}
		if errors.Is(err, ErrNotSSE) || !strings.Contains(err.Error(), "origin") {
			t.Errorf("endpoint %s: %v", ep, err)
		}
	}
}

// TestDialContext: ctx bounds Dial, the wait for the endpoint event
// included, not the connection.
func TestDialContext(t *testing.T) {
	checkLeaks(t)
	started := make(chan struct{})
	hs := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		close(started)
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if _, err := Dial(ctx, hs.URL, &ClientOptions{HTTPClient: hs.Client()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
}

// TestClientClose: Close ends the stream and the calls; a second Close is
// harmless, and a closed client fails calls.
func TestClientClose(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	tr := track(NewHandler(srv, nil))
	hs := serveHTTP(t, tr)
	c, err := Dial(context.Background(), hs.URL+"/sse", &ClientOptions{HTTPClient: hs.Client(), Header: http.Header{"X-Test": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	<-tr.ended
	msg, _ := jsonrpc.Decode([]byte(pingMsg))
	if _, err := c.Call(context.Background(), &transport.Call{Message: msg}, nil); err == nil {
		t.Fatal("a call on a closed client succeeded")
	}
	if c.CarriesHeaders() {
		t.Error("CarriesHeaders")
	}
}

// TestClientEvents: the client reads the event stream as the standard has
// it (data of several lines, comments, other events, CR line ends) and
// POSTs with the header it was given; a refused POST fails the call with
// the status.
func TestClientEvents(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var posted []string
	out := make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		rc := http.NewResponseController(w)
		io.WriteString(w, ": hello\r\nevent: endpoint\r\ndata: /post?s=1#frag\r\n\r\n")
		rc.Flush()
		for {
			select {
			case s := <-out:
				io.WriteString(w, s)
				rc.Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /post", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posted = append(posted, r.Header.Get("X-Test")+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		if strings.Contains(string(b), `"refuse"`) {
			http.Error(w, "no", http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		switch {
		case strings.Contains(string(b), `"id":1`):
			out <- "event: other\ndata: ignored\n\n: comment\nevent: message\ndata: {\"jsonrpc\": \"2.0\",\ndata:  \"id\": 1,\ndata: \"result\": {\"a\": \"x\"}}\n\n"
		case strings.Contains(string(b), `"id":2`):
			out <- "id: 7\rretry: 10\rdata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\r"
		}
	})
	hs := serveHTTP(t, mux)
	c, err := Dial(context.Background(), hs.URL+"/sse", &ClientOptions{HTTPClient: hs.Client(), Header: http.Header{"X-Test": {"yes"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Endpoint() != hs.URL+"/post?s=1" {
		t.Errorf("endpoint %s", c.Endpoint())
	}
	call := func(id, method string) (*jsonrpc.Message, error) {
		msg, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`))
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		return c.Call(ctx, &transport.Call{Message: msg}, nil)
	}
	resp, err := call("1", "one")
	if err != nil || string(resp.Result) != `{"a":"x"}` {
		t.Fatalf("%v %+v", err, resp)
	}
	if resp, err = call("2", "two"); err != nil || string(resp.Result) != `{}` {
		t.Fatalf("%v %+v", err, resp)
	}
	_, err = call("3", "refuse")
	var se *transport.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusConflict {
		t.Fatalf("refused POST: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posted) != 3 || posted[0] != `yes application/json {"jsonrpc":"2.0","id":1,"method":"one"}` {
		t.Errorf("posted %q", posted)
	}
}

func TestEventReader(t *testing.T) {
	in := "\xef\xbb\xbf: comment\n" +
		"data: one\n\n" +
		"event: endpoint\r\ndata: /x\r\n\r\n" +
		"data\ndata:  two spaces\ndata:\n\n" +
		"event: nodata\n\n" +
		"data:a\rdata:b\r\r" +
		"unknown: field\nid: 1\ndata: last\n\n" +
		"data: cut off"
	r := newEventReader(strings.NewReader(in), 100)
	var got []string
	for {
		ev, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.typ+"="+string(ev.data))
	}
	want := []string{"message=one", "endpoint=/x", "message=\n two spaces\n", "message=a\nb", "message=last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}

	for _, big := range []string{"data: " + strings.Repeat("x", 101) + "\n\n", "data: " + strings.Repeat("x", 60) + "\ndata: " + strings.Repeat("x", 60) + "\n\n"} {
		if _, err := newEventReader(strings.NewReader(big), 100).next(); !errors.Is(err, errEventTooLarge) {
			t.Errorf("an event over the limit: %v", err)
		}
	}
}
