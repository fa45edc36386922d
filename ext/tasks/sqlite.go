package tasks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"modernc.org/sqlite"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// SQLiteStore is a Store in an SQLite file (modernc.org/sqlite, no cgo),
// so that task records outlive the process: a completed task keeps its
// result until its TTL ends, whatever restarts in between. One process
// holds the file at a time (it is opened in exclusive locking mode).
//
// When it is opened, the tasks the last process left working or waiting
// for input, whose handlers died with it, are marked failed with an error
// that says so: a task is never left working forever.
type SQLiteStore struct {
	db  *sql.DB
	max int
}

// SQLiteOptions configure an SQLiteStore.
type SQLiteOptions struct {
	// Max bounds the unexpired tasks held at once; 0 means 100,000.
	Max int
}

// ErrInterrupted is the message of the error of a task whose process
// ended while it ran (see SQLiteStore).
const ErrInterrupted = "the server stopped while the task was running; its work is lost: call the tool again"

const sqliteSchema = `CREATE TABLE IF NOT EXISTS mcpkit_tasks (
	id TEXT PRIMARY KEY,
	principal TEXT NOT NULL,
	tool TEXT NOT NULL,
	status TEXT NOT NULL,
	message TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	ttl_ms INTEGER NOT NULL,
	poll_ms INTEGER NOT NULL,
	expires_ms INTEGER NOT NULL,
	input BLOB,
	result BLOB,
	error BLOB
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mcpkit_tasks_expires ON mcpkit_tasks (expires_ms);`

// OpenSQLite opens (creating it when missing) the task store in the file
// at path, and marks the tasks an earlier process left running failed.
func OpenSQLite(path string, opts *SQLiteOptions) (*SQLiteStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs}
	dsn := u.String() + "?_pragma=busy_timeout(2000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=locking_mode(EXCLUSIVE)"
	conn, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1) // one writer: updates are serialized here
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	st := &SQLiteStore{db: db, max: 100_000}
	if opts != nil && opts.Max > 0 {
		st.max = opts.Max
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("tasks: opening %s: %w", path, err)
	}
	if err := st.recover(ctx, time.Now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("tasks: opening %s: %w", path, err)
	}
	return st, nil
}

// recover marks the unfinished tasks failed.
func (s *SQLiteStore) recover(ctx context.Context, now time.Time) error {
	e, _ := json.Marshal(jsonrpc.NewError(protocol.CodeInternalError, ErrInterrupted, nil))
	_, err := s.db.ExecContext(ctx, `UPDATE mcpkit_tasks SET status = ?, message = ?, error = ?, input = NULL, updated_ms = ?
		WHERE status IN (?, ?)`, string(Failed), ErrInterrupted, e, now.UnixMilli(), string(Working), string(InputRequired))
	return err
}

// Close closes the file.
func (s *SQLiteStore) Close() error { return s.db.Close() }

// Create implements Store.
func (s *SQLiteStore) Create(ctx context.Context, r *Record) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UnixMilli()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mcpkit_tasks WHERE expires_ms > ?`, now).Scan(&n); err != nil {
		return err
	}
	if n >= s.max {
		return ErrFull
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mcpkit_tasks WHERE expires_ms <= ?`, now); err != nil {
		return err
	}
	if err := insertRecord(ctx, tx, r); err != nil {
		return err
	}
	return tx.Commit()
}

func insertRecord(ctx context.Context, tx *sql.Tx, r *Record) error {
	input, result, rerr, err := encodeParts(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO mcpkit_tasks
		(id, principal, tool, status, message, created_ms, updated_ms, ttl_ms, poll_ms, expires_ms, input, result, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Principal, r.Tool, string(r.Status), r.StatusMessage, r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli(),
		r.TTL.Milliseconds(), r.PollInterval.Milliseconds(), r.Expires().UnixMilli(), input, result, rerr)
	return err
}

func encodeParts(r *Record) (input, result, rerr []byte, err error) {
	if r.InputRequests != nil {
		if input, err = json.Marshal(r.InputRequests); err != nil {
			return
		}
	}
	if r.Result != nil {
		result = r.Result
	}
	if r.Error != nil {
		if rerr, err = json.Marshal(r.Error); err != nil {
			return
		}
	}
	return
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getRecord(ctx context.Context, q querier, id string) (*Record, error) {
	var r Record
	var status string
	var created, updated, ttl, poll int64
	var input, result, rerr []byte
	err := q.QueryRowContext(ctx, `SELECT id, principal, tool, status, message, created_ms, updated_ms, ttl_ms, poll_ms, input, result, error
		FROM mcpkit_tasks WHERE id = ? AND expires_ms > ?`, id, time.Now().UnixMilli()).
		Scan(&r.ID, &r.Principal, &r.Tool, &status, &r.StatusMessage, &created, &updated, &ttl, &poll, &input, &result, &rerr)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Status = Status(status)
	r.CreatedAt, r.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	r.TTL, r.PollInterval = time.Duration(ttl)*time.Millisecond, time.Duration(poll)*time.Millisecond
	if len(input) > 0 {
		if err := json.Unmarshal(input, &r.InputRequests); err != nil {
			return nil, fmt.Errorf("tasks: stored input requests of %s: %w", id, err)
		}
	}
	if len(result) > 0 {
		r.Result = json.RawMessage(result)
	}
	if len(rerr) > 0 {
		r.Error = new(jsonrpc.Error)
		if err := json.Unmarshal(rerr, r.Error); err != nil {
			return nil, fmt.Errorf("tasks: stored error of %s: %w", id, err)
		}
	}
	return &r, nil
}

// Get implements Store.
func (s *SQLiteStore) Get(ctx context.Context, id string) (*Record, error) {
	return getRecord(ctx, s.db, id)
}

// Update implements Store.
func (s *SQLiteStore) Update(ctx context.Context, id string, f func(*Record) error) (*Record, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r, err := getRecord(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := f(r); err != nil {
		return nil, err
	}
	r.ID = id
	input, result, rerr, err := encodeParts(r)
	if err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE mcpkit_tasks SET status = ?, message = ?, updated_ms = ?, ttl_ms = ?, poll_ms = ?, expires_ms = ?,
		input = ?, result = ?, error = ? WHERE id = ?`,
		string(r.Status), r.StatusMessage, r.UpdatedAt.UnixMilli(), r.TTL.Milliseconds(), r.PollInterval.Milliseconds(),
		r.Expires().UnixMilli(), input, result, rerr, id)
	if err != nil {
		return nil, err
	}
	return r, tx.Commit()
}

// Sweep implements Store.
func (s *SQLiteStore) Sweep(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM mcpkit_tasks WHERE expires_ms <= ?`, now.UnixMilli())
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
