package sqlserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/server"
)

// A query's next_cursor is sealed by the server (server.Request.Seal:
// AES-GCM under the server's state key, bound to the principal, expiring
// with requestState): the client can neither read it nor make one up. It
// names the statement it continues (a digest of its SQL and parameters)
// and how many of its rows were returned.
const cursorPurpose = "mcpkit/sqlserver query cursor"

type cursorState struct {
	Digest string `json:"d"`
	Offset int    `json:"o"`
}

// queryDigest identifies a statement and its parameters.
func queryDigest(sql string, params []json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(sql))
	for _, p := range params {
		h.Write([]byte{0})
		h.Write(p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func sealCursor(req *server.Request, digest string, offset int) (string, error) {
	b, err := json.Marshal(cursorState{Digest: digest, Offset: offset})
	if err != nil {
		return "", err
	}
	return req.Seal(cursorPurpose, b, 0)
}

// openCursor returns the offset a cursor continues from, refusing one
// that was not issued for this statement.
func openCursor(req *server.Request, cursor, digest string) (int, error) {
	b, err := req.Unseal(cursorPurpose, cursor)
	if errors.Is(err, server.ErrTokenExpired) {
		return 0, errors.New("the cursor has expired; run the query again without it")
	}
	var c cursorState
	if err != nil || json.Unmarshal(b, &c) != nil || c.Offset < 0 {
		return 0, errors.New("invalid cursor: pass the next_cursor of an earlier result unchanged")
	}
	if c.Digest != digest {
		return 0, errors.New("the cursor belongs to another statement: pass it with the same sql and params that returned it")
	}
	return c.Offset, nil
}
