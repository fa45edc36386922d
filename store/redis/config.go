package redis

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Share sets the pieces of o that replicas share to those kept in s: the
// change feed, the single-use states, the legacy sessions and the bus
// between replicas. o.StateKey must be the same on every replica too
// (ReadStateKey).
func (s *Store) Share(o *server.Options) {
	o.Feed = s.Feed()
	o.OnceStore = s.OnceStore()
	o.Legacy.Store = s.Sessions()
	o.Legacy.Bus = s.Bus()
}

// ShareStreams sets the event store of o to the one kept in s, so that a
// legacy SSE stream resumes on any replica.
func (s *Store) ShareStreams(o *streamable.Options) { o.Events = s.Events() }

// StateKeyEnv names the environment variable that may hold the state
// keys instead of a file, as hexadecimal, separated by spaces or commas.
const StateKeyEnv = "MCPKIT_STATE_KEY"

// ReadStateKeys reads the keys that seal requestState, which replicas must
// share (server.Options.StateKey and PreviousStateKeys): from the file at
// path — one key per line, 64 hexadecimal digits each, the first the
// current key, the others previous ones that still open state sealed
// before a rotation — or, when path is "", from $MCPKIT_STATE_KEY; nil
// when neither is set. A file that others may read is refused.
//
// To rotate: put the new key first and the old one second on every
// replica, restart them, and drop the old line once the state TTL (10
// minutes by default) has passed.
func ReadStateKeys(path string) (key []byte, previous [][]byte, err error) {
	var text string
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, nil, fmt.Errorf("state key file %s may be read by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
		}
		if fi.Size() > 4096 {
			return nil, nil, fmt.Errorf("state key file %s is too large for a few keys", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		text = string(b)
	} else if text = os.Getenv(StateKeyEnv); text == "" {
		return nil, nil, nil
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	if len(fields) == 0 || len(fields) > 1+server.MaxPreviousStateKeys {
		return nil, nil, fmt.Errorf("want 1 to %d state keys, got %d", 1+server.MaxPreviousStateKeys, len(fields))
	}
	for i, f := range fields {
		k, err := hex.DecodeString(f)
		if err != nil || len(k) != 32 {
			return nil, nil, errors.New("each state key must be 32 bytes: 64 hexadecimal digits")
		}
		if i == 0 {
			key = k
		} else {
			previous = append(previous, k)
		}
	}
	return key, previous, nil
}
