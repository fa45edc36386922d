package sqlserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcpkit/mcpkit/server"
)

// callLog is what Options.RequestLog says of one tool call.
type callLog struct {
	tool  string
	stmt  string
	start time.Time
	rows  int
	cut   bool
}

// statementDigest identifies a statement in the log without showing it.
func statementDigest(sql string) string {
	h := sha256.Sum256([]byte(sql))
	return hex.EncodeToString(h[:8])
}

// logCall writes c's line, if the request log is on; err is the call's
// error (a refusal by a limit, or the database's).
func (d *DB) logCall(ctx context.Context, c *callLog, err error) {
	l := d.opts.RequestLog
	if l == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("principal", server.PrincipalFrom(ctx)),
		slog.String("tool", c.tool),
	}
	if d.served != "" {
		attrs = append(attrs, slog.String("database", d.served))
	}
	if c.stmt != "" {
		attrs = append(attrs, slog.String("statement", statementDigest(c.stmt)))
	}
	attrs = append(attrs, slog.Int("rows", c.rows), slog.Duration("duration", time.Since(c.start).Round(time.Microsecond)))
	var le *limitError
	var pe *pgconn.PgError
	switch {
	case err == nil && c.cut:
		attrs = append(attrs, slog.String("outcome", "truncated"))
	case err == nil:
		attrs = append(attrs, slog.String("outcome", "ok"))
	case errors.As(err, &le):
		attrs = append(attrs, slog.String("outcome", "refused"))
	case errors.As(err, &pe):
		attrs = append(attrs, slog.String("outcome", "error"), slog.String("sqlstate", pe.Code))
	case errors.Is(err, context.Canceled):
		attrs = append(attrs, slog.String("outcome", "cancelled"))
	default:
		attrs = append(attrs, slog.String("outcome", "error"))
	}
	l.LogAttrs(ctx, slog.LevelInfo, "sql call", attrs...)
}
