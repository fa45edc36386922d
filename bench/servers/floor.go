package servers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// floorRequest is what the floor reads of a request.
type floorRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string    `json:"name"`
		Arguments EchoInput `json:"arguments"`
	} `json:"params"`
}

// floorInitialize is the floor's fixed answer to initialize.
const floorInitialize = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-floor","version":"1.0.0"}}`

// floorAnswer appends the response to req to dst; ok is false for a
// notification, which has none.
func floorAnswer(dst []byte, req *floorRequest) ([]byte, bool) {
	if req.ID == nil {
		return dst, false
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, req.ID...)
	switch req.Method {
	case "initialize":
		dst = append(dst, `,"result":`+floorInitialize+`}`...)
	case "tools/call":
		text, _ := json.Marshal(req.Params.Arguments.Text)
		dst = append(dst, `,"result":{"content":[{"type":"text","text":`...)
		dst = append(dst, text...)
		dst = append(dst, `}]}}`...)
	default:
		dst = append(dst, `,"result":{}}`...)
	}
	return dst, true
}

// Floor is the lower bound of the comparison: a bare handler that decodes
// the JSON-RPC request with encoding/json and writes the echo result. It
// validates nothing, keeps no session (initialize gets a fixed answer and
// a fixed session id) and never streams.
func Floor() Impl {
	return Impl{
		Name: "floor",
		HTTP: func() (http.Handler, func()) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req floorRequest
				if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				out, ok := floorAnswer(nil, &req)
				if !ok {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				if req.Method == "initialize" {
					w.Header().Set("Mcp-Session-Id", "floor")
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(out)
			})
			return h, func() {}
		},
		Stdio: func(ctx context.Context, in io.Reader, out io.Writer) error {
			br := bufio.NewReaderSize(in, 64<<10)
			bw := bufio.NewWriterSize(out, 64<<10)
			var buf []byte
			for ctx.Err() == nil {
				line, err := br.ReadSlice('\n')
				if len(line) > 1 {
					var req floorRequest
					if json.Unmarshal(line, &req) == nil {
						var ok bool
						if buf, ok = floorAnswer(buf[:0], &req); ok {
							bw.Write(append(buf, '\n'))
						}
					}
				}
				if br.Buffered() == 0 || err != nil {
					if ferr := bw.Flush(); ferr != nil {
						return ferr
					}
				}
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
			}
			return ctx.Err()
		},
	}
}
