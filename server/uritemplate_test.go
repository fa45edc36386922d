package server

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/protocol"
)

func TestURITemplateRefusesMalformed(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{"x://{var:0}", "prefix length"},
		{"x://{var:10000}", "prefix length"},
		{"x://{var:01}", "prefix length"},
		{"x://{var:}", "prefix length"},
		{"x://{var:x}", "prefix length"},
		{"x://{var:3*}", "combines a prefix and an explode"},
		{"x://{x..y}", "invalid variable name"},
		{"x://{x.}", "invalid variable name"},
		{"x://{.x.}", "invalid variable name"},
		{"x://{%2x}", "invalid variable name"},
		{"x://{%}", "invalid variable name"},
		{"x://{a b}", "invalid variable name"},
		{"x://{a-b}", "invalid variable name"},
		{"x://{~a}", "invalid variable name"},
		{"x://{a,}", "invalid variable name"},
		{"x://{+}", "invalid variable name"},
		{"x://{a*b}", "invalid modifier"},
		{"x://{a**}", "invalid modifier"},
		{"x://{}", "empty expression"},
		{"x://{=a}", "reserved"},
		{"x://{!a}", "reserved"},
		{"x://{|a}", "reserved"},
		{"x://{,a}", "reserved"},
		{"x://{@a}", "reserved"},
		{"x://a}", "'}' without '{'"},
		{"x://}{a}", "'}' without '{'"},
		{"x://{a", "unclosed expression"},
		{"x://{a{b}}", "unclosed expression"},
		{"x://a b/{c}", "not allowed"},
		{"x://a<b/{c}", "not allowed"},
		{"x://a\x01/{c}", "not allowed"},
		{"x://a%2/{c}", "malformed percent-encoding"},
		{"x://a%zz/{c}", "malformed percent-encoding"},
		{"x://\xff/{c}", "UTF-8"},
		{"", "empty URI template"},
	}
	for _, tc := range cases {
		_, err := parseURITemplate(tc.tmpl)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseURITemplate(%q) = %v, want an error containing %q", tc.tmpl, err, tc.want)
		}
	}
	for _, ok := range []string{
		"x://{var:1}", "x://{var:9999}", "x://{x.y}", "x://{%41b}", "x://{_1,b2}", "'{var}'",
		"x://{+a}{#b}{.c}{/d*}{;e:5}{?f,g*}{&h}", "file:///café/{name}", "x%20y/{v}",
	} {
		if _, err := parseURITemplate(ok); err != nil {
			t.Errorf("parseURITemplate(%q) = %v, want it accepted", ok, err)
		}
	}
}

// AddResourceTemplate, which registers a template, refuses malformed ones.
func TestAddResourceTemplateRefusesMalformed(t *testing.T) {
	s := newTestServer(nil)
	h := func(ctx context.Context, req *ReadRequest) (*protocol.ReadResourceResult, error) { return nil, nil }
	for _, tmpl := range []string{"x://{var:0}", "x://{a", "x://a}", "x://{}", "x://{var:3*}"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tmpl) {
					t.Errorf("AddResourceTemplate(%q): panic = %v, want one naming the template", tmpl, r)
				}
			}()
			s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: tmpl, Name: "t"}, h)
		}()
	}
}

type matchCase struct {
	tmpl, uri string
	vars      map[string]string // nil: no match
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		ut, err := parseURITemplate(tc.tmpl)
		if err != nil {
			t.Errorf("parseURITemplate(%q): %v", tc.tmpl, err)
			continue
		}
		vars, ok := ut.match(tc.uri)
		switch {
		case ok != (tc.vars != nil):
			t.Errorf("%s ~ %s: match = %v (%v), want %v", tc.tmpl, tc.uri, ok, vars, tc.vars != nil)
		case ok && !maps.Equal(vars, tc.vars):
			t.Errorf("%s ~ %s: vars = %q, want %q", tc.tmpl, tc.uri, vars, tc.vars)
		}
	}
}

func TestURITemplatePercentDecoding(t *testing.T) {
	runMatchCases(t, []matchCase{
		// Simple expressions decode everything.
		{"x://{name}", "x://a%2Fb%20c%3F", map[string]string{"name": "a/b c?"}},
		{"x://{name}", "x://50%25", map[string]string{"name": "50%"}},
		{"x://{name}", "x://caf%C3%A9", map[string]string{"name": "café"}},
		{"x://{name}", "x://café", map[string]string{"name": "café"}},
		{"x://{name}", "x://100%zz", map[string]string{"name": "100%zz"}},
		{"x://{name}", "x://a/b", nil},
		// Reserved and fragment expressions keep encoded reserved characters.
		{"x://{+path}", "x://a%2Fb/c%20d", map[string]string{"path": "a%2Fb/c d"}},
		{"x://{+path}", "x://q%3Fx%3D1%26y%23z", map[string]string{"path": "q%3Fx%3D1%26y%23z"}},
		{"x://{+path}", "x://50%25", map[string]string{"path": "50%"}},
		{"x://{+path}", "x://%7e%41", map[string]string{"path": "~A"}},
		{"x://a{#frag}", "x://a#p%3Fq%20r/s", map[string]string{"frag": "p%3Fq r/s"}},
		{"x://a{#frag}", "x://a", map[string]string{}},
		{"x://a{#frag}", "x://a#", map[string]string{"frag": ""}},
		// Query and parameter values decode like simple ones.
		{"x://s{?q}", "x://s?q=a%2Fb%26c", map[string]string{"q": "a/b&c"}},
		{"x://s{;p}", "x://s;p=a%3Bb", map[string]string{"p": "a;b"}},
	})
}

