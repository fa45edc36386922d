package streamable

import (
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept string // "|" separates header lines; "-" means no header
		want   acceptance
	}{
		{"-", acceptance{json: true, sse: true}},
		{"application/json", acceptance{json: true}},
		{"text/event-stream", acceptance{sse: true, preferSSE: true}},
		{"application/json, text/event-stream", acceptance{json: true, sse: true}},
		{"text/event-stream, application/json", acceptance{json: true, sse: true, preferSSE: true}},
		{"text/event-stream|application/json", acceptance{json: true, sse: true, preferSSE: true}},
		{"*/*", acceptance{json: true, sse: true}},
		{"text/*", acceptance{sse: true, preferSSE: true}},
		{"application/*", acceptance{json: true}},
		{"application/json;q=0, text/event-stream", acceptance{sse: true, preferSSE: true}},
		{"application/json;q=0.2, text/event-stream;q=0.8", acceptance{json: true, sse: true, preferSSE: true}},
		{"application/json;q=0.8, text/event-stream;q=0.2", acceptance{json: true, sse: true}},
		{"APPLICATION/JSON", acceptance{json: true}},
		{"application/json; charset=utf-8", acceptance{json: true}},
		{"image/png", acceptance{}},
		{"", acceptance{}},
		{" , ,", acceptance{}},
		{"text/event-stream;q=0", acceptance{}},
		{"*/*;q=0", acceptance{}},
		{"*/*, text/*;q=0", acceptance{json: true}},
		{"text/*;q=0, */*", acceptance{json: true}},
		{"*/*, application/json;q=0", acceptance{sse: true, preferSSE: true}},
		{"*/*;q=0.5, text/*;q=0.9", acceptance{json: true, sse: true, preferSSE: true}},
		{"text/*;q=0.9, text/event-stream;q=0.1, application/json;q=0.5", acceptance{json: true, sse: true}},
		{"application/json;q=0.1, application/json;q=0.9, text/event-stream;q=0.5", acceptance{json: true, sse: true}},
		{"application/json;q=bogus", acceptance{json: true}},
		{"application/json;;, text/event-stream", acceptance{sse: true, preferSSE: true}},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			var values []string
			if tc.accept != "-" {
				values = strings.Split(tc.accept, "|")
			}
			if got := negotiate(values); got != tc.want {
				t.Errorf("negotiate(%q) = %+v, want %+v", values, got, tc.want)
			}
		})
	}
}

func TestOriginPolicy(t *testing.T) {
	for _, tc := range []struct {
		list   []string
		origin string
		want   bool
	}{
		{nil, "http://localhost", true},
		{nil, "http://localhost:3000", true},
		{nil, "https://LOCALHOST:3000/", true},
		{nil, "http://app.localhost", true},
		{nil, "http://127.0.0.1:8080", true},
		{nil, "http://127.1.2.3", true},
		{nil, "http://[::1]:8080", true},
		{nil, "http://evil.example.com", false},
		{nil, "http://localhost.evil.example.com", false},
		{nil, "http://127.0.0.1.nip.io", false},
		{nil, "ws://localhost", false},
		{nil, "null", false},
		{nil, "http://", false},
		{nil, "%zz", false},
		{[]string{"https://app.example.com"}, "https://app.example.com", true},
		{[]string{"https://app.example.com"}, "https://app.example.com/", true},
		{[]string{"https://app.example.com"}, "http://app.example.com", false},
		{[]string{"https://App.Example.com/"}, "https://app.example.COM", true},
		{[]string{"*"}, "https://anything.example", true},
	} {
		if got := newOriginPolicy(tc.list).allowed(tc.origin); got != tc.want {
			t.Errorf("%v allowed(%q) = %v, want %v", tc.list, tc.origin, got, tc.want)
		}
	}
}

func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/Json":                true,
		"":                                false,
		"text/plain":                      false,
		"application/json-seq":            false,
		"application/jsonx":               false,
		"application/json;":               true,
		"application/json; =":             false,
		"application/*":                   false,
	} {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("isJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}
