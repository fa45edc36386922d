package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	"github.com/mcpkit/mcpkit/protocol"
)

// LogHandler is a slog.Handler that sends the records of one request to
// its client as notifications/message, on the request's stream, when the
// request asked for log messages (its _meta log level, or its legacy
// session's logging/setLevel) and the record is at or above that level;
// otherwise a record goes nowhere. Each message's data is an object with
// the record's message ("msg") and attributes (groups as nested objects);
// its logger is the name given to NewLogHandler. slog levels map to MCP's
// as: below Info debug, Info info, Info+2 notice, Warn warning, Error
// error, Error+4 critical, Error+8 alert, Error+12 and above emergency.
//
// Records are the client's to read: log nothing a client may not see.
type LogHandler struct {
	r      *Request
	logger string
	steps  []logStep // WithAttrs and WithGroup, in order
}

// logStep is a WithGroup (group != "") or a WithAttrs.
type logStep struct {
	group string
	attrs []slog.Attr
}

// NewLogHandler returns the handler for the request r, naming its
// messages' logger (which may be "").
//
//	log := slog.New(server.NewLogHandler(req.Request, "weather"))
//	log.Info("fetching the forecast", "city", in.City)
func NewLogHandler(r *Request, logger string) *LogHandler {
	return &LogHandler{r: r, logger: logger}
}

// LoggingLevel returns the MCP level of a slog level.
func LoggingLevel(l slog.Level) protocol.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return protocol.LevelDebug
	case l < slog.LevelInfo+2:
		return protocol.LevelInfo
	case l < slog.LevelWarn:
		return protocol.LevelNotice
	case l < slog.LevelError:
		return protocol.LevelWarning
	case l < slog.LevelError+4:
		return protocol.LevelError
	case l < slog.LevelError+8:
		return protocol.LevelCritical
	case l < slog.LevelError+12:
		return protocol.LevelAlert
	}
	return protocol.LevelEmergency
}

// Enabled reports whether the request asked for messages at level.
func (h *LogHandler) Enabled(_ context.Context, level slog.Level) bool {
	want := h.r.Meta.LogLevel
	return want != "" && LoggingLevel(level).Severity() >= want.Severity()
}

// Handle sends the record to the client, if the request asked for it. It
// fails with ErrRequestFinished once the request was answered.
func (h *LogHandler) Handle(_ context.Context, rec slog.Record) error {
	data := map[string]any{}
	if rec.Message != "" {
		data["msg"] = rec.Message
	}
	cur := data
	var opened []map[string]any
	for _, st := range h.steps {
		if st.group == "" {
			for _, a := range st.attrs {
				addAttr(cur, a)
			}
			continue
		}
		sub := map[string]any{}
		cur[st.group] = sub
		opened = append(opened, cur)
		cur = sub
	}
	rec.Attrs(func(a slog.Attr) bool {
		addAttr(cur, a)
		return true
	})
	// A group that got no attribute is left out, innermost first.
	for i := len(opened) - 1; i >= 0; i-- {
		g := h.groupAt(i)
		if sub, _ := opened[i][g].(map[string]any); len(sub) == 0 {
			delete(opened[i], g)
		}
	}
	return h.r.Log(LoggingLevel(rec.Level), h.logger, data)
}

// groupAt returns the name of the i-th group opened.
func (h *LogHandler) groupAt(i int) string {
	for _, st := range h.steps {
		if st.group != "" {
			if i == 0 {
				return st.group
			}
			i--
		}
	}
	return ""
}

// WithAttrs implements slog.Handler.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	c.steps = append(slices.Clip(h.steps), logStep{attrs: slices.Clone(attrs)})
	return &c
}

// WithGroup implements slog.Handler.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.steps = append(slices.Clip(h.steps), logStep{group: name})
	return &c
}

// addAttr puts a resolved attribute into m, as slog's JSON handler would:
// groups as objects (an empty key inlines a group; an empty group is
// left out), errors as their text, other values as JSON encodes them.
func addAttr(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	switch a.Value.Kind() {
	case slog.KindGroup:
		attrs := a.Value.Group()
		if len(attrs) == 0 {
			return
		}
		dst := m
		if a.Key != "" {
			sub, ok := m[a.Key].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[a.Key] = sub
			}
			dst = sub
		}
		for _, ga := range attrs {
			addAttr(dst, ga)
		}
	case slog.KindAny:
		v := a.Value.Any()
		switch x := v.(type) {
		case error:
			m[a.Key] = x.Error()
		case json.Marshaler:
			m[a.Key] = x
		default:
			if _, err := json.Marshal(x); err != nil {
				m[a.Key] = a.Value.String()
			} else {
				m[a.Key] = x
			}
		}
	default:
		m[a.Key] = a.Value.Any()
	}
}
