package server

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate matches URIs against an RFC 6570 template (levels 1 to 4:
// simple, reserved {+x}, fragment {#x}, label {.x}, path {/x}, path-parameter
// {;x}, query {?x,y} and continuation {&x} expressions; explode and prefix
// modifiers are accepted).
type uriTemplate struct {
	raw    string
	re     *regexp.Regexp
	groups []templateGroup // one per capturing group, in order
}

type templateGroup struct {
	op    byte // 0 for simple
	names []string
}

func parseURITemplate(t string) (*uriTemplate, error) {
	if t == "" {
		return nil, fmt.Errorf("empty URI template")
	}
	var re strings.Builder
	re.WriteString("^")
	ut := &uriTemplate{raw: t}
	for i := 0; i < len(t); {
		open := strings.IndexByte(t[i:], '{')
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(t[i:]))
			break
		}
		re.WriteString(regexp.QuoteMeta(t[i : i+open]))
		i += open
		end := strings.IndexByte(t[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed expression at %d", i)
		}
		expr := t[i+1 : i+end]
		i += end + 1
		if expr == "" {
			return nil, fmt.Errorf("empty expression")
		}
		var op byte
		if strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op, expr = expr[0], expr[1:]
		}
		var names []string
		for _, v := range strings.Split(expr, ",") {
			name := v
			if k := strings.IndexAny(name, ":*"); k >= 0 {
				name = name[:k]
			}
			if name == "" || !validVarName(name) {
				return nil, fmt.Errorf("invalid variable %q", v)
			}
			names = append(names, name)
		}
		ut.groups = append(ut.groups, templateGroup{op: op, names: names})
		switch op {
		case 0:
			re.WriteString(`([^/?#]*)`)
		case '+':
			re.WriteString(`([^?#]*)`)
		case '#':
			re.WriteString(`(?:#(.*))?`)
		case '.':
			re.WriteString(`(?:\.([^/?#]*))?`)
		case '/':
			re.WriteString(`((?:/[^/?#]*)*)`)
		case ';':
			re.WriteString(`((?:;[^/?#]*)*)`)
		case '?':
			re.WriteString(`(?:\?([^#]*))?`)
		case '&':
			re.WriteString(`(?:&([^#]*))?`)
		}
	}
	re.WriteString("$")
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, err
	}
	ut.re = compiled
	return ut, nil
}

func validVarName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c == '%' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// match reports whether uri matches the template and returns the variables.
func (ut *uriTemplate) match(uri string) (map[string]string, bool) {
	m := ut.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string)
	for gi, g := range ut.groups {
		raw := m[gi+1]
		switch g.op {
		case '?', '&', ';':
			sep := "&"
			if g.op == ';' {
				sep = ";"
				raw = strings.TrimPrefix(raw, ";")
			}
			for _, pair := range strings.Split(raw, sep) {
				k, v, _ := strings.Cut(pair, "=")
				for _, n := range g.names {
					if n == k {
						vars[n] = unescape(v)
					}
				}
			}
		default:
			sep := ","
			switch g.op {
			case '/':
				raw = strings.TrimPrefix(raw, "/")
				if len(g.names) > 1 {
					sep = "/"
				}
			case '.':
				if len(g.names) > 1 {
					sep = "."
				}
			}
			parts := []string{raw}
			if len(g.names) > 1 {
				parts = strings.SplitN(raw, sep, len(g.names))
			}
			for j, n := range g.names {
				if j < len(parts) {
					vars[n] = unescape(parts[j])
				}
			}
		}
	}
	return vars, true
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
