package sse

// What the tests of package sse_test share with this package's: they
// import package client, which imports this package.
var (
	TestServer = testServer
	ServeHTTP  = serveHTTP
	CheckLeaks = checkLeaks
)

const (
	TestVersion = version
	Wait        = wait
)
