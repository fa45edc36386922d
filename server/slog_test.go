package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// serveLogging calls the tool "log" with the log level given (none for
// ""), and returns the notifications/message params it sent.
func serveLogging(t *testing.T, level string, logs func(*slog.Logger)) []protocol.LoggingMessageParams {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "logs", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "log"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (string, error) {
		logs(slog.New(server.NewLogHandler(req.Request, "tool")))
		return "ok", nil
	})
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if level != "" {
		meta += `,"io.modelcontextprotocol/logLevel":"` + level + `"`
	}
	msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","_meta":{` + meta + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []protocol.LoggingMessageParams
	n := transport.NotifierFunc(func(b []byte) error {
		m, err := jsonrpc.Decode(b)
		if err != nil || m.Method != protocol.NotificationMessage {
			t.Errorf("sent %s", b)
			return nil
		}
		var p protocol.LoggingMessageParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Error(err)
		}
		got = append(got, p)
		return nil
	})
	if _, err := s.Serve(context.Background(), &transport.Request{Message: msg, Notifier: n, Cancel: func() {}}); err != nil {
		t.Fatal(err)
	}
	return got
}

func dataJSON(p protocol.LoggingMessageParams) string {
	b, _ := json.Marshal(p.Data)
	return string(b)
}

func TestLogHandler(t *testing.T) {
	got := serveLogging(t, "info", func(l *slog.Logger) {
		l.Debug("not asked for")
		l.Info("fetching", "city", "Lyon", "n", 3)
		l.With("req", 7).WithGroup("db").Warn("slow", "ms", 250, slog.Group("empty"))
		l.WithGroup("unused").Error("failed", "err", errors.New("boom"))
		l.Log(context.Background(), slog.LevelError+8, "paging")
		l.Log(context.Background(), slog.LevelInfo+2, "noted")
	})
	want := []struct{ level, data string }{
		{"info", `{"city":"Lyon","msg":"fetching","n":3}`},
		{"warning", `{"db":{"ms":250},"msg":"slow","req":7}`},
		{"error", `{"msg":"failed","unused":{"err":"boom"}}`},
		{"alert", `{"msg":"paging"}`},
		{"notice", `{"msg":"noted"}`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if string(got[i].Level) != w.level || dataJSON(got[i]) != w.data || got[i].Logger != "tool" {
			t.Errorf("message %d: %s %s %s, want %s %s tool", i, got[i].Level, dataJSON(got[i]), got[i].Logger, w.level, w.data)
		}
	}
}

// Without a log level on the request, records go nowhere.
func TestLogHandlerNotAsked(t *testing.T) {
	enabled := true
	got := serveLogging(t, "", func(l *slog.Logger) {
		l.Error("anything", "secret", strings.Repeat("x", 10))
		enabled = l.Enabled(context.Background(), slog.LevelError+12)
	})
	if len(got) != 0 || enabled {
		t.Errorf("a request that asked for no log messages got %d (enabled %v)", len(got), enabled)
	}
}
