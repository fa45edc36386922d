package auth

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// Section 11.6.1): a scheme and its auth-params, names in lower case.
type Challenge struct {
	Scheme string
	Params map[string]string
}

// ParseChallenges parses the WWW-Authenticate header values of a response.
// Malformed parts are skipped; token68 credentials are ignored.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		out = append(out, parseChallenges(v)...)
	}
	return out
}

func parseChallenges(s string) []Challenge {
	var out []Challenge
	i := 0
	skipWS := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	token := func() string {
		j := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != '=' && s[i] != '"' {
			i++
		}
		return s[j:i]
	}
	var cur *Challenge
	for i < len(s) {
		skipWS()
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		t := token()
		if t == "" {
			i++ // a stray character
			continue
		}
		skipWS()
		if i < len(s) && s[i] == '=' && cur != nil {
			// An auth-param, unless this is token68 padding ("abc==").
			j := i
			for j < len(s) && s[j] == '=' {
				j++
			}
			if j-i > 1 {
				i = j
				continue
			}
			i++
			skipWS()
			var val string
			if i < len(s) && s[i] == '"' {
				i++
				var b strings.Builder
				for i < len(s) && s[i] != '"' {
					if s[i] == '\\' && i+1 < len(s) {
						i++
					}
					b.WriteByte(s[i])
					i++
				}
				i++ // closing quote
				val = b.String()
			} else {
				val = token()
			}
			cur.Params[strings.ToLower(t)] = val
			continue
		}
		if i < len(s) && s[i] == '=' {
			// A parameter before any scheme, or token68: skip it.
			for i < len(s) && s[i] != ',' {
				i++
			}
			continue
		}
		out = append(out, Challenge{Scheme: t, Params: map[string]string{}})
		cur = &out[len(out)-1]
	}
	return out
}

// bearerParams returns the parameters of the response's Bearer challenge,
// or an empty map.
func bearerParams(h http.Header) map[string]string {
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c.Params
		}
	}
	return map[string]string{}
}
