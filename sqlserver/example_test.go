package sqlserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/sqlserver"
	"github.com/mcpkit/mcpkit/transport"
)

func Example() {
	dir, err := os.MkdirTemp("", "sqlserver-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.db")
	if err := sqlserver.EnsureDemo(path); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	db, err := sqlserver.Open(ctx, &sqlserver.Options{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	s := server.New(protocol.Implementation{Name: "sql", Version: "1.0.0"}, nil)
	db.Register(s)

	res, err := s.Serve(ctx, &transport.Request{Message: &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "tools/list",
		Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)}})
	if err != nil {
		log.Fatal(err)
	}
	list := res.(*protocol.ListToolsResult)
	fmt.Println(db.Dialect())
	for _, t := range list.Tools {
		fmt.Println(t.Name)
	}
	// Output:
	// SQLite
	// describe_table
	// explain
	// query
	// search_schema
}
