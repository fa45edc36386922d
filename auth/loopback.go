package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// RedirectListener is an Authorizer that receives the redirect itself, at
// a URL it only knows once it listens (a loopback port it picked, for
// instance). For each authorization the Transport calls Listen before it
// registers the client (when it registers one) and builds the
// authorization URL: with the redirect URI a dynamic registration of its
// own registered (ClientInfo.RedirectURI), else, or when that one cannot
// be listened on, with Options.RedirectURL. It registers the returned
// PendingAuthorization's RedirectURL when it registers, sends it as
// redirect_uri in the authorization and token requests, calls its
// Authorize once and then Close.
type RedirectListener interface {
	Authorizer
	Listen(ctx context.Context, redirectURL string) (PendingAuthorization, error)
}

// PendingAuthorization is one authorization of a RedirectListener, ready
// to receive the redirect at RedirectURL.
type PendingAuthorization interface {
	Authorizer
	RedirectURL() string
	// Close stops listening; it may be called more than once.
	Close() error
}

// LoopbackAuthorizer is the interactive step for a command on the user's
// machine (RFC 8252, loopback interface redirection): it listens on a
// loopback port it picks, prints the authorization URL, opens it in the
// user's browser, and receives the redirect when the user is done.
//
// The browser is $BROWSER when set: a command line, split on blanks with
// quotes and backslashes as in a shell, where %s is replaced by the URL
// (the URL is appended when there is no %s). Otherwise it is the
// platform's opener: open on macOS, the URL protocol handler on Windows,
// and xdg-open elsewhere, there only when DISPLAY or WAYLAND_DISPLAY says
// a graphical session is there. The opener is started without a shell and
// reaped; it is never killed.
//
// Used through a Transport, the redirect URL is Options.RedirectURL (which
// must be a loopback http URL; http://127.0.0.1/callback by default) with
// the port the listener got when that URL names none. RFC 8252 Section 7.3
// asks authorization servers to allow any port on loopback redirect URIs,
// but many compare them exactly: a client the Transport registers
// dynamically is registered with the URL and its port, and later
// authorizations listen on that port again; when it is taken, the
// Transport registers anew with another. A pre-registered client
// (Options.ClientID) uses Options.RedirectURL, so register it with a
// fixed port at servers that compare exactly.
type LoopbackAuthorizer struct {
	// Out receives the authorization URL and what to do with it; nil means
	// os.Stderr.
	Out io.Writer
	// NoBrowser only prints the URL.
	NoBrowser bool
	// Getenv reads BROWSER, DISPLAY and WAYLAND_DISPLAY; nil means
	// os.Getenv.
	Getenv func(string) string
}

var _ RedirectListener = (*LoopbackAuthorizer)(nil)

// Authorize implements Authorizer for use without a Transport: it listens
// at the redirect_uri of authURL, which must be a loopback http URL with a
// port.
func (l *LoopbackAuthorizer) Authorize(ctx context.Context, authURL string) (string, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return "", errors.New("auth: invalid authorization URL")
	}
	ru, err := url.Parse(au.Query().Get("redirect_uri"))
	if err != nil || ru.Port() == "" {
		return "", errors.New("auth: LoopbackAuthorizer needs a loopback redirect_uri with a port")
	}
	p, err := l.Listen(ctx, ru.String())
	if err != nil {
		return "", err
	}
	defer p.Close()
	return p.Authorize(ctx, authURL)
}

