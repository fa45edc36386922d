package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/suitedata"
)

// The uritemplate-test suite (RFC 6570 examples, extended and negative
// cases) runs here against parseURITemplate and match. The suite is not part
// of the module: it is read from ../shared/testdata/ next to the project
// root (the directory holding go.mod).
//
// The server matches URIs against templates and never expands them, so an
// expansion case is checked as a round trip: the expected expansion must
// match the template, and the variables the match yields must agree with
// the case's variables. A string (or number) must come back as it is, cut
// to its prefix when the template only uses a prefix of it; a list must
// come back as its items joined by the expression's separator ("," in
// general, "." and "/" for exploded label and path expressions); an
// undefined variable or an empty list or map must come back absent or
// empty. Where the expected expansion has alternatives, each must match.
// Negative cases (malformed templates) must be refused by parseURITemplate,
// which AddResourceTemplate uses.
//
// Some cases cannot round-trip because matching is ambiguous or a value is
// not a string; uriTemplateFailures lists them.

// uriTemplateFailure names suite cases whose round trip (or refusal) fails,
// with the reason. where is "file | group | template".
type uriTemplateFailure struct {
	where  string
	reason string
}

// uriTemplateFailures lists every suite case known not to round-trip. The
// test fails when a listed case passes, when an unlisted case fails and
// when an entry names no case of the suite, so the list stays exact.
var uriTemplateFailures = []uriTemplateFailure{
	{"spec-examples.json | Level 4 Examples | {;keys*}", whyExplodedMap},
	{"spec-examples.json | Level 4 Examples | {?keys*}", whyExplodedMap},
	{"spec-examples.json | Level 4 Examples | {&keys*}", whyExplodedMap},
	{"spec-examples-by-section.json | 3.2.7 Path-Style Parameter Expansion | {;keys*}", whyExplodedMap},
	{"spec-examples-by-section.json | 3.2.8 Form-Style Query Expansion | {?keys*}", whyExplodedMap},
	{"spec-examples-by-section.json | 3.2.9 Form-Style Query Continuation | {&keys*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 1 | {?assoc_special_chars*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 4: Numeric Keys | {?german*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 5: Explode Combinations | {?id,token,keys*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 5: Explode Combinations | {/id}{?token,keys*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 5: Explode Combinations | {?id,token}{&keys*}", whyExplodedMap},
	{"extended-tests.json | Additional Examples 5: Explode Combinations | /user{/id}{?token,tab}{&keys*}", whyExplodedMap},

	{"spec-examples-by-section.json | 3.2.2 Simple String Expansion | ?{undef,y}",
		"an undefined variable expands to nothing, so in a multi-variable expression the values after it shift: y's value is read as undef's"},
	{"spec-examples-by-section.json | 3.2.3 Reserved Expansion | up{+path}{var}/here",
		"adjacent expressions with no literal between them: where path ends and var begins is ambiguous (the shortest reserved value that lets the rest match is taken)"},
	{"extended-tests.json | Additional Examples 6: Reserved Expansion | {+list}", whyPercent25},
	{"extended-tests.json | Additional Examples 6: Reserved Expansion | {#list}", whyPercent25},

	{"negative-tests.json | Failure Tests | {keys:1}", whyPrefixOfMap},
	{"negative-tests.json | Failure Tests | {+keys:1}", whyPrefixOfMap},
}

// Reasons shared by several entries of uriTemplateFailures.
const (
	whyExplodedMap = "an exploded associative array in a parameter or query expression expands to its members' own names, which a match cannot attribute to the variable (parameters the template does not name are ignored)"
	whyPercent25   = "reserved expansion passes percent-encoded triplets through, so %25 is either a triplet of the value (red%25 here) or an encoded % ({+half}, {+not_pct}); matching decodes it to %"
	whyPrefixOfMap = "well-formed RFC 6570 syntax: a prefix modifier on an associative array is an expansion error that depends on the variable's value, which the template alone does not show"
)

type uriSuiteGroup struct {
	Variables map[string]any      `json:"variables"`
	Testcases [][]json.RawMessage `json:"testcases"`
}

