package schema

import (
	"net/netip"
	"net/url"
	"strings"
)

// formatCheckers holds the formats asserted when CompileOptions.AssertFormat is set.
var formatCheckers = map[string]func(string) bool{
	"date-time": isDateTime,
	"date":      isDate,
	"time":      isTime,
	"email":     isEmail,
	"uri":       isURI,
	"uuid":      isUUID,
	"ipv4":      isIPv4,
	"ipv6":      isIPv6,
	"hostname":  isHostname,
}

// digits parses n ASCII digits at the start of s.
func digits(s string, n int) (int, bool) {
	if len(s) < n {
		return 0, false
	}
	v := 0
	for i := 0; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// isDate checks an RFC 3339 full-date (YYYY-MM-DD).
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := digits(s, 4)
	m, ok2 := digits(s[5:], 2)
	d, ok3 := digits(s[8:], 2)
	return ok1 && ok2 && ok3 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m)
}

// isTime checks an RFC 3339 full-time (HH:MM:SS[.frac](Z|±HH:MM)). A leap
// second is accepted only when it falls on 23:59:60 UTC.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := digits(s, 2)
	m, ok2 := digits(s[3:], 2)
	sec, ok3 := digits(s[6:], 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return false
	}
	rest := s[8:]
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	offMin := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:], 2)
		om, ok2 := digits(rest[4:], 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offMin = oh*60 + om
		if rest[0] == '+' {
			offMin = -offMin
		}
	default:
		return false
	}
	if sec == 60 {
		utc := ((h*60+m+offMin)%1440 + 1440) % 1440
		return utc == 23*60+59
	}
	return true
}

// isDateTime checks an RFC 3339 date-time.
func isDateTime(s string) bool {
	if len(s) < 20 {
		return false
	}
	switch s[10] {
	case 'T', 't', ' ':
	default:
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

// isEmail performs a pragmatic check of an RFC 5321 mailbox: a non-empty
// local part without spaces, an "@", and a hostname or bracketed IP literal.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false
	}
	if !strings.HasPrefix(local, "\"") {
		if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
			return false
		}
		for i := 0; i < len(local); i++ {
			c := local[i]
			if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>[]:;@\\,\"", c) >= 0 {
				return false
			}
		}
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(ip)
	}
	return isHostname(domain)
}

// isURI checks for an absolute URI (one with a scheme) made only of
// characters RFC 3986 allows; square brackets may appear only in the host.
func isURI(s string) bool {
	authEnd := -1
	if i := strings.Index(s, "://"); i >= 0 {
		authEnd = i + 3 + strings.IndexAny(s[i+3:]+"/", "/?#")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>{}^`|\\", c) >= 0 {
			return false
		}
		if (c == '[' || c == ']') && i >= authEnd {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// isUUID checks the 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isIPv4 checks dotted-quad notation without leading zeros.
func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv6 checks RFC 4291 notation without a zone.
func isIPv6(s string) bool {
	if strings.Contains(s, "%") {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// isHostname checks an RFC 1123 host name: dot-separated labels of letters,
// digits and inner hyphens, each at most 63 characters, 253 in total.
// Punycode (xn--) labels are not decoded.
func isHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		if len(label) >= 4 && label[2:4] == "--" && !strings.EqualFold(label[:2], "xn") {
			return false // reserved for IDNA-style prefixes
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
