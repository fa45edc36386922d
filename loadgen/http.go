package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// httpDriver loads a Streamable HTTP endpoint: each worker posts one
// request at a time on a keep-alive connection: one of the client's pool,
// or its own (connTransport, Options.WorkerConns).
type httpDriver struct {
	t      Target
	o      *Options
	v      *verifier
	client *http.Client
	own    *http.Transport // the transport of a client made here, or nil
	ids    atomic.Int64

	modern bool
	// headers holds each worker's request headers (with its legacy
	// session); they are only read once built.
	headers []http.Header
}

func newHTTPDriver(t Target, o *Options, v *verifier) *httpDriver {
	d := &httpDriver{t: t, o: o, v: v, client: t.HTTPClient}
	if d.client == nil {
		d.own = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * o.Concurrency,
			MaxIdleConnsPerHost: 2 * o.Concurrency,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}
		d.client = &http.Client{Transport: d.own}
	}
	return d
}

// baseHeader returns the headers of every request of the era.
func (d *httpDriver) baseHeader(modern bool, version, session string) http.Header {
	h := http.Header{}
	for k, vs := range d.t.Header {
		h[k] = append([]string(nil), vs...)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set(streamable.HeaderProtocolVersion, version)
	}
	if modern {
		h.Set(streamable.HeaderMethod, protocol.MethodToolsCall)
		h.Set(streamable.HeaderName, transport.EncodeHeaderValue(d.v.tool))
	}
	if session != "" {
		h.Set(streamable.HeaderSessionID, session)
	}
	return h
}

func (d *httpDriver) setup(ctx context.Context, era string) (string, error) {
	if era != EraLegacy {
		h := d.baseHeader(true, protocol.Version2026_07_28, "")
		err := d.probe(ctx, h, true)
		if err == nil {
			d.modern = true
			d.headers = make([]http.Header, d.o.Concurrency)
			for i := range d.headers {
				d.headers[i] = h
			}
			return EraModern, nil
		}
		if era == EraModern || ctx.Err() != nil {
			return "", fmt.Errorf("loadgen: modern tools/call: %w", err)
		}
	}
	for range d.o.Concurrency {
		h, err := d.initialize(ctx)
		if err != nil {
			return "", err
		}
		d.headers = append(d.headers, h)
	}
	if err := d.probe(ctx, d.headers[0], false); err != nil {
		return "", fmt.Errorf("loadgen: legacy tools/call: %w", err)
	}
	return EraLegacy, nil
}

// probe makes one call and verifies it.
func (d *httpDriver) probe(ctx context.Context, h http.Header, modern bool) error {
	id := d.ids.Add(1)
	var buf bytes.Buffer
	resp, _, err := d.post(ctx, nil, d.v.appendRequest(nil, id, modern), h, id, &buf)
	if err != nil {
		return err
	}
	return d.v.check(resp, id)
}

// initialize opens a legacy session and returns the headers of its
// requests.
func (d *httpDriver) initialize(ctx context.Context) (http.Header, error) {
	id := d.ids.Add(1)
	var buf bytes.Buffer
	resp, session, err := d.post(ctx, nil, initializeRequest(id), d.baseHeader(false, "", ""), id, &buf)
	if err != nil {
		return nil, fmt.Errorf("loadgen: initialize: %w", err)
	}
	version, err := checkInitialize(resp, id)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	h := d.baseHeader(false, version, session)
	if _, _, err := d.post(ctx, nil, initializedNotification, h, 0, &buf); err != nil {
		return nil, fmt.Errorf("loadgen: notifications/initialized: %w", err)
	}
	return h, nil
}

func (d *httpDriver) run(ctx context.Context, lim *limiter, st *stats) error {
	var wg sync.WaitGroup
	for w := range d.o.Concurrency {
		h := d.headers[w]
		wg.Go(func() {
			var own stats
			var buf bytes.Buffer
			var rt http.RoundTripper
			if ct := d.workerTransport(); ct != nil {
				defer ct.drop()
				rt = ct
			}
			for lim.take(ctx) {
				id := d.ids.Add(1)
				body := d.v.appendRequest(make([]byte, 0, len(d.v.modernTail)+24), id, d.modern)
				start := time.Now()
				resp, _, err := d.post(ctx, rt, body, h, id, &buf)
				if err == nil {
					err = d.v.check(resp, id)
				} else if ctx.Err() != nil {
					break
				}
				own.add(time.Since(start), err)
			}
			st.merge(&own)
		})
	}
	wg.Wait()
	return ctx.Err()
}

// workerTransport returns a worker's own connection to the endpoint, or
// nil when the worker shares the client's pool (Options.WorkerConns
// unset, a client given in the Target, an https endpoint).
func (d *httpDriver) workerTransport() *connTransport {
	if !d.o.WorkerConns || d.own == nil {
		return nil
	}
	u, err := url.Parse(d.t.URL)
	if err != nil || u.Scheme != "http" {
		return nil
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	return &connTransport{addr: host}
}

// post sends body through rt (nil: the driver's client) and returns the
// JSON-RPC response to id (from a JSON body or an SSE stream) and the
// response's session id. For a notification (id 0) it wants 202 Accepted
// and returns no message.
func (d *httpDriver) post(ctx context.Context, rt http.RoundTripper, body []byte, h http.Header, id int64, buf *bytes.Buffer) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header = h
	var resp *http.Response
	if rt != nil {
		resp, err = rt.RoundTrip(req)
	} else {
		resp, err = d.client.Do(req)
	}
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	if err != nil {
		return nil, "", err
	}
	session := resp.Header.Get(streamable.HeaderSessionID)
	if id == 0 {
		if resp.StatusCode/100 != 2 {
			return nil, "", fmt.Errorf("HTTP %s", resp.Status)
		}
		return nil, session, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %s: %.200s", resp.Status, buf.Bytes())
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg, err := sseResponse(buf.Bytes(), id)
		return msg, session, err
	}
	return buf.Bytes(), session, nil
}

// sseResponse finds the response to id among the events of an SSE body.
func sseResponse(body []byte, id int64) ([]byte, error) {
	var data []byte
	var last []byte
	event := func() []byte {
		msg := data
		data = nil
		m, err := jsonrpc.Decode(msg)
		if len(msg) == 0 || (err == nil && m.Method != "") {
			return nil // a notification or a request of the server
		}
		last = msg
		if m != nil && string(m.ID.Raw()) == fmt.Sprint(id) {
			return msg
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if msg := event(); msg != nil {
				return msg, nil
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data != nil {
				data = append(append(data, '\n'), v...)
			} else {
				data = append([]byte(nil), v...)
			}
		}
	}
	if msg := event(); msg != nil {
		return msg, nil
	}
	if last != nil {
		return last, nil // check reports the wrong id
	}
	return nil, errors.New("SSE stream ended without a response")
}

func (d *httpDriver) close() {
	if !d.modern {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, h := range d.headers {
			if h.Get(streamable.HeaderSessionID) == "" {
				continue
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, d.t.URL, nil)
			if err != nil {
				break
			}
			req.Header = h
			if resp, err := d.client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	if d.own != nil {
		d.own.CloseIdleConnections()
	}
}
