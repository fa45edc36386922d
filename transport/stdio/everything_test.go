package stdio_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// modernMeta is the per-request _meta every modern request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func toolCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + modernMeta + `,"name":"` + name + `","arguments":` + args + `}}`
}

// TestServeLargestMessage sends a tools/call of exactly DefaultMaxLineBytes
// through the echo tool, then one byte more, which is refused while the
// connection goes on.
func TestServeLargestMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 16 MiB messages")
	}
	checkLeaks(t)
	srv := everything.New(nil)
	defer srv.Close()
	c := startConn(t, srv, nil)

	head := strings.TrimSuffix(toolCall("1", "echo", `{"text":"`), `}}`)
	tail := `"}}}`
	n := stdio.DefaultMaxLineBytes - len(head) - len(tail)
	var b bytes.Buffer
	b.Grow(stdio.DefaultMaxLineBytes + 2)
	b.WriteString(head)
	b.Write(bytes.Repeat([]byte("x"), n))
	b.WriteString(tail)
	if b.Len() != stdio.DefaultMaxLineBytes {
		t.Fatalf("built %d bytes, want %d", b.Len(), stdio.DefaultMaxLineBytes)
	}
	b.WriteByte('\n')
	c.sendRaw(b.Bytes())

	line := c.recv(30 * time.Second)
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			ResultType string `json:"resultType"`
			Content    []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("response: %v (%.200s)", err, line)
	}
	if resp.ID != 1 || resp.Result.ResultType != "complete" || len(resp.Result.Content) != 1 {
		t.Fatalf("response %.300s", line)
	}
	if got := resp.Result.Content[0].Text; len(got) != n || strings.Count(got, "x") != n {
		t.Fatalf("echoed %d bytes, want %d", len(got), n)
	}

	// One byte over the default limit, built in the same buffer.
	over := append(b.Bytes()[:len(head)+n], 'x')
	over = append(over, tail+"\n"...)
	c.sendRaw(over)
	if got, want := string(c.recv(30*time.Second)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message exceeds the limit of 16777216 bytes"}}`; got != want {
		t.Fatalf("got %.300s, want %s", got, want)
	}
	c.send(toolCall("2", "echo", `{"text":"still here"}`))
	if got := c.recv(wait); idOf(got) != "2" || !bytes.Contains(got, []byte(`"still here"`)) {
		t.Fatalf("after the refused line: %s", got)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}

// TestServeListenEndedAtEOF checks that at end of input a
// subscriptions/listen stream is ended at once, without a response, while
// an ordinary request still in flight finishes and is answered.
func TestServeListenEndedAtEOF(t *testing.T) {
	checkLeaks(t)
	srv := everything.New(nil)
	defer srv.Close()
	c := startConn(t, srv, nil) // the default grace of 2s
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{` + modernMeta + `,"notifications":{"resourceSubscriptions":["test://watched-resource"]}}}`)
	ack := c.recv(wait)
	if !bytes.Contains(ack, []byte(`"method":"notifications/subscriptions/acknowledged"`)) || !bytes.Contains(ack, []byte(`"io.modelcontextprotocol/subscriptionId":"sub"`)) {
		t.Fatalf("first line %s, want the acknowledgement", ack)
	}
	c.send(toolCall("2", "test_sleep", `{"ms":200}`))
	time.Sleep(20 * time.Millisecond) // let the sleep start
	begin := time.Now()
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Serve took %v after end of input: the listen stream was not ended at once", d)
	}
	rest := c.rest()
	if len(rest) != 1 || idOf(rest[0]) != "2" || !bytes.Contains(rest[0], []byte(`"slept"`)) {
		t.Fatalf("lines after end of input: %q, want only the answer to 2", rest)
	}
}

// TestServeEverythingProgress checks that progress notifications of a tool
// call come before its response, each a line of its own.
func TestServeEverythingProgress(t *testing.T) {
	checkLeaks(t)
	srv := everything.New(nil)
	defer srv.Close()
	c := startConn(t, srv, nil)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":"tok","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"test_tool_with_progress","arguments":{}}}`)
	for _, p := range []string{"0", "50", "100"} {
		l := c.recv(wait)
		if !bytes.Contains(l, []byte(`"method":"notifications/progress"`)) || !bytes.Contains(l, []byte(`"progress":`+p+`,`)) || !bytes.Contains(l, []byte(`"progressToken":"tok"`)) {
			t.Fatalf("want progress %s, got %s", p, l)
		}
	}
	if l := c.recv(wait); idOf(l) != "5" || !bytes.Contains(l, []byte("Tool with progress completed")) {
		t.Fatalf("want the result, got %s", l)
	}
	c.closeInput()
	if err := c.wait(wait); err != nil {
		t.Fatal(err)
	}
}