func TestURITemplateSuite(t *testing.T) {
	dir := suitedata.Dir(t, "uritemplate-test")
	files := []string{"spec-examples.json", "spec-examples-by-section.json", "extended-tests.json", "negative-tests.json"}

	listed := make(map[string]*uriTemplateFailure)
	for i := range uriTemplateFailures {
		f := &uriTemplateFailures[i]
		if listed[f.where] != nil {
			t.Errorf("uriTemplateFailures lists %q twice", f.where)
		}
		listed[f.where] = f
	}
	used := make(map[string]bool)
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var groups map[string]uriSuiteGroup
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(&groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		names := make([]string, 0, len(groups))
		for name := range groups {
			names = append(names, name)
		}
		sort.Strings(names)
		t.Run(file, func(t *testing.T) {
			for _, name := range names {
				g := groups[name]
				t.Run(name, func(t *testing.T) {
					for _, tc := range g.Testcases {
						var tmpl string
						if len(tc) != 2 || json.Unmarshal(tc[0], &tmpl) != nil {
							t.Fatalf("malformed test case %s", tc)
						}
						where := file + " | " + name + " | " + tmpl
						entry := listed[where]
						if entry != nil {
							used[where] = true
						}
						t.Run(tmpl, func(t *testing.T) {
							failure := uriTemplateCase(tmpl, tc[1], g.Variables)
							switch {
							case failure != "" && entry == nil:
								t.Errorf("%s\ncase: %s", failure, where)
							case failure == "" && entry != nil:
								t.Errorf("passes but is listed in uriTemplateFailures (%s); remove the entry", entry.reason)
							case failure != "":
								t.Logf("expected failure (%s): %s", entry.reason, failure)
							}
						})
					}
				})
			}
		})
	}
	for _, f := range uriTemplateFailures {
		if !used[f.where] {
			t.Errorf("uriTemplateFailures entry %q names no case of the suite", f.where)
		}
	}
}

// uriTemplateCase runs one suite case, describing how it fails ("" if it
// passes).
func uriTemplateCase(tmpl string, expected json.RawMessage, variables map[string]any) string {
	var uris []string
	if string(expected) == "false" {
		if _, err := parseURITemplate(tmpl); err == nil {
			return "malformed template accepted"
		}
		return ""
	}
	if json.Unmarshal(expected, &uris) != nil {
		var one string
		if err := json.Unmarshal(expected, &one); err != nil {
			return fmt.Sprintf("unexpected expansion %s", expected)
		}
		uris = []string{one}
	}
	ut, err := parseURITemplate(tmpl)
	if err != nil {
		return fmt.Sprintf("template refused: %v", err)
	}
	for _, uri := range uris {
		vars, ok := ut.match(uri)
		if !ok {
			return fmt.Sprintf("expansion %q does not match", uri)
		}
		if msg := checkRoundTrip(ut, vars, variables); msg != "" {
			return fmt.Sprintf("expansion %q: %s (got %v)", uri, msg, vars)
		}
	}
	return ""
}

// checkRoundTrip compares the variables a match yielded with the case's.
func checkRoundTrip(ut *uriTemplate, got map[string]string, variables map[string]any) string {
	type use struct {
		op byte
		v  templateVar
	}
	uses := make(map[string][]use)
	var order []string
	for _, e := range ut.exprs {
		for _, v := range e.vars {
			if uses[v.name] == nil {
				order = append(order, v.name)
			}
			uses[v.name] = append(uses[v.name], use{e.op, v})
		}
	}
	for _, name := range order {
		g, present := got[name]
		first := uses[name][0]
		var want string
		switch val := variables[name].(type) {
		case nil:
			if present && g != "" {
				return fmt.Sprintf("undefined %s = %q", name, g)
			}
			continue
		case string, json.Number:
			s := fmt.Sprint(val)
			limit := 0
			for _, u := range uses[name] {
				if u.v.prefix == 0 {
					limit = 0
					break
				}
				limit = max(limit, u.v.prefix)
			}
			want = s
			if limit > 0 {
				want = truncate(s, limit)
			}
		case []any:
			if len(val) == 0 {
				if present && g != "" {
					return fmt.Sprintf("empty list %s = %q", name, g)
				}
				continue
			}
			items := make([]string, len(val))
			for i, it := range val {
				items[i] = fmt.Sprint(it)
			}
			sep := ","
			if first.v.explode && (first.op == '.' || first.op == '/') {
				sep = string(first.op)
			}
			want = strings.Join(items, sep)
		case map[string]any:
			if len(val) == 0 {
				if present && g != "" {
					return fmt.Sprintf("empty map %s = %q", name, g)
				}
				continue
			}
			if !present {
				return fmt.Sprintf("%s missing, want its members", name)
			}
			if !flattensTo(val, first.op, first.v.explode, g) {
				return fmt.Sprintf("%s = %q, want its members in some order", name, g)
			}
			continue
		default:
			return fmt.Sprintf("unexpected variable %s = %v", name, val)
		}
		if !present {
			return fmt.Sprintf("%s missing, want %q", name, want)
		}
		if g != want {
			return fmt.Sprintf("%s = %q, want %q", name, g, want)
		}
	}
	return ""
}

// flattensTo reports whether s is the associative array m as a match
// yields it: its members as "k,v" (or, exploded, "k=v") joined by the
// expression's separator, in any order.
func flattensTo(m map[string]any, op byte, explode bool, s string) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sep, kv := ",", ","
	if explode {
		kv = "="
		if op == '.' || op == '/' {
			sep = string(op)
		}
	}
	var try func(rest []string, acc []string) bool
	try = func(rest []string, acc []string) bool {
		if len(rest) == 0 {
			return strings.Join(acc, sep) == s
		}
		for i, k := range rest {
			others := append(append([]string(nil), rest[:i]...), rest[i+1:]...)
			if try(others, append(acc, k+kv+fmt.Sprint(m[k]))) {
				return true
			}
		}
		return false
	}
	return try(keys, nil)
}
