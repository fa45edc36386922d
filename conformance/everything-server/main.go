// Command everything-server serves the conformance fixtures of package
// conformance/everything over Streamable HTTP (endpoint /mcp) or stdio, in
// both eras: revision 2026-07-28 and the initialize-handshake revisions
// 2025-11-25, 2025-06-18 and 2025-03-26. Over HTTP it also serves the
// deprecated HTTP+SSE transport, for 2024-11-05 clients, at /sse. The
// Tasks extension (io.modelcontextprotocol/tasks) is installed, with the
// fixture tools of the suite's tasks-* scenarios.
//
//	everything-server -addr 127.0.0.1:3001   # http://127.0.0.1:3001/mcp, /sse
//	everything-server -stdio
//
// -allow-origin ORIGIN (repeatable) accepts browser requests from ORIGIN,
// with CORS, on both endpoints and their protection.
//
// With -auth-issuer it is an OAuth protected resource (auth/resource), for
// tests of clients' authorization: every request needs an access token
// from that issuer for the endpoint (-public-url, or the listening URL;
// /sse beside it for HTTP+SSE) with every -auth-scope, checked as a JWT
// against the issuer's keys or, with -auth-introspection-url, by
// introspection:
//
//	everything-server -auth-issuer http://127.0.0.1:9998 -auth-scope mcp:read
//
// With -store redis://HOST:PORT/DB, replicas behind a load balancer share
// legacy sessions, SSE streams, the change feed, single-use states and tasks in
// Redis (package store/redis); they share the key that seals requestState
// too, from -state-key-file or $MCPKIT_STATE_KEY (64 hexadecimal digits).
// See deploy/.
//
//	everything-server -addr 127.0.0.1:3002 -store redis://127.0.0.1:6379/0 -state-key-file key
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/auth/resource"
	"github.com/mcpkit/mcpkit/conformance/everything"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/server"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "HTTP listen address (HOST:PORT); the endpoint is /mcp")
	useStdio := flag.Bool("stdio", false, "serve over stdin/stdout instead of HTTP")
	var a authFlags
	flag.StringVar(&a.issuer, "auth-issuer", "", "require OAuth access tokens from the authorization server `URL` (issuer identifier)")
	flag.StringVar(&a.introspectURL, "auth-introspection-url", "", "check tokens at this introspection endpoint `URL` instead of as JWTs")
	flag.StringVar(&a.clientID, "auth-client-id", "", "client `ID` at the introspection endpoint")
	flag.StringVar(&a.clientSecret, "auth-client-secret", "", "client `SECRET` at the introspection endpoint")
	flag.Func("auth-scope", "require scope `S` of every request (repeatable)", func(s string) error {
		a.scopes = append(a.scopes, s)
		return nil
	})
	flag.StringVar(&a.publicURL, "public-url", "", "the endpoint's canonical `URL` (the tokens' audience); default the listening URL")
	flag.Func("allow-origin", "also accept browser requests from `ORIGIN`, with CORS (repeatable)", func(s string) error {
		a.origins = append(a.origins, s)
		return nil
	})
	storeURL := flag.String("store", "", "share state with other replicas in the Redis at `URL` (redis://HOST:PORT/DB); default: in memory")
	keyFile := flag.String("state-key-file", "", "read the key that seals requestState from `FILE` (64 hex digits; default $"+redisstore.StateKeyEnv+", else random)")
	flag.Parse()
	if a.issuer == "" && (a.introspectURL != "" || a.clientID != "" || a.clientSecret != "" || len(a.scopes) > 0 || a.publicURL != "") {
		fmt.Fprintln(os.Stderr, "everything-server: the -auth-* and -public-url flags need -auth-issuer")
		os.Exit(2)
	}
	if a.issuer != "" && *useStdio {
		fmt.Fprintln(os.Stderr, "everything-server: -auth-issuer is for HTTP, not -stdio")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &server.Options{Logger: logger}
	var sopts streamable.Options
	key, previous, err := redisstore.ReadStateKeys(*keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "everything-server:", err)
		os.Exit(2)
	}
	opts.StateKey, opts.PreviousStateKeys = key, previous
	topts := &tasks.Options{Logger: logger}
	if *storeURL != "" {
		st, err := redisstore.Open(ctx, *storeURL, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "everything-server:", err)
			os.Exit(1)
		}
		defer st.Close()
		if key == nil {
			fmt.Fprintln(os.Stderr, "everything-server: -store needs the key replicas share: -state-key-file or $"+redisstore.StateKeyEnv)
			os.Exit(2)
		}
		st.Share(opts)
		st.ShareStreams(&sopts)
		ts := st.Tasks(nil) // every replica reads every task
		defer ts.Close()
		topts.Store = ts
	}
	if err := run(ctx, *addr, *useStdio, &a, opts, topts, &sopts, logger); err != nil {
		fmt.Fprintln(os.Stderr, "everything-server:", err)
		os.Exit(1)
	}
}

