package everything

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
)

// NewWithTasks returns the everything-server with the Tasks extension
// installed and its fixture tools (greet, slow_compute, failing_job,
// protocol_error_job, confirm_delete, multi_input, test_tool_with_task),
// which the tasks-* scenarios call. Close the extension before the server.
func NewWithTasks(opts *server.Options, topts *tasks.Options) (*server.Server, *tasks.Extension) {
	s := New(opts)
	x := tasks.New(topts)
	addTaskTools(s, x)
	if err := s.Install(x); err != nil {
		panic("everything: installing tasks: " + err.Error())
	}
	return s, x
}

var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Go ahead?"}},"required":["confirm"]}`)

func addTaskTools(s *server.Server, x *tasks.Extension) {
	type greetArgs struct {
		Name string `json:"name" description:"Who to greet"`
	}
	server.AddTool(s, &protocol.Tool{Name: "greet", Description: "Greets by name, at once (never a task)"},
		func(ctx context.Context, req *server.CallRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	type computeArgs struct {
		Seconds float64 `json:"seconds" description:"How long the computation takes" jsonschema:"minimum=0,maximum=3600"`
		Label   string  `json:"label,omitempty" description:"A label for the result"`
	}
	server.AddTool(s, &protocol.Tool{Name: "slow_compute", Description: "Computes for the given seconds; a task when it takes any time"},
		func(ctx context.Context, req *server.CallRequest, in computeArgs) (string, error) {
			if in.Seconds > 0 {
				tasks.Promote(ctx)
			}
			if err := sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return "", err
			}
			return fmt.Sprintf("Computed %s in %gs", in.Label, in.Seconds), nil
		})
	x.SetTool("slow_compute", tasks.Policy{Mode: tasks.May})

	server.AddTool(s, &protocol.Tool{Name: "failing_job", Description: "Runs as a task for about a second, then fails with a tool error"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			tasks.Promote(ctx)
			if err := sleep(ctx, time.Second); err != nil {
				return "", err
			}
			return "", errors.New("the job failed: the input could not be processed")
		})
	x.SetTool("failing_job", tasks.Policy{Mode: tasks.Must})

	server.AddTool(s, &protocol.Tool{Name: "protocol_error_job", Description: "Runs as a task, then fails with a JSON-RPC error"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			tasks.Promote(ctx)
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "", protocol.InternalError("the job's backend is unavailable")
		})
	x.SetTool("protocol_error_job", tasks.Policy{Mode: tasks.May})

	type deleteArgs struct {
		Filename string `json:"filename" description:"The file to delete"`
	}
	server.AddTool(s, &protocol.Tool{Name: "confirm_delete", Description: "Becomes a task, then asks the user to confirm the deletion"},
		func(ctx context.Context, req *server.CallRequest, in deleteArgs) (string, error) {
			tasks.Promote(ctx)
			res, err := req.Elicit("confirm_delete", &protocol.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: confirmSchema})
			if err != nil {
				return "", err
			}
			if res.Action == protocol.ElicitAccept && res.Content["confirm"] == true {
				return "Deleted " + in.Filename, nil
			}
			return "Kept " + in.Filename, nil
		})
	x.SetTool("confirm_delete", tasks.Policy{Mode: tasks.May})

	server.AddTool(s, &protocol.Tool{Name: "multi_input", Description: "Becomes a task, then asks two questions at once"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			tasks.Promote(ctx)
			schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`)
			first, err1 := req.Elicit("first", &protocol.ElicitParams{Message: "First answer?", RequestedSchema: schema})
			second, err2 := req.Elicit("second", &protocol.ElicitParams{Message: "Second answer?", RequestedSchema: schema})
			if err := errors.Join(err1, err2); err != nil {
				if errors.Is(err, server.ErrInputRequired) {
					return "", server.ErrInputRequired
				}
				return "", err
			}
			return fmt.Sprintf("Got %v and %v", first.Content["name"], second.Content["name"]), nil
		})
	x.SetTool("multi_input", tasks.Policy{Mode: tasks.May})

	server.AddTool(s, &protocol.Tool{Name: "test_tool_with_task", Description: "Asks the user's name synchronously, then greets as a task"},
		func(ctx context.Context, req *server.CallRequest, _ NoArgs) (string, error) {
			res, err := req.Elicit("user_name", &protocol.ElicitParams{Message: "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return "", err
			}
			tasks.Promote(ctx)
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})
	x.SetTool("test_tool_with_task", tasks.Policy{Mode: tasks.Must})
}
