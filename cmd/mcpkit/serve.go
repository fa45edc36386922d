package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/sqlserver"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/sse"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const serveAbout = `Serve a database as an MCP server, in both protocol eras: table schemas as
resources, a read-only query tool, describe_table and explain, the ask prompt
and completion of table and column names.

With no --db and no --dsn it serves an embedded demo database (customers,
products, orders, order lines), created on first use in the user cache
directory. --db opens an SQLite file, --dsn connects to PostgreSQL. Queries
run read-only, enforced by the database, one statement per call, within
--statement-timeout, --max-memory and --max-concurrent; --allow-writes adds
an execute tool that runs a statement only after the user confirms it.

A PostgreSQL role that can do more than read (a superuser, a member of
pg_execute_server_program, pg_read_server_files, pg_write_server_files or
pg_signal_backend, a BYPASSRLS role, a member of a superuser or BYPASSRLS
role, an owner of the served tables, or one that can execute a SECURITY
DEFINER function owned by such a role, as PUBLIC can unless revoked) is
refused, naming each privilege and function: connect as a role made for it
(see Security in the README), or pass --allow-privileged-role to serve
anyway, with a warning.

It listens on 127.0.0.1:8080 (endpoint /mcp) unless --addr says otherwise,
or speaks over stdin/stdout with --stdio. Beside /mcp it serves the
deprecated HTTP+SSE transport, for clients of revision 2024-11-05, at /sse
(--sse-path; --sse-path "" turns it off). One caller may hold a bounded
share of the streams (--max-sse-streams-per-principal,
--max-listen-streams-per-principal), and the HTTP+SSE endpoint holds at
most --max-sse-buffered of messages not yet answered.

--auth-issuer makes it an OAuth protected resource: every request needs an
access token from that authorization server, for this endpoint (audience
--public-url, or the listening URL) and with every --auth-scope; with
--allow-writes, execute also needs --auth-write-scope (default mcp:write).
Tokens are checked as JWTs against the issuer's keys, or at
--auth-introspection-url, whose answer must name this endpoint in aud
(unless --auth-introspection-allow-no-audience). The metadata clients discover the server by is
served at /.well-known/oauth-protected-resource/mcp. The HTTP+SSE endpoint
is protected the same way, as a resource of its own: its URL is --sse-path
resolved against the endpoint's (http://127.0.0.1:8080/sse), its metadata
at /.well-known/oauth-protected-resource/sse.

It refuses a non-loopback --addr without --auth-issuer unless given
--insecure-no-auth; with --auth-issuer there it needs --public-url and
either --tls-cert/--tls-key (HTTPS, HTTP/2 on) or an https --public-url (a
TLS-terminating proxy in front).

Replicas behind a load balancer share their state with --store
redis://HOST:PORT/DB: legacy sessions and their SSE streams, change
notifications, single-use confirmations and the DPoP replay cache (see
"Running many replicas" in the README). They must share the key that seals request state too:
--state-key-file (64 hexadecimal digits, mode 600; further lines are previous
keys, which still open state sealed before a rotation) or $MCPKIT_STATE_KEY.
Each replica polls the database for changes itself.`

