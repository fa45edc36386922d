// Package loadgen is a load generator for MCP servers: it calls one tool
// over and over from many concurrent workers, over Streamable HTTP or a
// stdio stream, in either protocol era, verifies every response and
// reports throughput and latency percentiles. It backs "mcpkit bench".
//
// Each response is checked: it must answer the request's id with a result
// (not an error, not a tool error), and when the tool is "echo" with a
// "text" argument its first content item must carry that text. A response
// that fails a check counts as an error and as a mismatch.
//
//	res, err := loadgen.Run(ctx, loadgen.Target{URL: "http://127.0.0.1:3001/mcp"}, &loadgen.Options{
//		Concurrency: 16,
//		Duration:    5 * time.Second,
//		Warmup:      time.Second,
//		Tool:        "echo",
//		Args:        json.RawMessage(`{"text":"hello"}`),
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Printf("%.0f req/s, p99 %v, %d errors\n", res.ReqPerSec, res.P99, res.Errors)
package loadgen