func TestURITemplateLiterals(t *testing.T) {
	runMatchCases(t, []matchCase{
		// A non-ASCII literal matches its percent-encoded UTF-8 (either hex
		// case) and the character itself.
		{"file:///café/{name}", "file:///caf%C3%A9/readme", map[string]string{"name": "readme"}},
		{"file:///café/{name}", "file:///caf%c3%a9/readme", map[string]string{"name": "readme"}},
		{"file:///café/{name}", "file:///café/readme", map[string]string{"name": "readme"}},
		{"file:///café/{name}", "file:///cafe/readme", nil},
		{"file:///café/{name}", "file:///caf%C3/readme", nil},
		{"file:///日本/{name}", "file:///%E6%97%A5%E6%9C%AC/x", map[string]string{"name": "x"}},
		// Percent-encoded literals match either hex case, and the character
		// itself when it is unreserved.
		{"x%20y/{v}", "x%20y/1", map[string]string{"v": "1"}},
		{"x%20y/{v}", "x y/1", nil},
		{"x://%7Euser/{v}", "x://%7euser/1", map[string]string{"v": "1"}},
		{"x://%7Euser/{v}", "x://~user/1", map[string]string{"v": "1"}},
		{"x://%2Fa/{v}", "x:///a/1", nil},
		// Other literals match exactly; regular expression syntax is literal.
		{"x://a.b/{v}", "x://aXb/1", nil},
		{"x://(a)+/{v}", "x://(a)+/1", map[string]string{"v": "1"}},
	})
}

func TestURITemplateMatching(t *testing.T) {
	runMatchCases(t, []matchCase{
		// Reserved values may contain "/" but leave the query to {?q}.
		{"file:///{+path}{?q}", "file:///a/b?q=1", map[string]string{"path": "a/b", "q": "1"}},
		{"file:///{+path}", "file:///a/b?q=1", map[string]string{"path": "a/b?q=1"}},
		{"file:///{+path}/here", "file:///x/here/here", map[string]string{"path": "x/here"}},
		// Query parameters in any order, unknown ones ignored, repeated
		// ones joined with ",", split over {?} and {&}.
		{"x://s{?q,lang}", "x://s?lang=en&x=1&q=go", map[string]string{"q": "go", "lang": "en"}},
		{"x://s{?tags*}", "x://s?tags=a&tags=b", map[string]string{"tags": "a,b"}},
		{"x://s{?a}{&b}", "x://s?b=2&a=1", map[string]string{"a": "1", "b": "2"}},
		{"x://s?fixed=1{&b}", "x://s?fixed=1&b=2", map[string]string{"b": "2"}},
		{"x://s{?q}", "x://s?q=", map[string]string{"q": ""}},
		{"x://s{?q}", "x://s", map[string]string{}},
		{"x://s{;a,b}", "x://s;b=2;a", map[string]string{"a": "", "b": "2"}},
		// Path and label expressions.
		{"file://{/path*}", "file:///a/b/c", map[string]string{"path": "a/b/c"}},
		{"x://h{/a,b}", "x://h/1/2", map[string]string{"a": "1", "b": "2"}},
		{"x://h{/a,b}", "x://h/1", map[string]string{"a": "1"}},
		{"x://h{/list*,last}", "x://h/1/2/3/z", map[string]string{"list": "1/2/3", "last": "z"}},
		{"x://h{.ext}", "x://h.tar.gz", map[string]string{"ext": "tar.gz"}},
		{"x://h{.a,b}", "x://h.1.2", map[string]string{"a": "1", "b": "2"}},
		{"x://{a}.{b}", "x://foo.txt", map[string]string{"a": "foo", "b": "txt"}},
		// Prefix modifiers bound the length, counted in decoded characters.
		{"x://{id:3}", "x://abc", map[string]string{"id": "abc"}},
		{"x://{id:3}", "x://abcd", nil},
		{"x://{id:2}", "x://%C3%A9x", map[string]string{"id": "éx"}},
		{"x://{+id:2}", "x://%2F%2F", map[string]string{"id": "%2F%2F"}},
		{"x://{+id:2}", "x://%2F%2F%2F", nil},
		// A variable used twice takes one value; a prefix use must agree.
		{"x://{a}/{a}", "x://1/1", map[string]string{"a": "1"}},
		{"x://{a}/{a}", "x://1/2", nil},
		{"x://{a:1}/{a}", "x://v/value", map[string]string{"a": "value"}},
		{"x://{a}/{a:1}", "x://value/v", map[string]string{"a": "value"}},
		{"x://{a:1}/{a}", "x://x/value", nil},
		{"x://{a:2}/{a:4}", "x://va/valu", map[string]string{"a": "valu"}},
		{"x://{a:2}/{a:4}", "x://vb/valu", nil},
	})
}
