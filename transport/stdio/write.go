package stdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// respBufs recycles the buffers responses are encoded into; buffers that
// grew past maxPooledResponse are left to the collector.
var respBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledResponse = 64 << 10

// write sends one message as a line and flushes it, unless another write
// is already queued behind it: that one flushes both, so only the last of a
// burst of concurrent responses pays for the system call.
func (c *conn) write(msg []byte) error {
	c.writers.Add(1)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	last := c.writers.Add(-1) == 0
	if c.werr != nil {
		return c.werr
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		// encoding/json never emits raw newlines, but a handler may hand
		// over indented JSON. Between tokens a newline is white space that
		// Compact drops; inside a string (invalid JSON) escape it.
		var buf bytes.Buffer
		if json.Compact(&buf, msg) == nil {
			msg = buf.Bytes()
		} else {
			msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(`\n`))
		}
	}
	if _, err := c.w.Write(msg); err != nil {
		c.werr = err
		return err
	}
	if err := c.w.WriteByte('\n'); err != nil {
		c.werr = err
		return err
	}
	if !last {
		return nil
	}
	if err := c.w.Flush(); err != nil {
		c.werr = fmt.Errorf("stdio: writing: %w", err)
		return c.werr
	}
	return nil
}

func (c *conn) flush() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr == nil {
		c.werr = c.w.Flush()
	}
}

func (c *conn) writeErr() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.werr
}