// authFlags configure the optional OAuth protection of the endpoint, and
// the origins its browser requests may come from.
type authFlags struct {
	issuer, introspectURL, clientID, clientSecret, publicURL string
	scopes                                                   []string
	origins                                                  []string
}

// protect mounts the endpoints (by path) on mux, each protected as a says
// as a resource of its own with its metadata mounted too, or as they are
// without -auth-issuer. The resource of /mcp is -public-url or the
// listening URL; another endpoint's (/sse) is its path resolved against
// that URL's directory.
func (a *authFlags) protect(mux *http.ServeMux, endpoints map[string]http.Handler, ln net.Listener) error {
	if a.issuer == "" {
		for path, endpoint := range endpoints {
			mux.Handle(path, endpoint)
		}
		return nil
	}
	base := a.publicURL
	if base == "" {
		base = "http://" + ln.Addr().String() + "/mcp"
	}
	baseURL, err := url.Parse(base)
	if err != nil {
		return err
	}
	mounted := map[string]bool{}
	mount := func(path string, h http.Handler) {
		if !mounted[path] {
			mounted[path] = true
			mux.Handle(path, h)
		}
	}
	var resources []string
	for path, endpoint := range endpoints {
		res := base
		if path != "/mcp" {
			res = baseURL.ResolveReference(&url.URL{Path: strings.TrimPrefix(path, "/")}).String()
		}
		var v resource.Verifier = &resource.JWTVerifier{Issuer: a.issuer, Resource: res}
		if a.introspectURL != "" {
			v = &resource.IntrospectionVerifier{Endpoint: a.introspectURL, ClientID: a.clientID, ClientSecret: a.clientSecret, Resource: res, Issuer: a.issuer}
		}
		h, err := resource.New(endpoint, &resource.Options{Resource: res, AuthorizationServers: []string{a.issuer}, Verifier: v, RequiredScopes: a.scopes, AllowedOrigins: a.origins})
		if err != nil {
			return err
		}
		mount(path, h)
		mount(h.MetadataPath(), h.MetadataHandler())
		mount("/.well-known/oauth-protected-resource"+path, h.MetadataHandler())
		resources = append(resources, res)
	}
	sort.Strings(resources)
	fmt.Fprintf(os.Stderr, "everything-server: access tokens from %s required for %s (scopes %s)\n", a.issuer, strings.Join(resources, ", "), strings.Join(a.scopes, " "))
	return nil
}

func run(ctx context.Context, addr string, useStdio bool, a *authFlags, opts *server.Options, topts *tasks.Options, sopts *streamable.Options, logger *slog.Logger) error {
	// Both eras: the server serves legacy clients (initialize) beside
	// modern ones by default.
	srv, tx := everything.NewWithTasks(opts, topts)
	defer srv.Close()
	defer tx.Close() // first: it cancels the tasks still running
	if useStdio {
		return stdio.Serve(ctx, srv, os.Stdin, os.Stdout, &stdio.Options{Logger: logger})
	}
	mux := http.NewServeMux()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	err = a.protect(mux, map[string]http.Handler{
		"/mcp": streamable.NewHandler(srv, &streamable.Options{Logger: logger, AllowedOrigins: a.origins, Events: sopts.Events}),
		"/sse": sse.NewHandler(srv, &sse.Options{Logger: logger, AllowedOrigins: a.origins}),
	}, ln)
	if err != nil {
		ln.Close()
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(os.Stderr, "everything-server: serving http://%s/mcp (HTTP+SSE at /sse)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close() // end listen streams gracefully, and legacy sessions, first
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
