package check_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/check"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Check the everything-server, which serves both eras, over Streamable HTTP.
func Example() {
	core := everything.New(nil)
	defer core.Close()
	srv := httptest.NewServer(streamable.NewHandler(core, nil))
	defer srv.Close()

	rep, err := check.Run(context.Background(), &check.Options{URL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("era:", rep.Era, "ok:", rep.OK())
	for _, r := range rep.Results[:4] {
		fmt.Println(r.Status, r.ID)
	}
	// Output:
	// era: dual-era ok: true
	// PASS era.detect
	// PASS discover.answers
	// PASS discover.result-type
	// PASS discover.supported-versions
}
