package tasks

import (
	"context"
	"encoding/json"
	"sort"
	"time"
)

var (
	_ Lister = (*MemoryStore)(nil)
	_ Lister = (*SQLiteStore)(nil)
)

// List implements Lister.
func (m *MemoryStore) List(ctx context.Context, principal, after string, limit int) ([]*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var out []*Record
	for id, r := range m.tasks {
		if r.Principal == principal && id > after && now.Before(r.Expires()) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	for i, r := range out {
		out[i] = r.clone()
	}
	return out, nil
}

// List implements Lister. The records it returns carry no result beyond
// its isError member, nor input requests.
func (s *SQLiteStore) List(ctx context.Context, principal, after string, limit int) ([]*Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, principal, tool, status, message, created_ms, updated_ms, ttl_ms, poll_ms,
		CASE WHEN json_valid(result) AND json_extract(result, '$.isError') THEN 1 ELSE 0 END
		FROM mcpkit_tasks WHERE principal = ? AND id > ? AND expires_ms > ? ORDER BY id LIMIT ?`,
		principal, after, time.Now().UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Record
	for rows.Next() {
		var r Record
		var status string
		var created, updated, ttl, poll int64
		var isError bool
		if err := rows.Scan(&r.ID, &r.Principal, &r.Tool, &status, &r.StatusMessage, &created, &updated, &ttl, &poll, &isError); err != nil {
			return nil, err
		}
		r.Status = Status(status)
		r.CreatedAt, r.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
		r.TTL, r.PollInterval = time.Duration(ttl)*time.Millisecond, time.Duration(poll)*time.Millisecond
		if isError {
			r.Result = json.RawMessage(`{"isError":true}`)
		}
		out = append(out, &r)
	}
	return out, rows.Err()
}
