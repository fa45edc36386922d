package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/loadgen"
)

// server is one database MCP server under measurement, started once and
// kept for every round.
type server struct {
	name string
	tool string
	argv []string
	peer bool   // not mcpkit
	url  string // Streamable HTTP endpoint; "" for stdio
	// listen returns the arguments that have an HTTP server listen on
	// 127.0.0.1:port; nil for stdio.
	listen func(port int) []string

	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   *io.PipeWriter // where the stdout lines go now
}

// peers lists the servers: mcpkit over stdio and HTTP (and an older
// binary's, when given), then the two peers over stdio and dbhub over
// Streamable HTTP too (server-postgres has no HTTP transport), so that
// each of mcpkit's transports has a peer on the same one.
func peers(mcpkitBin, before, nodeModules, dsn string) []*server {
	var out []*server
	add := func(name, bin string) {
		out = append(out,
			&server{name: name + "-stdio", tool: "query", argv: []string{bin, "serve", "sql", "--stdio", "--dsn", dsn}},
			&server{name: name + "-http", tool: "query", argv: []string{bin, "serve", "sql", "--sse-path", "", "--dsn", dsn},
				listen: func(port int) []string { return []string{"--addr", "127.0.0.1:" + strconv.Itoa(port)} }})
	}
	add("mcpkit", mcpkitBin)
	if before != "" {
		add("mcpkit-before", before)
	}
	dbhub := filepath.Join(nodeModules, "@bytebase/dbhub/dist/index.js")
	out = append(out,
		&server{name: "server-postgres", tool: "query", peer: true,
			argv: []string{"node", filepath.Join(nodeModules, "@modelcontextprotocol/server-postgres/dist/index.js"), dsn}},
		&server{name: "dbhub", tool: "execute_sql", peer: true,
			argv: []string{"node", dbhub, "--transport", "stdio", "--dsn", dsn}},
		&server{name: "dbhub-http", tool: "execute_sql", peer: true,
			argv:   []string{"node", dbhub, "--transport", "http", "--dsn", dsn},
			listen: func(port int) []string { return []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)} }})
	return out
}

func (s *server) start(ctx context.Context) error {
	argv := s.argv
	if s.listen != nil {
		port, err := freePort()
		if err != nil {
			return err
		}
		argv = append(append([]string(nil), argv...), s.listen(port)...)
		s.url = "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stderr = io.Discard
	if os.Getenv("SQLBENCH_SERVER_LOGS") != "" {
		s.cmd.Stderr = os.Stderr
	}
	if s.url == "" {
		in, err := s.cmd.StdinPipe()
		if err != nil {
			return err
		}
		out, err := s.cmd.StdoutPipe()
		if err != nil {
			return err
		}
		s.stdin = in
		if err := s.cmd.Start(); err != nil {
			return err
		}
		go s.forward(out)
		return nil
	}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/mcp")); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("did not listen within 20s")
}

// forward hands the server's stdout lines to whoever reads them now.
func (s *server) forward(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		s.mu.Lock()
		w := s.out
		s.mu.Unlock()
		if w != nil && len(line) > 0 {
			w.Write(line)
		}
		if err != nil {
			return
		}
	}
}

func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if s.stdin != nil {
		s.stdin.Close()
	} else {
		s.cmd.Process.Signal(os.Interrupt) // an HTTP server stops on SIGINT
	}
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// era is the protocol era the load speaks: mcpkit's newest, the peers'
// handshake (each run shakes hands again, which their SDK allows; mcpkit
// refuses a second initialize on one stdio stream, so it is never sent
// one).
func (s *server) era() string {
	if s.peer {
		return loadgen.EraLegacy
	}
	return loadgen.EraModern
}

// target returns a loadgen target for one run; done ends it.
func (s *server) target() (loadgen.Target, func(), error) {
	if s.url != "" {
		return loadgen.Target{URL: s.url}, func() {}, nil
	}
	pr, pw := io.Pipe()
	s.mu.Lock()
	s.out = pw
	s.mu.Unlock()
	return loadgen.Target{Stdin: s.stdin, Stdout: pr}, func() {
		s.mu.Lock()
		s.out = nil
		s.mu.Unlock()
		pw.Close()
	}, nil
}

