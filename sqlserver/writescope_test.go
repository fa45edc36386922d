package sqlserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestWriteScope: with Options.WriteScope, execute is listed only to
// callers granted that scope (the scopes come from a test header here, as
// auth middleware would put them on the context); without authorization
// in force it is served as before.
func TestWriteScope(t *testing.T) {
	e := sqliteEnv(t)
	_, core := e.open(t, func(o *Options) { o.AllowWrites = true; o.WriteScope = "db:write" })
	h := streamable.NewHandler(core, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if sc, ok := r.Header["X-Test-Scopes"]; ok {
			ctx = server.WithScopes(ctx, strings.Fields(strings.Join(sc, " ")))
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	for _, tc := range []struct {
		scopes      *string
		wantExecute bool
	}{{nil, true}, {strp("db:read"), false}, {strp("db:read db:write"), true}} {
		hdr := http.Header{}
		if tc.scopes != nil {
			hdr.Set("X-Test-Scopes", *tc.scopes)
		}
		hc := &http.Client{Transport: headerTransport{hdr}}
		c := client.New(protocol.Implementation{Name: "test", Version: "1"}, nil)
		s, err := c.ConnectURL(ctx, srv.URL, &streamable.ClientOptions{HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.ListTools(ctx, nil)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, tool := range res.Tools {
			got = got || tool.Name == toolExecute
		}
		if got != tc.wantExecute {
			t.Errorf("scopes %v: execute listed %v, want %v", tc.scopes, got, tc.wantExecute)
		}
	}

	if _, err := Open(ctx, &Options{Path: e.opts.Path, DSN: e.opts.DSN, WriteScope: "bad scope"}); err == nil {
		t.Errorf("a WriteScope with a space was accepted")
	}
}

func strp(s string) *string { return &s }

type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}
