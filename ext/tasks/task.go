package tasks

import (
	"encoding/json"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// ID is the extension's identifier, the key it is declared and advertised
// under in the capabilities' extensions map.
const ID = "io.modelcontextprotocol/tasks"

// Methods and notifications of the extension.
const (
	MethodGet          = protocol.MethodTasksGet
	MethodUpdate       = protocol.MethodTasksUpdate
	MethodCancel       = protocol.MethodTasksCancel
	NotificationStatus = "notifications/tasks"
	// ResultTypeTask is the resultType of a CreateTaskResult.
	ResultTypeTask protocol.ResultType = "task"
)

// Status is a task's status.
type Status string

// The statuses of a task. Completed, Failed and Cancelled are terminal.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is a final status.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Task is a task as the wire carries it: a CreateTaskResult (without
// Result, Error and InputRequests), a tasks/get result and the params of
// notifications/tasks (the extension's DetailedTask).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is the task's time to live from its creation, in
	// milliseconds; nil (null) means unlimited.
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs is how often, in milliseconds, the server would
	// like to be asked; 0 leaves it out.
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
	// InputRequests are the outstanding requests for input of an
	// input_required task, by key (MRTR's inputRequests).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is a completed task's result (for tools/call, the
	// CallToolResult, isError included).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is a failed task's JSON-RPC error.
	Error *jsonrpc.Error `json:"error,omitempty"`
}

// taskResult is Task as a result: tasks/get's (resultType complete) and
// the CreateTaskResult (resultType task).
type taskResult struct {
	protocol.ResultHeader
	Task
}

// Record is a task as a Store keeps it.
type Record struct {
	// ID is the task's handle: 128 random bits, base64url.
	ID string
	// Principal is the caller that created the task
	// (server.PrincipalFrom): only it may read, update or cancel it.
	Principal string
	// Tool is the tool the task runs.
	Tool          string
	Status        Status
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// TTL is the task's time to live from CreatedAt; the store forgets
	// it at CreatedAt+TTL.
	TTL          time.Duration
	PollInterval time.Duration
	// InputRequests are the outstanding input requests (input_required).
	InputRequests map[string]json.RawMessage
	// Result is the encoded result (completed).
	Result json.RawMessage
	// Error is the JSON-RPC error (failed).
	Error *jsonrpc.Error
}

// Expires returns when the record is forgotten.
func (r *Record) Expires() time.Time { return r.CreatedAt.Add(r.TTL) }

// clone returns a copy of r that shares nothing mutable with it.
func (r *Record) clone() *Record {
	c := *r
	if r.InputRequests != nil {
		c.InputRequests = make(map[string]json.RawMessage, len(r.InputRequests))
		for k, v := range r.InputRequests {
			c.InputRequests[k] = v
		}
	}
	if r.Error != nil {
		e := *r.Error
		c.Error = &e
	}
	return &c
}

// timeFormat is RFC 3339 in UTC with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// wire returns the record as the modern wire shows it.
func (r *Record) wire() Task {
	ttl := r.TTL.Milliseconds()
	t := Task{
		TaskID:         r.ID,
		Status:         r.Status,
		StatusMessage:  r.StatusMessage,
		CreatedAt:      r.CreatedAt.UTC().Format(timeFormat),
		LastUpdatedAt:  r.UpdatedAt.UTC().Format(timeFormat),
		TTLMs:          &ttl,
		PollIntervalMs: r.PollInterval.Milliseconds(),
	}
	switch r.Status {
	case InputRequired:
		t.InputRequests = r.InputRequests
	case Completed:
		t.Result = r.Result
	case Failed:
		t.Error = r.Error
	}
	return t
}
