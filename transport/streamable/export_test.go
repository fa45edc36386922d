package streamable

// For the external tests (bench_test.go, which serves the everything
// fixture; that fixture imports this package).
var (
	StandardHeaders = standardHeaders
	CallBody        = callBody
	RPC             = rpc
)
