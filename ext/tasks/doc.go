// Package tasks is the Tasks extension of MCP (io.modelcontextprotocol/tasks,
// SEP-2663) for mcpkit servers and clients: a tool call that takes long
// becomes a task, a durable handle the client polls (tasks/get), feeds
// input to (tasks/update) and cancels (tasks/cancel), instead of a request
// held open for minutes.
//
// On a server, install an Extension and say which tools may or must run
// as tasks. The server decides per call: a May tool's call becomes a task
// when it still runs after its Policy's After (or when its handler calls
// Promote), for clients that declared the extension on that request; the
// others get the synchronous result, and a Must tool refuses them with
// -32021. The task is recorded in the Store before the CreateTaskResult is
// sent; the handler goes on in the background, its context cancelled by
// tasks/cancel or at the end of the task's TTL; when it asks for input
// (Request.Elicit and the other input methods) the task is input_required
// and tasks/update's answers run it again from the top, as an MRTR retry
// would. Handlers are the ordinary ones:
//
//	s := server.New(protocol.Implementation{Name: "reports", Version: "1.0.0"}, nil)
//	server.AddTool(s, &protocol.Tool{Name: "report"},
//		func(ctx context.Context, req *server.CallRequest, in reportArgs) (string, error) {
//			tasks.SetStatus(ctx, "reading the ledger")
//			return buildReport(ctx, in) // minutes; stops when ctx is cancelled
//		})
//	st, err := tasks.OpenSQLite("tasks.db", nil) // or the default MemoryStore
//	if err != nil {
//		log.Fatal(err)
//	}
//	x := tasks.New(&tasks.Options{Store: st})
//	x.SetTool("report", tasks.Policy{Mode: tasks.May, After: 3 * time.Second})
//	if err := s.Install(x); err != nil {
//		log.Fatal(err)
//	}
//	defer x.Close()
//
// Task ids are 128 random bits, bound to the principal that created the
// task (server.PrincipalFrom): another caller is told, as for an unknown
// or expired id, that the task does not exist (-32602). A MemoryStore is
// bounded by count and TTL; an SQLiteStore keeps records across restarts
// and reports the tasks a dead process left running as failed.
// Subscriptions/listen streams that list taskIds get notifications/tasks at
// each change of status.
//
// A 2025-11-25 legacy session whose client declared that revision's tasks
// capability gets the same tasks through that revision's methods
// (params.task on tools/call, tasks/get, tasks/result, tasks/list,
// tasks/cancel, notifications/tasks/status, execution.taskSupport): see
// legacy.go and the README's Tasks section for what does not map.
//
// On a client, Use declares the extension and adds the middleware that
// turns a task into the call's result: CallTool returns what the
// synchronous call would have, polling at the server's interval,
// answering input requests with the client's handlers, cancelling the
// task when the call's context is. Under Detach the call returns a
// *StartedError with the task instead, to Wait for later, from any
// process of the same principal.
package tasks
