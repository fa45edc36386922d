package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRawJSON(w, b)
}

// writeRawJSON prints JSON text indented.
func writeRawJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// writeResult prints a protocol result as JSON. Members a legacy server
// never sends (resultType, and cache hints) are left out when empty, so
// that the output is the result as received.
func writeResult(w io.Writer, v any, legacy bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRawJSON(w, tidyResult(b, legacy))
}

// tidyResult drops the empty protocol members from the top level of a
// result object: resultType "" always, ttlMs 0 and cacheScope "" in the
// legacy era.
func tidyResult(raw []byte, legacy bool) []byte {
	out := []byte{'{'}
	err := jsonrpc.EachMember(raw, func(k []byte, v jsontext.Value) error {
		switch key, val := string(k), string(v); {
		case key == "resultType" && val == `""`,
			legacy && key == "ttlMs" && val == "0",
			legacy && key == "cacheScope" && val == `""`:
			return nil
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, v...)
		return nil
	})
	if err != nil {
		return raw
	}
	return append(out, '}')
}

// table prints rows under a header, in columns. On a terminal long cells
// are shortened to keep rows on one line. Optional columns are left out
// when no row has a value in them.
type table struct {
	header   []string
	optional []int
	rows     [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// maxCell is the width a cell is shortened to on a terminal.
const maxCell = 60

func (t *table) write(w io.Writer, tty bool) error {
	drop := map[int]bool{}
	for _, col := range t.optional {
		drop[col] = true
		for _, r := range t.rows {
			if col < len(r) && r[col] != "" {
				drop[col] = false
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(cells []string) {
		first := true
		for i, c := range cells {
			if drop[i] {
				continue
			}
			c = oneLine(c)
			if tty {
				c = shorten(c, maxCell)
			}
			if c == "" {
				c = "-"
			}
			if !first {
				io.WriteString(tw, "\t")
			}
			first = false
			io.WriteString(tw, c)
		}
		io.WriteString(tw, "\n")
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
	return tw.Flush()
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// shorten cuts s to n runes, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// status writes the lines that are not results to stderr: progress, log
// messages, notes. On a terminal progress is one line updated in place.
type status struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	open bool // an updating line is shown
}

// progress shows a progress line.
func (s *status) progress(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty {
		// The command's own control sequence, past the escaping.
		io.WriteString(rawWriter(s.w), "\r\x1b[K")
		io.WriteString(s.w, text)
		s.open = true
		return
	}
	fmt.Fprintln(s.w, text)
}

// println prints a line, below the progress line if there is one.
func (s *status) println(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	fmt.Fprintln(s.w, text)
}

// clear removes the progress line.
func (s *status) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

func (s *status) clearLocked() {
	if s.open {
		io.WriteString(rawWriter(s.w), "\r\x1b[K")
		s.open = false
	}
}

// log prints a server log message.
func (s *status) log(p *protocol.LoggingMessageParams) {
	var data string
	switch d := p.Data.(type) {
	case string:
		data = d
	default:
		b, _ := json.Marshal(d)
		data = string(b)
	}
	logger := ""
	if p.Logger != "" {
		logger = " " + p.Logger
	}
	s.println(fmt.Sprintf("log %s%s: %s", p.Level, logger, oneLine(data)))
}

// describe returns the message to print for err and the exit code it
// means; connecting tells whether the connection was being made.
func describe(err error, connecting bool) (string, int) {
	failed := exitFailed
	if connecting {
		failed = exitUnreachable
	}
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		msg := fmt.Sprintf("the server answered with error %d: %s", rpc.Code, rpc.Message)
		if missing := missingCapabilities(rpc); missing != "" {
			msg += " (it needs the client capability " + missing + ", which mcpkit does not offer)"
		}
		return msg, failed
	case errors.Is(err, context.DeadlineExceeded):
		return err.Error(), failed
	case connecting:
		return err.Error(), exitUnreachable
	}
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &ne), errors.As(err, &ue), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, transport.ErrStreamBroken), errors.Is(err, transport.ErrClosed),
		errors.Is(err, stdio.ErrConnClosed), errors.Is(err, stdio.ErrProcessExited):
		return "lost the connection: " + err.Error(), exitUnreachable
	}
	return err.Error(), exitFailed
}

// missingCapabilities names the client capabilities a
// MissingRequiredClientCapability error asks for, or "".
func missingCapabilities(e *jsonrpc.Error) string {
	var d protocol.MissingCapabilityData
	if len(e.Data) == 0 || jsonrpc.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	var names []string
	c := d.RequiredCapabilities
	if c.Sampling != nil {
		names = append(names, "sampling")
	}
	if c.Roots != nil {
		names = append(names, "roots")
	}
	if c.Elicitation != nil {
		names = append(names, "elicitation")
	}
	names = append(names, sortedNames(c.Experimental)...)
	names = append(names, sortedNames(c.Extensions)...)
	return strings.Join(names, ", ")
}
