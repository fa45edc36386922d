package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/auth"
)

// clientSecretEnv names the environment variable that may hold the
// pre-registered client's secret (a flag's value is visible to other
// users in the process list).
const clientSecretEnv = "MCPKIT_CLIENT_SECRET"

// authFlags are the authorization flags of every subcommand that connects.
type authFlags struct {
	clientID, clientSecret, clientIssuer string
	noBrowser                            bool
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.clientID, "client-id", "", "log in as the pre-registered OAuth client `ID` instead of registering one (HTTP targets)")
	fs.StringVar(&a.clientSecret, "client-secret", "", "the pre-registered client's `SECRET`; prefer $"+clientSecretEnv+", which the process list does not show")
	fs.StringVar(&a.clientIssuer, "client-issuer", "", "send the pre-registered client's credentials only to the authorization server `ISSUER`")
	fs.BoolVar(&a.noBrowser, "no-browser", false, "to log in, print the authorization URL without opening a browser")
}

func (a *authFlags) check() error {
	if a.clientID == "" && (a.clientSecret != "" || a.clientIssuer != "") {
		return errors.New("--client-secret and --client-issuer need --client-id")
	}
	return nil
}

// secret returns the client secret: the flag's, else the environment's.
func (a *authFlags) secret() string {
	if a.clientSecret != "" {
		return a.clientSecret
	}
	if a.clientID == "" {
		return ""
	}
	return os.Getenv(clientSecretEnv)
}

// authStore returns the store of the tokens: the file under the user's
// configuration directory, else (no such directory) memory for this run.
func authStore() auth.TokenStore {
	path, err := auth.DefaultFileStorePath()
	if err != nil {
		return auth.NewMemoryStore()
	}
	return auth.NewFileStore(path)
}

// httpClient returns the HTTP client of an HTTP target: one that logs in
// when the server asks (OAuth, as the MCP specification says), or nil (the
// default client) when --header gives the Authorization itself.
func (s *sub) httpClient() *http.Client {
	if s.c.headers.h.Get("Authorization") != "" {
		return nil
	}
	tr := auth.NewTransport(&auth.Options{
		ClientID:     s.c.auth.clientID,
		ClientSecret: s.c.auth.secret(),
		ClientIssuer: s.c.auth.clientIssuer,
		ClientName:   "mcpkit",
		Authorizer:   &auth.LoopbackAuthorizer{Out: statusWriter{s.status}, NoBrowser: s.c.auth.noBrowser},
		Store:        authStore(),
	})
	return &http.Client{Transport: tr}
}

// statusWriter writes to stderr after clearing the progress line.
type statusWriter struct{ s *status }

func (w statusWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.clearLocked()
	return w.s.w.Write(p)
}

const authAbout = `Show or forget the authorizations mcpkit keeps.

When an HTTP server asks for authorization, mcpkit logs in with OAuth: it
prints the authorization URL on stderr, opens it with $BROWSER when set
(else the platform's opener, on Linux only in a graphical session; not at
all with --no-browser), and receives the redirect on a loopback port. The
tokens, and the client registrations made with the authorization servers,
are kept in ` + "`mcpkit/auth.json`" + ` under the user's configuration directory
(mode 0600); later runs reuse them and refresh them when they expire.

status lists the stored tokens (of TARGET, or all): resource, issuer,
expiry and scopes, never the tokens themselves. logout forgets the tokens
of TARGET; logout --all forgets every token and client registration.`

func authUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  mcpkit auth status [--json] [TARGET]\n  mcpkit auth logout TARGET\n  mcpkit auth logout --all\n\n%s\n", authAbout)
	if path, err := auth.DefaultFileStorePath(); err == nil {
		fmt.Fprintf(w, "\nToken file: %s\n", path)
	}
}

func runAuth(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		return usageError(e, "auth", "missing status or logout")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		authUsage(e.Stdout)
		return exitOK
	case "status", "logout":
	default:
		return usageError(e, "auth", fmt.Sprintf("unknown action %q (status or logout)", args[0]))
	}
	action := args[0]
	fs := flag.NewFlagSet("auth "+action, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print machine-readable JSON")
	all := fs.Bool("all", false, "forget every token and client registration")
	if err := fs.Parse(reorder(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			authUsage(e.Stdout)
			return exitOK
		}
		return usageError(e, "auth", err.Error())
	}
	pos := fs.Args()
	if len(pos) > 1 {
		return usageError(e, "auth", fmt.Sprintf("unexpected argument %q", pos[1]))
	}
	var target string
	if len(pos) == 1 {
		t, _, err := parseTarget(pos, nil, false)
		if err != nil {
			return usageError(e, "auth", err.Error())
		}
		target = t.URL
	}
	store, path, err := fileStore()
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit auth: %s\n", oneLine(err.Error()))
		return exitFailed
	}
	switch {
	case action == "status" && *all:
		return usageError(e, "auth", "--all is for logout")
	case action == "status":
		return authStatus(e, store, path, target, *asJSON)
	case *asJSON:
		return usageError(e, "auth", "--json is for status")
	case *all && target != "":
		return usageError(e, "auth", "give TARGET or --all, not both")
	case !*all && target == "":
		return usageError(e, "auth", "missing TARGET (or --all)")
	}
	return authLogout(ctx, e, store, target)
}

