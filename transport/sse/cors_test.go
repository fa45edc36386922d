package sse

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCORS: the listed origins get CORS on both the stream and the
// message endpoint; without a list OPTIONS is refused as before.
func TestCORS(t *testing.T) {
	checkLeaks(t)
	srv, _ := testServer(t)
	const origin = "https://app.example.com"
	hs := serveHTTP(t, NewHandler(srv, &Options{AllowedOrigins: []string{origin}}))
	off := serveHTTP(t, NewHandler(srv, nil))

	options := func(hs *httptest.Server, origin, method, headers string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, hs.URL+"/sse", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	noCORS := func(what string, h http.Header) {
		t.Helper()
		for k := range h {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: %s: %q", what, k, h.Get(k))
			}
		}
	}

	resp := options(hs, origin, "POST", "Content-Type")
	if resp.StatusCode != http.StatusNoContent ||
		resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		resp.Header.Get("Access-Control-Allow-Methods") != "GET, POST, DELETE" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "content-type" ||
		resp.Header.Get("Access-Control-Max-Age") != "7200" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp = options(hs, "https://evil.example.com", "GET", "")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("preflight of another origin: %d", resp.StatusCode)
	}
	noCORS("preflight of another origin", resp.Header)
	resp = options(off, "http://localhost:3000", "POST", "content-type")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
		t.Errorf("OPTIONS without a list: %d %v", resp.StatusCode, resp.Header)
	}
	noCORS("OPTIONS without a list", resp.Header)

	s := openStream(t, hs, "/sse", "Origin", origin)
	if got := s.resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("GET: Access-Control-Allow-Origin %q", got)
	}
	if got := s.resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "WWW-Authenticate") {
		t.Errorf("GET: Access-Control-Expose-Headers %q", got)
	}
	req, _ := http.NewRequest(http.MethodPost, s.endpoint, strings.NewReader(pingMsg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	pr, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pr.Body.Close()
	if pr.StatusCode != http.StatusAccepted || pr.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("POST: %d %v", pr.StatusCode, pr.Header)
	}

	l := openStream(t, hs, "/sse", "Origin", "http://localhost:3000")
	noCORS("GET from a loopback origin", l.resp.Header)
	o := openStream(t, off, "/sse", "Origin", "http://localhost:3000")
	noCORS("GET without a list", o.resp.Header)
}
