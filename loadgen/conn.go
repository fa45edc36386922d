package loadgen

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// connTransport is one worker's HTTP/1.1 keep-alive connection: the
// worker writes each request on it and reads the response back itself
// (net/http's Request.Write and ReadResponse), with none of
// http.Transport's per-connection goroutines between them. A worker has
// one request in flight at a time, so this is all the pooling it needs,
// and the load generator's own cost per request stays small beside the
// server's.
type connTransport struct {
	addr string
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

// RoundTrip sends req on the connection, dialing it first if needed. The
// response's body must be read or closed before the next request.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if t.conn == nil {
		d := net.Dialer{Timeout: 10 * time.Second}
		c, err := d.DialContext(ctx, "tcp", t.addr)
		if err != nil {
			return nil, err
		}
		t.conn = c
		t.br = bufio.NewReaderSize(c, 32<<10)
		t.bw = bufio.NewWriterSize(c, 4<<10)
	}
	c := t.conn
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	resp, err := t.exchange(req)
	if err != nil {
		stop()
		t.drop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	resp.Body = &connBody{ReadCloser: resp.Body, t: t, stop: stop, close: resp.Close}
	return resp, nil
}

func (t *connTransport) exchange(req *http.Request) (*http.Response, error) {
	if err := req.Write(t.bw); err != nil {
		return nil, err
	}
	if err := t.bw.Flush(); err != nil {
		return nil, err
	}
	return http.ReadResponse(t.br, req)
}

// drop closes the connection; the next request dials a new one.
func (t *connTransport) drop() {
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
}

// connBody is a response body on a connTransport: closing it before its
// end, or a response that asked for it, closes the connection.
type connBody struct {
	io.ReadCloser
	t     *connTransport
	stop  func() bool
	close bool
	eof   bool
}

func (b *connBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *connBody) Close() error {
	err := b.ReadCloser.Close()
	if !b.stop() || !b.eof || b.close || err != nil {
		b.t.drop() // cancelled, cut short or told to close
	}
	return err
}