func fileStore() (*auth.FileStore, string, error) {
	path, err := auth.DefaultFileStorePath()
	if err != nil {
		return nil, "", fmt.Errorf("no configuration directory: %w", err)
	}
	return auth.NewFileStore(path), path, nil
}

// authEntry is a stored token as status shows it: never the token.
type authEntry struct {
	Resource    string     `json:"resource"`
	Issuer      string     `json:"issuer"`
	Expiry      *time.Time `json:"expiry,omitempty"`
	Expired     bool       `json:"expired"`
	Scope       string     `json:"scope,omitempty"`
	Refreshable bool       `json:"refreshable"`
}

func authStatus(e *env, store *auth.FileStore, path, target string, asJSON bool) int {
	list, err := store.Tokens(context.Background())
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit auth status: %s\n", oneLine(err.Error()))
		return exitFailed
	}
	now := time.Now()
	entries := []authEntry{}
	for _, st := range list {
		if target != "" && !resourceMatches(st.Key.Resource, target) {
			continue
		}
		en := authEntry{Resource: st.Key.Resource, Issuer: st.Key.Issuer, Scope: st.Token.Scope, Refreshable: st.Token.RefreshToken != ""}
		if !st.Token.Expiry.IsZero() {
			exp := st.Token.Expiry
			en.Expiry, en.Expired = &exp, !now.Before(exp)
		}
		entries = append(entries, en)
	}
	if asJSON {
		if err := writeJSON(e.Stdout, map[string]any{"file": path, "tokens": entries}); err != nil {
			fmt.Fprintf(e.Stderr, "mcpkit auth status: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if len(entries) == 0 {
		if target != "" {
			fmt.Fprintf(e.Stdout, "No stored authorization for %s (in %s).\n", target, path)
		} else {
			fmt.Fprintf(e.Stdout, "No stored authorization (in %s).\n", path)
		}
		return exitOK
	}
	t := &table{header: []string{"RESOURCE", "ISSUER", "EXPIRES", "SCOPES", "REFRESH"}, optional: []int{3}}
	for _, en := range entries {
		exp := "unknown"
		if en.Expiry != nil {
			exp = en.Expiry.Local().Format("2006-01-02 15:04:05")
			if en.Expired {
				exp += " (expired)"
			}
		}
		refresh := "no"
		if en.Refreshable {
			refresh = "yes"
		}
		t.add(en.Resource, en.Issuer, exp, en.Scope, refresh)
	}
	if err := t.write(e.Stdout, e.StdoutTTY); err != nil {
		return exitFailed
	}
	fmt.Fprintf(e.Stdout, "\nToken file: %s\n", path)
	return exitOK
}

func authLogout(ctx context.Context, e *env, store *auth.FileStore, target string) int {
	match := func(k auth.Key) bool { return target == "" || resourceMatches(k.Resource, target) }
	deleted, err := store.DeleteTokens(ctx, match)
	if err == nil && target == "" {
		_, err = store.DeleteClients(ctx, func(string) bool { return true })
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpkit auth logout: %s\n", oneLine(err.Error()))
		return exitFailed
	}
	for _, k := range deleted {
		fmt.Fprintf(e.Stdout, "Forgot the tokens of %s (issuer %s).\n", k.Resource, k.Issuer)
	}
	switch {
	case target == "":
		fmt.Fprintln(e.Stdout, "Forgot every token and client registration.")
	case len(deleted) == 0:
		fmt.Fprintf(e.Stdout, "No stored authorization for %s.\n", target)
	}
	return exitOK
}

// resourceMatches reports whether the stored resource is target's: the
// same URL (scheme and host case-insensitive, default port, trailing slash
// and query aside), or a URL whose path target's path extends (a resource
// identifier may name the server's origin only).
func resourceMatches(resource, target string) bool {
	r, t := canonicalURL(resource), canonicalURL(target)
	if r == "" || t == "" {
		return resource == target
	}
	return t == r || strings.HasPrefix(t, r+"/")
}

func canonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + strings.TrimRight(u.Path, "/")
}