// Listen implements RedirectListener: it listens at redirectURL, on the
// port it names or else on one the system picks.
func (l *LoopbackAuthorizer) Listen(ctx context.Context, redirectURL string) (PendingAuthorization, error) {
	if redirectURL == "" {
		redirectURL = "http://127.0.0.1/callback"
	}
	ru, err := url.Parse(redirectURL)
	if err != nil || ru.Scheme != "http" || ru.RawQuery != "" || ru.Fragment != "" {
		return nil, errors.New("auth: the redirect URL of a LoopbackAuthorizer must be an http URL without query")
	}
	host := ru.Hostname()
	listenHost := host
	if strings.EqualFold(host, "localhost") {
		listenHost = "127.0.0.1"
	} else if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("auth: the redirect URL of a LoopbackAuthorizer must be on a loopback address, not %q", host)
	}
	port := ru.Port()
	if port == "" {
		port = "0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(listenHost, port))
	if err != nil {
		return nil, fmt.Errorf("auth: listening for the redirect: %w", err)
	}
	got := ln.Addr().(*net.TCPAddr).Port
	p := &loopbackPending{
		l:        l,
		ln:       ln,
		path:     ru.Path,
		redirect: (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(got)), Path: ru.Path, RawPath: ru.RawPath}).String(),
		got:      make(chan string, 1),
	}
	if ru.Path == "" {
		p.path = "/"
		p.redirect += "/"
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// loopbackPending is one authorization of a LoopbackAuthorizer.
type loopbackPending struct {
	l        *LoopbackAuthorizer
	ln       net.Listener
	srv      *http.Server
	path     string
	redirect string
	got      chan string // the redirect URL with the response's query

	mu     sync.Mutex
	state  string // the state of the authorization request; "" until Authorize
	done   bool
	opener chan struct{} // closed when the opener has been reaped; nil if none
	closed bool
}

func (p *loopbackPending) RedirectURL() string { return p.redirect }

func (p *loopbackPending) getenv(k string) string {
	if p.l.Getenv != nil {
		return p.l.Getenv(k)
	}
	return os.Getenv(k)
}

func (p *loopbackPending) out() io.Writer {
	if p.l.Out != nil {
		return p.l.Out
	}
	return os.Stderr
}

// Authorize prints authURL, opens the browser and waits for the redirect
// that carries the request's state (bounded by ctx).
func (p *loopbackPending) Authorize(ctx context.Context, authURL string) (string, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return "", errors.New("auth: invalid authorization URL")
	}
	p.mu.Lock()
	p.state = au.Query().Get("state")
	p.mu.Unlock()
	w := p.out()
	fmt.Fprintf(w, "To authorize, open this URL in a browser:\n\n    %s\n\n", authURL)
	if !p.l.NoBrowser {
		if argv := browserCommand(authURL, p.getenv, runtime.GOOS); argv != nil {
			if err := p.startOpener(argv); err != nil {
				fmt.Fprintf(w, "Could not start the browser (%s): %v\n", argv[0], stripURLArg(err, authURL))
			}
		}
	}
	until := ""
	if dl, ok := ctx.Deadline(); ok {
		until = fmt.Sprintf(" (giving up in %s)", time.Until(dl).Round(time.Second))
	}
	fmt.Fprintf(w, "Waiting for the authorization server to redirect to %s%s ...\n", p.redirect, until)
	select {
	case r := <-p.got:
		return r, nil
	case <-ctx.Done():
		return "", fmt.Errorf("auth: waiting for the authorization redirect: %w", ctx.Err())
	}
}

// startOpener starts argv and reaps it in the background.
func (p *loopbackPending) startOpener(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	// The opener's own output is not ours to show (browsers are chatty).
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.opener = done
	p.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return nil
}

// stripURLArg removes url from an exec error's text (it names the command
// line only through argv[0], but be sure).
func stripURLArg(err error, u string) string {
	return strings.ReplaceAll(err.Error(), u, "<url>")
}

// serve receives the redirect: the first request at the path with the
// expected state ends the wait; anything else is refused.
func (p *loopbackPending) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method != http.MethodGet || r.URL.Path != p.path {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	p.mu.Lock()
	ok := !p.done && p.state != "" && q.Get("state") == p.state
	if ok {
		p.done = true
	}
	p.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, page("Unexpected request", "This is not the authorization response mcpkit is waiting for."))
		return
	}
	p.got <- p.redirect + "?" + r.URL.RawQuery
	if q.Get("error") != "" {
		_, _ = io.WriteString(w, page("Authorization failed", "The authorization server refused the request. You can close this tab and return to the terminal."))
		return
	}
	_, _ = io.WriteString(w, page("Authorization complete", "You can close this tab and return to the terminal."))
}

// page is the small HTML page shown to the browser; it never echoes what
// the request carried.
func page(title, text string) string {
	return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + title + "</title></head>" +
		"<body style=\"font-family:sans-serif;margin:3em\"><h1>" + title + "</h1><p>" + text + "</p></body></html>\n"
}

// Close stops listening and waits a little for the opener to end, without
// killing it (a browser started by $BROWSER may well outlive the run).
func (p *loopbackPending) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	opener := p.opener
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	if opener != nil {
		select {
		case <-opener:
		case <-ctx.Done():
		}
	}
	return nil
}

// browserCommand returns the command line that opens u: $BROWSER's, else
// the platform's opener; nil when there is none to use.
func browserCommand(u string, getenv func(string) string, goos string) []string {
	if b := strings.TrimSpace(getenv("BROWSER")); b != "" {
		argv := splitCommandLine(b)
		if len(argv) == 0 {
			return nil
		}
		substituted := false
		for i := 1; i < len(argv); i++ {
			if strings.Contains(argv[i], "%s") {
				argv[i] = strings.ReplaceAll(argv[i], "%s", u)
				substituted = true
			}
		}
		if !substituted {
			argv = append(argv, u)
		}
		return argv
	}
	switch goos {
	case "darwin":
		return []string{"open", u}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler", u}
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return nil
	}
	return []string{"xdg-open", u}
}

// splitCommandLine splits s into words as a POSIX shell would, without
// expansions: blanks separate words, single quotes keep everything, double
// quotes keep everything but backslash escapes of " \ $ `, and a backslash
// outside quotes keeps the next character.
func splitCommandLine(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
