package browsertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The test hosts: names Chromium resolves to 127.0.0.1, so that pages and
// servers have origins of their own that are not loopback origins (which
// mcpkit accepts without a list).
const (
	appHost = "app.test"
	mcpHost = "mcp.test"
)

// chromium returns the browser to drive, skipping the test when none is
// named.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("MCPKIT_CHROMIUM")
	if path == "" {
		t.Skip("MCPKIT_CHROMIUM is not set; run `make browser` to install Chromium and run the browser tests")
	}
	return path
}

// newBrowser starts headless Chromium for the test (stopped, with its
// process, when the test ends) and returns a context for a tab in it.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append([]chromedp.ExecAllocatorOption{},
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Sandboxed iframes (the query view) in the page's process, where
		// DOM queries reach them.
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("host-resolver-rules", "MAP "+appHost+" 127.0.0.1, MAP "+mcpHost+" 127.0.0.1, EXCLUDE localhost"),
		chromedp.WindowSize(1200, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // kills the browser process it started
	})
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	if err := chromedp.Do(tctx); err != nil { // starts the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	return tctx
}

// serve serves h on a loopback port until the test ends and returns the
// port.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
