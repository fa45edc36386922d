package tasks_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/inmemory"
)

// A tool that takes a while becomes a task for a client that declared the
// extension; the client's middleware polls it to its end, and CallTool
// returns the result as if the call had been synchronous.
func Example() {
	s := server.New(protocol.Implementation{Name: "reports", Version: "1.0.0"}, nil)
	type reportArgs struct {
		Year int `json:"year"`
	}
	server.AddTool(s, &protocol.Tool{Name: "report", Description: "The year's report"},
		func(ctx context.Context, req *server.CallRequest, in reportArgs) (string, error) {
			tasks.SetStatus(ctx, "reading the ledger")
			select {
			case <-ctx.Done(): // tasks/cancel, or the end of the task's TTL
				return "", ctx.Err()
			case <-time.After(300 * time.Millisecond): // the long work
			}
			return fmt.Sprintf("Report for %d: all accounts balance.", in.Year), nil
		})
	x := tasks.New(nil)
	x.SetTool("report", tasks.Policy{Mode: tasks.May, After: 100 * time.Millisecond})
	if err := s.Install(x); err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()

	ctx := context.Background()
	o := &client.Options{}
	tasks.Use(o, &tasks.ClientOptions{MinPoll: 50 * time.Millisecond})
	sess, err := client.New(protocol.Implementation{Name: "agent", Version: "1.0.0"}, o).Connect(ctx, inmemory.New(s, nil), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	became := false
	res, err := sess.CallTool(tasks.WithStatus(ctx, func(t *tasks.Task) { became = true }), "report", map[string]any{"year": 2025}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a task:", became)
	fmt.Println(res.Content[0].(*protocol.TextContent).Text)
	// Output:
	// a task: true
	// Report for 2025: all accounts balance.
}