func runServe(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprintln(e.Stdout, "Usage:\n  mcpkit serve sql [flags]\n\nSubcommands:\n  sql   serve a database (run mcpkit serve sql --help)")
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] != "sql" {
		return usageError(e, "serve", fmt.Sprintf("unknown server %q (serve sql is the one there is)", args[0]))
	}
	fs := flag.NewFlagSet("serve sql", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (endpoint /mcp)")
	useStdio := fs.Bool("stdio", false, "serve over stdin/stdout instead of HTTP")
	ssePath := fs.String("sse-path", "/sse", "serve the deprecated HTTP+SSE transport (2024-11-05 clients) at `PATH`; \"\" turns it off")
	var dbs listFlag
	fs.Var(&dbs, "db", "serve the SQLite database at `PATH`; NAME=PATH or NAME=postgres://... (repeatable) serves several databases by name")
	dsn := fs.String("dsn", "", "serve the PostgreSQL database at `postgres://...`")
	config := fs.String("config", "", "serve the databases a JSON `FILE` names, each with its own limits (see below)")
	var schemas listFlag
	fs.Var(&schemas, "schema", "serve the PostgreSQL schema `NAME` (repeatable; default: every schema on the role's search_path)")
	callerClaims := fs.Bool("caller-claims", false, "run each call with the caller's token claims in request.jwt.claims, for row-level security (PostgreSQL, with --auth-issuer)")
	roleClaim := fs.String("role-claim", "", "run each call as the role --role maps the caller's token claim `CLAIM` to (PostgreSQL, with --auth-issuer)")
	var roles listFlag
	fs.Var(&roles, "role", "map a --role-claim value to a PostgreSQL role, `VALUE=ROLE` (repeatable; * for every other value)")
	logRequests := fs.Bool("log-requests", false, "log one line per call to stderr: principal, tool, statement digest, rows, duration, outcome")
	allowWrites := fs.Bool("allow-writes", false, "add the execute tool (each write confirmed by the user first)")
	maxRows := fs.Int("max-rows", 1000, "return at most `N` rows per query")
	maxBytes := fs.Int("max-result-bytes", 4<<20, "return at most `N` bytes of rows per query")
	timeout := fs.Duration("statement-timeout", 30*time.Second, "cancel a statement after `DURATION`")
	sample := fs.Int("sample-rows", 5, "show `N` sample rows in table resources")
	poll := fs.Duration("poll", 2*time.Second, "look for data changes every `DURATION`")
	maxMemory := byteSize(sqlserver.DefaultMaxMemory)
	fs.Var(&maxMemory, "max-memory", "bound the memory statements use to `SIZE` (bytes, or with KiB, MiB, GiB)")
	maxConcurrent := fs.Int("max-concurrent", sqlserver.DefaultMaxConcurrent, "run at most `N` statements at once; more wait, then are refused as busy")
	privileged := fs.Bool("allow-privileged-role", false, "serve PostgreSQL even as a role that can do more than read (warns on every start)")
	origins := listFlag{}
	fs.Var(&origins, "allow-origin", "also accept browser requests from `ORIGIN` and turn CORS on for it, so that its pages can call the server (repeatable)")
	storeURL := fs.String("store", "", "share state with other replicas in the Redis at `URL` (redis://HOST:PORT/DB); default: in memory")
	keyFile := fs.String("state-key-file", "", "read the key that seals request state from `FILE` (64 hex digits; default $"+redisstore.StateKeyEnv+", else random)")
	var sec serveSecurity
	sec.register(fs)
	var limits serveLimits
	limits.register(fs)
	var tf serveTasks
	tf.register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(e.Stdout, "Usage:\n  mcpkit serve sql [flags]\n\n%s\n\nFlags:\n", serveAbout)
			fs.SetOutput(e.Stdout)
			fs.PrintDefaults()
			return exitOK
		}
		return usageError(e, "serve sql", err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(e, "serve sql", fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *useStdio && set["sse-path"]:
		return usageError(e, "serve sql", "--sse-path is for HTTP; --stdio serves the process that started it")
	case *useStdio && *storeURL != "":
		return usageError(e, "serve sql", "--store is for replicas behind a load balancer (HTTP); --stdio serves the process that started it")
	case *ssePath != "" && (!strings.HasPrefix(*ssePath, "/") || *ssePath == "/mcp" || strings.HasPrefix(*ssePath, "/.well-known/")):
		return usageError(e, "serve sql", fmt.Sprintf("--sse-path %q is not a path of its own (one starting with /, not /mcp)", *ssePath))
	}
	if err := sec.check(*addr, *useStdio, set); err != nil {
		return usageError(e, "serve sql", err.Error())
	}
	if err := limits.check(*useStdio, *ssePath, set); err != nil {
		return usageError(e, "serve sql", err.Error())
	}
	if err := tf.check(set); err != nil {
		return usageError(e, "serve sql", err.Error())
	}
	roleMapping, err := roleMap(roles)
	switch {
	case err != nil:
		return usageError(e, "serve sql", err.Error())
	case (*roleClaim == "") != (len(roles) == 0):
		return usageError(e, "serve sql", "--role-claim and --role go together: the claim, and the roles its values map to")
	case (*callerClaims || *roleClaim != "") && (!sec.authOn() || *useStdio):
		return usageError(e, "serve sql", "--caller-claims and --role-claim take the caller's identity from its access token: they need --auth-issuer (and HTTP)")
	}
	tlsConf, err := sec.tlsConfig()
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
		return exitFailed
	}
	writeScope := ""
	if sec.authOn() && !*useStdio {
		if err := discoverIssuer(ctx, sec.issuer); err != nil {
			fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
			return exitUnreachable
		}
		writeScope = sec.writeScope
	}
	logger := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	base := sqlserver.Options{
		AllowWrites: *allowWrites, MaxRows: *maxRows, MaxResultBytes: *maxBytes,
		StatementTimeout: *timeout, SampleRows: *sample, PollInterval: *poll,
		MaxMemory: int64(maxMemory), MaxConcurrent: *maxConcurrent, AllowPrivilegedRole: *privileged, Logger: logger,
		WriteScope: writeScope, FlagNames: true, Schemas: schemas, CallerClaims: *callerClaims, RoleClaim: *roleClaim, Roles: roleMapping,
	}
	if *logRequests {
		base.RequestLog = slog.New(slog.NewJSONHandler(e.Stderr, nil))
	}
	if tf.after > 0 {
		base.Status = tasks.SetStatus // a query's progress is its task's status message
	}
	served, err := databases(base, dbs, *dsn, *config)
	if err != nil {
		return usageError(e, "serve sql", err.Error())
	}
	var opened []*sqlserver.DB
	defer func() {
		for _, d := range opened {
			d.Close()
		}
	}()
	for i := range served {
		d, err := sqlserver.Open(ctx, &served[i])
		if err != nil {
			if len(served) > 1 {
				err = fmt.Errorf("database %s: %w", served[i].Name, err)
			}
			fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
			var pe *sqlserver.PrivilegeError
			if errors.As(err, &pe) {
				return exitFailed
			}
			return exitUnreachable
		}
		opened = append(opened, d)
	}
	chooseProcs(e, served, !*useStdio, runtime.GOMAXPROCS(0))
	coreOpts := &server.Options{
		Instructions:                 "A SQL database. Read the schema resources (or describe_table), then answer questions with the query tool; the ask prompt builds a question for a model.",
		Logger:                       logger,
		MaxListenStreamsPerPrincipal: limits.listenStreams,
	}
	var streamOpts streamable.Options
	if coreOpts.StateKey, coreOpts.PreviousStateKeys, err = redisstore.ReadStateKeys(*keyFile); err != nil {
		return usageError(e, "serve sql", err.Error())
	}
	var shared *redisstore.Store
	if *storeURL != "" {
		if coreOpts.StateKey == nil {
			return usageError(e, "serve sql", "--store needs the key replicas share: --state-key-file or $"+redisstore.StateKeyEnv)
		}
		st, err := redisstore.Open(ctx, *storeURL, nil)
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
			return exitUnreachable
		}
		defer st.Close()
		shared = st
		st.Share(coreOpts)
		st.ShareStreams(&streamOpts)
		sec.replay = st.OnceStore()
	}
	core := server.New(protocol.Implementation{Name: "mcpkit-sql", Title: "mcpkit database server", Version: version()}, coreOpts)
	sqlserver.RegisterAll(core, opened...)
	defer core.Close()
	tx, taskStore, closeTasks, err := tf.open(*addr, *useStdio, served, *maxBytes, shared)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
		return exitFailed
	}
	defer closeTasks()
	if err := installTasks(core, tx); err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
		return exitFailed
	}
	if tx != nil {
		defer tx.Close() // before the store closes: running tasks end cancelled
	}
	var handler transport.Handler = core
	if e.tel != nil {
		handler = transport.Use(core, e.tel.ServerMiddleware())
	}

	if *useStdio {
		if err := stdio.Serve(ctx, handler, e.Stdin, e.Stdout, &stdio.Options{Logger: logger}); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
		return exitUnreachable
	}
	mux := http.NewServeMux()
	endpoints := map[string]http.Handler{"/mcp": streamable.NewHandler(handler, &streamable.Options{Logger: logger, AllowedOrigins: origins, Events: streamOpts.Events})}
	if *ssePath != "" {
		endpoints[*ssePath] = sse.NewHandler(handler, &sse.Options{Logger: logger, AllowedOrigins: origins,
			MaxStreamsPerPrincipal: limits.sseStreams, MaxBufferedBytes: int64(limits.sseBuffered)})
	}
	resourceURL := sec.resourceURL(ln)
	if sec.authOn() {
		if err := sec.protect(mux, endpoints, resourceURL, *allowWrites, origins, logger); err != nil {
			ln.Close()
			fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
			return exitFailed
		}
	} else {
		for path, h := range endpoints {
			mux.Handle(path, h)
		}
	}
	var root http.Handler = mux
	if e.tel != nil {
		root = e.tel.HTTPHandler(mux) // outside authorization: 401s are measured too
	}
	hs := &http.Server{Handler: root, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: tlsConf}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	also := ""
	if *ssePath != "" {
		also = "HTTP+SSE for 2024-11-05 clients at " + *ssePath + "; "
	}
	fmt.Fprintf(e.Stderr, "mcpkit serve sql: serving %s on %s://%s/mcp (%sCtrl-C to stop)\n", describeDBs(served), scheme, ln.Addr(), also)
	if sec.authOn() {
		resources := resourceURL
		if *ssePath != "" {
			if u, err := endpointURL(resourceURL, *ssePath); err == nil {
				resources += " (HTTP+SSE: " + u + ")"
			}
		}
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: access tokens from %s required, for %s\n", sec.issuer, resources)
	} else if sec.insecureNoAuth {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: warning: no authorization (--insecure-no-auth): whoever reaches %s can use the database\n", ln.Addr())
	}
	if tx != nil {
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: queries running over %s become tasks, kept %s\n", tf.after, taskStore)
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		fmt.Fprintf(e.Stderr, "mcpkit serve sql: %v\n", err)
		return exitFailed
	case <-ctx.Done():
	}
	if tx != nil {
		tx.Close() // cancel running tasks (their statements) and wait for them
	}
	core.Close() // end listen streams (closing result) and legacy sessions first
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-errc
	return exitOK
}

func describeDB(db, dsn string) string {
	switch {
	case dsn != "":
		if i := strings.Index(dsn, "@"); i >= 0 {
			return "PostgreSQL " + dsn[i+1:]
		}
		return "PostgreSQL"
	case db != "":
		return "SQLite " + db
	}
	return "the demo database"
}

// byteSize is a flag holding a size in bytes: a number, optionally with a
// binary (KiB, MiB, GiB) or decimal (kB, MB, GB) unit.
type byteSize int64

func (b *byteSize) String() string {
	switch n := int64(*b); {
	case n > 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprint(int64(*b))
}

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		scale  int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, scale := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, scale = strings.TrimSpace(rest), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/scale {
		return fmt.Errorf("want a positive size such as 268435456, 256MiB or 1GiB, got %q", s)
	}
	*b = byteSize(n * scale)
	return nil
}
