package main

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// What a server says reaches the user's terminal: tool names and
// descriptions, its name and instructions, error messages, tool results,
// resources, log messages. A terminal obeys control characters in that
// text — ESC sequences clear the screen, set the window title, write the
// clipboard (OSC 52) or forge what the user sees; carriage returns and
// backspaces overwrite it; bidirectional overrides reorder it. So every
// byte the command writes to a terminal goes through termWriter, which
// shows those characters escaped instead: stdout and stderr are wrapped
// once, in run, when they are terminals. Off a terminal output is left as
// it is (data for a pipe or a file).
//
// Escapes are written \u followed by four hex digits (\u001b for ESC), as
// JSON writes them: JSON output on a terminal stays JSON with the same
// values, since the characters escaped other than C0 (which encoding/json
// already escapes) can only appear inside its strings. A byte that is not
// UTF-8 is written \xNN.

// termWriter writes to a terminal with its control characters escaped.
type termWriter struct{ w io.Writer }

// Write implements io.Writer; it reports len(p) when all of p, escaped,
// was written.
func (t *termWriter) Write(p []byte) (int, error) {
	if _, err := t.w.Write(escapeTerminal(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// rawWriter returns the writer under w's escaping, for the command's own
// control sequences (the progress line's), or w itself.
func rawWriter(w io.Writer) io.Writer {
	if t, ok := w.(*termWriter); ok {
		return t.w
	}
	return w
}

// forTerminal returns e with its stdout and stderr escaped where they are
// terminals.
func (e *env) forTerminal() *env {
	g := *e
	if e.StdoutTTY {
		if _, ok := e.Stdout.(*termWriter); !ok {
			g.Stdout = &termWriter{e.Stdout}
		}
	}
	if e.StderrTTY {
		if _, ok := e.Stderr.(*termWriter); !ok {
			g.Stderr = &termWriter{e.Stderr}
		}
	}
	return &g
}

// escapeTerminal returns p with what a terminal would act on escaped: C0
// controls but newline, tab and a carriage return before a newline; DEL;
// C1 controls; the bidirectional controls (overrides, embeddings,
// isolates, marks); and bytes that are not UTF-8. It returns p itself
// when there is nothing to escape.
func escapeTerminal(p []byte) []byte {
	i := 0
	for i < len(p) {
		r, n := utf8.DecodeRune(p[i:])
		if needsEscape(p, i, r, n) {
			break
		}
		i += n
	}
	if i == len(p) {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	out = append(out, p[:i]...)
	for i < len(p) {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = fmt.Appendf(out, `\x%02x`, p[i])
		case needsEscape(p, i, r, n):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	return out
}

// needsEscape reports whether the rune r, n bytes at p[i:], is escaped.
func needsEscape(p []byte, i int, r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true
	case r == '\n' || r == '\t':
		return false
	case r == '\r':
		return i+1 >= len(p) || p[i+1] != '\n'
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}
