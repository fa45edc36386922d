package schema

import "strings"

// maxErrors bounds how many validation errors a single Validate call collects.
const maxErrors = 10

// ValidationError describes one way in which an instance fails a schema.
// Path is a JSON Pointer (RFC 6901) into the instance; the empty string denotes the root.
type ValidationError struct {
	Path    string // JSON Pointer into the instance, e.g. "/address/city"
	Keyword string // schema keyword that failed, e.g. "minimum"
	Message string // human-readable description of the failure
}

// Error formats the error as "<path>: <message>", using "(root)" for the empty path.
func (e *ValidationError) Error() string {
	p := e.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + e.Message
}

// ValidationErrors is the error returned by Validate when an instance is invalid.
// It holds at most a small, fixed number of errors (currently 10).
type ValidationErrors []*ValidationError

// Error joins the individual error messages with "; ".
func (es ValidationErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// escapeToken escapes a JSON Pointer reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// unescapeToken reverses escapeToken.
func unescapeToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	s = strings.ReplaceAll(s, "~1", "/")
	return strings.ReplaceAll(s, "~0", "~")
}