// verify makes one call of w and checks that it answers w.rows rows.
func (s *server) verify(ctx context.Context, w workload) error {
	call := func(id int, method string, params any) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		return b
	}
	initialize := call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sqlbench", "version": "1"}})
	initialized := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	toolCall := call(2, "tools/call", map[string]any{"name": s.tool, "arguments": map[string]any{"sql": w.sql}})
	lines := [][]byte{initialize, initialized, toolCall}
	if !s.peer {
		// mcpkit speaks the modern era, in which a request needs no
		// handshake.
		lines = [][]byte{call(2, "tools/call", map[string]any{"name": s.tool, "arguments": map[string]any{"sql": w.sql},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}})}
	}
	var resp []byte
	var err error
	if s.url != "" {
		resp, err = s.verifyHTTP(ctx, lines...)
	} else {
		resp, err = s.verifyStdio(ctx, lines...)
	}
	if err != nil {
		return fmt.Errorf("verifying: %w", err)
	}
	n, err := countRows(resp)
	if err != nil {
		return fmt.Errorf("verifying: %w: %.300s", err, resp)
	}
	if n != w.rows {
		return fmt.Errorf("verifying: %d rows, want %d", n, w.rows)
	}
	return nil
}

func (s *server) verifyStdio(ctx context.Context, lines ...[]byte) ([]byte, error) {
	t, done, _ := s.target()
	defer done()
	for _, l := range lines {
		if _, err := s.stdin.Write(append(l, '\n')); err != nil {
			return nil, err
		}
	}
	type answer struct {
		line []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		br := bufio.NewReaderSize(t.Stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				got <- answer{nil, err}
				return
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == "2" {
				got <- answer{line, nil}
				io.Copy(io.Discard, t.Stdout)
				return
			}
		}
	}()
	select {
	case a := <-got:
		return a.line, a.err
	case <-time.After(30 * time.Second):
		return nil, errors.New("no answer within 30s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *server) verifyHTTP(ctx context.Context, lines ...[]byte) ([]byte, error) {
	session := ""
	post := func(body []byte) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		if !s.peer {
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", s.tool)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, b)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for _, l := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(l, "data:"); ok && strings.Contains(d, `"id"`) {
					return []byte(strings.TrimSpace(d)), nil
				}
			}
		}
		return b, err
	}
	for _, b := range lines[:len(lines)-1] {
		if _, err := post(b); err != nil {
			return nil, err
		}
	}
	return post(lines[len(lines)-1])
}

// countRows finds the rows of a tools/call answer: mcpkit's row_count, or
// a JSON array of rows in the text (a top-level array, or "rows").
func countRows(resp []byte) (int, error) {
	var r struct {
		Result struct {
			IsError    bool `json:"isError"`
			Structured *struct {
				RowCount int `json:"row_count"`
			} `json:"structuredContent"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return 0, err
	}
	if r.Error != nil || r.Result.IsError {
		return 0, errors.New("an error answer")
	}
	if r.Result.Structured != nil {
		return r.Result.Structured.RowCount, nil
	}
	if len(r.Result.Content) == 0 {
		return 0, errors.New("no content")
	}
	var v any
	if err := json.Unmarshal([]byte(r.Result.Content[0].Text), &v); err != nil {
		return 0, err
	}
	if n, ok := findRows(v); ok {
		return n, nil
	}
	return 0, errors.New("no rows found in the text")
}

func findRows(v any) (int, bool) {
	if rows, ok := v.([]any); ok {
		return len(rows), true
	}
	return findRowsMember(v)
}

// findRowsMember finds a "rows" array inside objects and arrays.
func findRowsMember(v any) (int, bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if n, ok := findRowsMember(e); ok {
				return n, true
			}
		}
	case map[string]any:
		if rows, ok := x["rows"].([]any); ok {
			return len(rows), true
		}
		for _, e := range x {
			if n, ok := findRowsMember(e); ok {
				return n, true
			}
		}
	}
	return 0, false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
